// Command vcsim-test serves a vSphere inventory with govmomi's simulator (the engine of
// VMware's vcsim) over HTTPS, for the tests of pvrdma-doctor's vCenter client.
//
// Usage: vcsim-test -user U -password P -ca-out FILE [-self-signed] (SPEC.json | -scale-hosts N -scale-vms M)
//
// It builds the inventory through the vSphere API, as an admin would (CreateFolder, CreateDatacenter,
// CreateCluster, AddHost, AddStandaloneHost, CreateVM, PowerOn, EnterMaintenanceMode),
// serves it on 127.0.0.1 with a certificate signed by a CA it generates (written to
// -ca-out, as vCenter's VMCA root is downloaded; with -self-signed, a certificate that
// signs itself, as an appliance's own, written there instead), prints one JSON line
// {"url": ..., "thumbprint": ..., "ca": ...} and then answers commands on stdin, one line
// each: `sessions`, `move VM HOST`, `maintenance HOST on|off`,
// `state HOST connected|disconnected|notResponding`, `expire-sessions`,
// `new-certificate` (renewed by the same CA; answers its thumbprint), and two that
// make the next RetrievePropertiesEx misbehave as a loaded vCenter can: `fail-next`
// (a SystemError fault) and `delay-next SECONDS`. EOF ends it.
//
// Two additions to the simulator. The first is paging. Its property collector (govmomi 0.24) ignores
// RetrievePropertiesEx's maxObjects and has no ContinueRetrievePropertiesEx, which
// vCenter implements (vSphere Web Services API reference, PropertyCollector). The
// pagingCollector below wraps the simulator's own collector, the extension point the
// simulator provides for custom types, and cuts its complete answer into pages with a
// token, as vCenter does and as later govmomi releases do. It also refuses the collector
// without a session (NotAuthenticated), as vCenter does and the simulator does not.
//
// The second is what the tools that change hosts call (Ansible's community.vmware
// modules, PowerCLI, govc): each host gets a firewall system and an advanced-option
// manager of its own (govmomi 0.24 shares one ruleset list and one option list between
// all hosts), whose state is the host's config.firewall and config.option, as on a real
// host; the firewall system answers UpdateRuleset, and the option manager describes
// Net.PVRDMAVmknic in supportedOption (see ownHostState).
package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// Spec is the inventory to serve (the JSON file given as argument).
type Spec struct {
	Datacenters []DatacenterSpec `json:"datacenters"`
	Vms         []VMSpec         `json:"vms"`
}

type DatacenterSpec struct {
	Name string `json:"name"`
	// The folders it is in under the root folder, `/`-separated (empty: the root folder).
	Folder     string        `json:"folder"`
	Clusters   []ClusterSpec `json:"clusters"`
	Standalone []HostSpec    `json:"standalone"`
}

type ClusterSpec struct {
	Name string `json:"name"`
	// The folders it is in under its datacenter's host folder, `/`-separated.
	Folder string     `json:"folder"`
	Hosts  []HostSpec `json:"hosts"`
}

type VMSpec struct {
	Name  string `json:"name"`
	Host  string `json:"host"`
	Power string `json:"power"` // poweredOn (default), poweredOff, suspended
	// The PVRDMA configuration, all optional: the hardware version (`vmx-14`), the memory
	// reservation in MB, memoryReservationLockedToMax, and one VirtualVmxnet3Vrdma adapter
	// per entry of vrdma, each its deviceProtocol (`rocev1`, `rocev2`).
	HwVersion   string   `json:"hw_version"`
	ReservedMB  int64    `json:"reserved_mb"`
	LockedToMax bool     `json:"locked_to_max"`
	Vrdma       []string `json:"vrdma"`
	// The uuid of the vDS the adapters' ports are on (empty: no port backing).
	Dvs string `json:"dvs"`
	// Each adapter's MAC address, in order (missing or empty: one generated).
	Macs []string `json:"macs"`
}

type HostSpec struct {
	Name        string      `json:"name"`
	Maintenance bool        `json:"maintenance"`
	State       string      `json:"state"` // connected (default), disconnected, notResponding
	Pvrdma      *PvrdmaSpec `json:"pvrdma"`
}

// PvrdmaSpec is a host's PVRDMA configuration as vCenter reports it in HostConfigInfo:
// product version, RDMA devices, the `pvrdma` firewall ruleset, Net.PVRDMAVmknic, the
// VMkernel interfaces and the vDS the host is a member of.
type PvrdmaSpec struct {
	Version  string       `json:"version"`  // config.product.version, e.g. 7.0.3
	Build    string       `json:"build"`    // config.product.build
	Rdma     []RdmaSpec   `json:"rdma"`     // config.network.rdmaDevice
	Firewall bool         `json:"firewall"` // the pvrdma ruleset enabled
	Vmknic   string       `json:"vmknic"`   // Net.PVRDMAVmknic (empty: unset)
	Vmknics  []VmknicSpec `json:"vmknics"`  // config.network.vnic
	Dvs      []DvsSpec    `json:"dvs"`      // config.network.proxySwitch
	// Standard switches beside the dump's vSwitch0 (config.network.vswitch, .portgroup).
	Vswitches []VswitchSpec `json:"vswitches"`
}

type RdmaSpec struct {
	Device string `json:"device"` // vmrdma0
	Driver string `json:"driver"`
	Uplink string `json:"uplink"` // the paired vmnic
	State  string `json:"state"`  // active, down...
	Mtu    int32  `json:"mtu"`
	RoceV1 bool   `json:"roce_v1"`
	RoceV2 bool   `json:"roce_v2"`
}

type VmknicSpec struct {
	Device  string `json:"device"` // vmk1
	IP      string `json:"ip"`
	Netmask string `json:"netmask"`
	Mtu     int32  `json:"mtu"`
	Dvs     string `json:"dvs"` // the vDS's uuid it is a port of; empty: a standard portgroup
	// The standard portgroup it is on when not on a vDS (empty: the dump's Management Network).
	Portgroup string `json:"portgroup"`
}

// VswitchSpec is a standard switch as the host reports it: HostVirtualSwitch and the
// HostPortGroups on it.
type VswitchSpec struct {
	Name       string   `json:"name"`
	Mtu        int32    `json:"mtu"`
	Uplinks    []string `json:"uplinks"`
	Portgroups []string `json:"portgroups"`
}

type DvsSpec struct {
	Name    string   `json:"name"`
	Uuid    string   `json:"uuid"`
	Mtu     int32    `json:"mtu"`
	Uplinks []string `json:"uplinks"`
}

var (
	ctx   = context.Background()
	hosts = map[string]*object.HostSystem{}
	vms   = map[string]*object.VirtualMachine{}
)

func main() {
	user := flag.String("user", "", "the only user name the login accepts")
	password := flag.String("password", "", "its password")
	caOut := flag.String("ca-out", "", "where to write the CA certificate (PEM)")
	scaleHosts := flag.Int("scale-hosts", 0, "generate this many hosts (10 clusters) instead of reading a spec")
	scaleVms := flag.Int("scale-vms", 0, "with -scale-hosts: this many powered-on VMs, spread over the hosts")
	selfSigned := flag.Bool("self-signed", false, "serve a self-signed certificate for 127.0.0.1 alone (written to -ca-out), as an appliance makes its own")
	flag.Parse()
	if *user == "" || *password == "" || *caOut == "" {
		log.Fatal("-user, -password and -ca-out are required")
	}
	var spec Spec
	if *scaleHosts > 0 {
		spec = scaleSpec(*scaleHosts, *scaleVms)
	} else if flag.NArg() == 1 {
		data, err := os.ReadFile(flag.Arg(0))
		check(err)
		check(json.Unmarshal(data, &spec))
	} else {
		log.Fatal("give a spec file or -scale-hosts")
	}

	// An empty vCenter model: no generated datacenter, host or VM.
	model := simulator.VPX()
	model.Datacenter, model.Host, model.Cluster, model.ClusterHost = 0, 0, 0, 0
	model.Datastore, model.Machine, model.Portgroup, model.Autostart = 0, 0, 0, false
	check(model.Create())
	defer model.Remove()
	dsDir, err := os.MkdirTemp("", "vcsim-ds")
	check(err)
	defer os.RemoveAll(dsDir)

	// The in-process client runs as the simulator's internal session: no login counted.
	c, err := vim25.NewClient(ctx, model.Service)
	check(err)
	build(c, &spec, dsDir)

	pc := &pagingCollector{}
	pc.Self = model.ServiceContent.PropertyCollector
	simulator.Map.Put(pc)

	authority = newCA(*caOut)
	cert, thumbprint := authority.sign()
	if *selfSigned {
		cert, thumbprint = selfSignedCertificate(*caOut)
	}
	serving.cert = cert
	model.Service.Listen = &url.URL{Host: "127.0.0.1:0", User: url.UserPassword(*user, *password)}
	// Each handshake takes the certificate served now, so `new-certificate` can renew it
	// while the server runs (a ClientHello to an IP address carries no server name, so
	// GetCertificate would not be asked). No session is resumed: a client resuming one
	// would not see a renewed certificate, where vCenter's restarted services, their
	// ticket keys new, make it.
	model.Service.TLS = &tls.Config{
		Certificates: []tls.Certificate{cert},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			serving.Lock()
			defer serving.Unlock()
			return &tls.Config{
				Certificates:           []tls.Certificate{serving.cert},
				ClientAuth:             tls.RequestClientCert,
				SessionTicketsDisabled: true,
			}, nil
		},
	}
	server := model.Service.NewServer()
	defer server.Close()
	closeConnections = server.CloseClientConnections
	// Record each request's SOAPAction, the API release it asks answers for (no request
	// arrives before the URL is printed below).
	sdk := server.Config.Handler
	server.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			actions.Lock()
			actions.seen = append(actions.seen, r.Header.Get("SOAPAction"))
			actions.Unlock()
		}
		sdk.ServeHTTP(w, r)
	})
	u := *server.URL
	u.User = nil
	line, _ := json.Marshal(map[string]string{"url": u.String(), "thumbprint": thumbprint, "ca": *caOut})
	fmt.Println(string(line))

	commands(c, bufio.NewScanner(os.Stdin))
}

// scaleSpec: n hosts in 10 clusters of one datacenter, m powered-on VMs round-robin.
func scaleSpec(n, m int) Spec {
	dc := DatacenterSpec{Name: "Scale", Clusters: make([]ClusterSpec, 10)}
	for i := 0; i < n; i++ {
		cl := &dc.Clusters[i%10]
		cl.Name = fmt.Sprintf("C%d", i%10)
		cl.Hosts = append(cl.Hosts, HostSpec{Name: fmt.Sprintf("esx%04d", i)})
	}
	spec := Spec{Datacenters: []DatacenterSpec{dc}}
	for i := 0; i < m; i++ {
		spec.Vms = append(spec.Vms, VMSpec{Name: fmt.Sprintf("vm%05d", i), Host: fmt.Sprintf("esx%04d", i%n)})
	}
	return spec
}

func build(c *vim25.Client, spec *Spec, dsDir string) {
	root := object.NewRootFolder(c)
	datastore := map[string]string{} // host name -> datastore path of its datacenter
	add := func(task *object.Task, err error) *object.HostSystem {
		return object.NewHostSystem(c, done(task, err).(types.ManagedObjectReference))
	}
	made := map[string]*object.Folder{}
	for di, d := range spec.Datacenters {
		dc, err := subfolder(made, root, "", d.Folder).CreateDatacenter(ctx, d.Name)
		check(err)
		folders, err := dc.Folders(ctx)
		check(err)
		var added []*object.HostSystem
		for _, cs := range d.Clusters {
			in := subfolder(made, folders.HostFolder, dc.Reference().Value, cs.Folder)
			cl, err := in.CreateCluster(ctx, cs.Name, types.ClusterConfigSpecEx{})
			check(err)
			for _, h := range cs.Hosts {
				hosts[h.Name] = add(cl.AddHost(ctx, types.HostConnectSpec{HostName: h.Name}, true, nil, nil))
				added = append(added, hosts[h.Name])
			}
		}
		for _, h := range d.Standalone {
			hosts[h.Name] = add(folders.HostFolder.AddStandaloneHost(ctx, types.HostConnectSpec{HostName: h.Name}, true, nil, nil))
			added = append(added, hosts[h.Name])
		}
		if len(added) == 0 {
			continue
		}
		// A local datastore per datacenter for the VMs' files, mounted on its hosts (as
		// the simulator's own model does it).
		name := fmt.Sprintf("ds%d", di)
		dir := fmt.Sprintf("%s/%s", dsDir, name)
		check(os.Mkdir(dir, 0o700))
		for _, h := range added {
			dss, err := h.ConfigManager().DatastoreSystem(ctx)
			check(err)
			_, err = dss.CreateLocalDatastore(ctx, name, dir)
			check(err)
			datastore[h.Reference().Value] = name
		}
		for _, v := range spec.Vms {
			h, ok := hosts[v.Host]
			if !ok || datastore[h.Reference().Value] != name {
				continue
			}
			vms[v.Name] = createVM(c, folders, h, v.Name, name, v.Power)
		}
	}
	for _, v := range spec.Vms {
		if _, ok := vms[v.Name]; !ok {
			log.Fatalf("VM %q: no host %q", v.Name, v.Host)
		}
	}
	for _, d := range spec.Datacenters {
		all := d.Standalone
		for _, cs := range d.Clusters {
			all = append(all, cs.Hosts...)
		}
		for _, h := range all {
			if h.Pvrdma != nil {
				configureHost(hosts[h.Name], h.Pvrdma)
			}
		}
	}
	for _, h := range hosts {
		ownHostState(h)
	}
	for _, v := range spec.Vms {
		configureVM(vms[v.Name], &v)
	}
	// States last: a host in maintenance or disconnected takes no new VM.
	for _, d := range spec.Datacenters {
		all := d.Standalone
		for _, cs := range d.Clusters {
			all = append(all, cs.Hosts...)
		}
		for _, h := range all {
			if h.Maintenance {
				maintenance(hosts[h.Name], true)
			}
			if h.State != "" && h.State != "connected" {
				setState(hosts[h.Name], h.State)
			}
		}
	}
}

// subfolder returns the folder at path under base, creating what is missing, as an admin
// files datacenters by region or clusters by row; made remembers them by scope and path.
func subfolder(made map[string]*object.Folder, base *object.Folder, scope, path string) *object.Folder {
	cur, at := base, scope
	for _, name := range strings.Split(path, "/") {
		if name == "" {
			continue
		}
		at += "/" + name
		if f, ok := made[at]; ok {
			cur = f
			continue
		}
		f, err := cur.CreateFolder(ctx, name)
		check(err)
		made[at], cur = f, f
	}
	return cur
}

func createVM(c *vim25.Client, folders *object.DatacenterFolders, h *object.HostSystem, name, ds, power string) *object.VirtualMachine {
	pool, err := h.ResourcePool(ctx)
	check(err)
	config := types.VirtualMachineConfigSpec{
		Name:    name,
		GuestId: string(types.VirtualMachineGuestOsIdentifierOtherGuest),
		Files:   &types.VirtualMachineFileInfo{VmPathName: "[" + ds + "]"},
	}
	vm := object.NewVirtualMachine(c, done(folders.VmFolder.CreateVM(ctx, config, pool, h)).(types.ManagedObjectReference))
	switch power {
	case "", "poweredOn":
		done(vm.PowerOn(ctx))
	case "suspended":
		done(vm.PowerOn(ctx))
		done(vm.Suspend(ctx))
	case "poweredOff":
	default:
		log.Fatalf("VM %q: unknown power state %q", name, power)
	}
	return vm
}

// configureHost sets a host's PVRDMA configuration on the simulator's object, as an
// ESXi host reports it to vCenter (the simulator has no RDMA devices of its own and no
// API to add them: vCenter reads them from the host).
func configureHost(h *object.HostSystem, p *PvrdmaSpec) {
	obj := simulator.Map.Get(h.Reference()).(*simulator.HostSystem)
	simulator.Map.WithLock(obj, func() {
		cfg := obj.Config
		if p.Version != "" {
			cfg.Product.Version = p.Version
			cfg.Product.FullName = "VMware ESXi " + p.Version + " build-" + p.Build
		}
		if p.Build != "" {
			cfg.Product.Build = p.Build
		}
		// The API refers to a physical NIC by its key (HostRdmaDevicePnicBacking.pairedUplink,
		// HostProxySwitch.pnic), and lists each NIC with its key and device in pnic.
		for _, r := range p.Rdma {
			addPhysicalNic(h, cfg.Network, r.Uplink)
		}
		for _, d := range p.Dvs {
			for _, u := range d.Uplinks {
				addPhysicalNic(h, cfg.Network, u)
			}
		}
		for _, v := range p.Vswitches {
			for _, u := range v.Uplinks {
				addPhysicalNic(h, cfg.Network, u)
			}
			addStandardSwitch(cfg.Network, v)
		}
		cfg.Network.RdmaDevice = nil
		for i, r := range p.Rdma {
			var backing types.BaseHostRdmaDeviceBacking
			if r.Uplink != "" {
				backing = &types.HostRdmaDevicePnicBacking{PairedUplink: physicalNicKey(r.Uplink)}
			}
			cfg.Network.RdmaDevice = append(cfg.Network.RdmaDevice, types.HostRdmaDevice{
				Key:         fmt.Sprintf("key-vim.host.RdmaDevice-%s", r.Device),
				Device:      r.Device,
				Driver:      r.Driver,
				Description: fmt.Sprintf("RDMA device %d", i),
				Backing:     backing,
				ConnectionInfo: types.HostRdmaDeviceConnectionInfo{
					State: r.State, Mtu: r.Mtu, SpeedInMbps: 100000,
				},
				Capability: types.HostRdmaDeviceCapability{RoceV1Capable: r.RoceV1, RoceV2Capable: r.RoceV2},
			})
		}
		// The firewall information is per host: a copy of the simulator's default
		// (which has a pvrdma ruleset), with the ruleset switched as the spec says.
		fw := *cfg.Firewall
		fw.Ruleset = append([]types.HostFirewallRuleset(nil), fw.Ruleset...)
		for i := range fw.Ruleset {
			if fw.Ruleset[i].Key == "pvrdma" {
				fw.Ruleset[i].Enabled = p.Firewall
			}
		}
		cfg.Firewall = &fw
		var options []types.BaseOptionValue
		for _, o := range cfg.Option {
			if o.GetOptionValue().Key != "Net.PVRDMAVmknic" {
				options = append(options, o)
			}
		}
		cfg.Option = append(options, &types.OptionValue{Key: "Net.PVRDMAVmknic", Value: p.Vmknic})
		if len(p.Vmknics) > 0 {
			cfg.Network.Vnic = nil
			for _, v := range p.Vmknics {
				spec := types.HostVirtualNicSpec{
					Ip:  &types.HostIpConfig{IpAddress: v.IP, SubnetMask: v.Netmask},
					Mtu: v.Mtu,
				}
				portgroup := "Management Network"
				if v.Portgroup != "" {
					portgroup = v.Portgroup
				}
				spec.Portgroup = portgroup
				if v.Dvs != "" {
					spec.DistributedVirtualPort = &types.DistributedVirtualSwitchPortConnection{SwitchUuid: v.Dvs, PortKey: v.Device}
					portgroup = ""
					spec.Portgroup = ""
				}
				cfg.Network.Vnic = append(cfg.Network.Vnic, types.HostVirtualNic{
					Device: v.Device, Key: "key-vim.host.VirtualNic-" + v.Device, Portgroup: portgroup, Spec: spec,
				})
			}
		}
		cfg.Network.ProxySwitch = nil
		for _, d := range p.Dvs {
			var pnics []types.DistributedVirtualSwitchHostMemberPnicSpec
			var keys []string
			for _, u := range d.Uplinks {
				pnics = append(pnics, types.DistributedVirtualSwitchHostMemberPnicSpec{PnicDevice: u})
				keys = append(keys, physicalNicKey(u))
			}
			cfg.Network.ProxySwitch = append(cfg.Network.ProxySwitch, types.HostProxySwitch{
				DvsUuid: d.Uuid, DvsName: d.Name, Key: d.Uuid, NumPorts: 512, NumPortsAvailable: 500,
				Mtu: d.Mtu, Pnic: keys,
				Spec: types.HostProxySwitchSpec{Backing: &types.DistributedVirtualSwitchHostMemberPnicBacking{PnicSpec: pnics}},
			})
		}
		obj.Summary.Config.Product = &cfg.Product
	})
}

// physicalNicKey is the key the API refers to a physical NIC by.
func physicalNicKey(device string) string {
	return "key-vim.host.PhysicalNic-" + device
}

// addStandardSwitch adds a standard switch and its port groups as the dump has vSwitch0:
// the switch lists its port groups and NICs by key (HostVirtualSwitch.portgroup, .pnic),
// each port group its switch by key (HostPortGroup.vswitch) and by name in its spec.
func addStandardSwitch(net *types.HostNetworkInfo, v VswitchSpec) {
	key := "key-vim.host.VirtualSwitch-" + v.Name
	sw := types.HostVirtualSwitch{
		Name: v.Name, Key: key, NumPorts: 1536, NumPortsAvailable: 1530, Mtu: v.Mtu,
		Spec: types.HostVirtualSwitchSpec{
			NumPorts: 128,
			Bridge:   &types.HostVirtualSwitchBondBridge{NicDevice: v.Uplinks},
			Mtu:      v.Mtu,
		},
	}
	for _, u := range v.Uplinks {
		sw.Pnic = append(sw.Pnic, physicalNicKey(u))
	}
	for _, name := range v.Portgroups {
		pgKey := "key-vim.host.PortGroup-" + name
		sw.Portgroup = append(sw.Portgroup, pgKey)
		net.Portgroup = append(net.Portgroup, types.HostPortGroup{
			Key: pgKey, Vswitch: key,
			Spec: types.HostPortGroupSpec{Name: name, VswitchName: v.Name, Policy: types.HostNetworkPolicy{}},
		})
	}
	net.Vswitch = append(net.Vswitch, sw)
}

// addPhysicalNic lists a NIC the spec names in the host's pnic, as the simulator's own
// ESXi dump lists vmnic0 and vmnic1 (a Mellanox ConnectX port, 100 Gb/s), unless the
// host has it already.
func addPhysicalNic(h *object.HostSystem, net *types.HostNetworkInfo, device string) {
	if device == "" {
		return
	}
	key := physicalNicKey(device)
	for _, p := range net.Pnic {
		if p.Key == key {
			return
		}
	}
	sum := sha256.Sum256([]byte(h.Reference().Value + "/" + device))
	mac := fmt.Sprintf("b8:ce:f6:%02x:%02x:%02x", sum[0], sum[1], sum[2])
	link := types.PhysicalNicLinkInfo{SpeedMb: 100000, Duplex: true}
	net.Pnic = append(net.Pnic, types.PhysicalNic{
		Key:                    key,
		Device:                 device,
		Pci:                    fmt.Sprintf("0000:3b:00.%d", len(net.Pnic)),
		Driver:                 "nmlx5_core",
		LinkSpeed:              &link,
		ValidLinkSpecification: []types.PhysicalNicLinkInfo{link},
		Spec:                   types.PhysicalNicSpec{Ip: &types.HostIpConfig{}, LinkSpeed: &link},
		Mac:                    mac,
	})
}

// configureVM sets a VM's hardware version, memory reservation and PVRDMA adapters on
// the simulator's object (the values a VM's configuration holds after a reconfigure).
func configureVM(vm *object.VirtualMachine, v *VMSpec) {
	if v.HwVersion == "" && v.ReservedMB == 0 && !v.LockedToMax && len(v.Vrdma) == 0 && v.Dvs == "" && len(v.Macs) == 0 {
		return
	}
	obj := simulator.Map.Get(vm.Reference()).(*simulator.VirtualMachine)
	simulator.Map.WithLock(obj, func() {
		if v.HwVersion != "" {
			obj.Config.Version = v.HwVersion
		}
		reserved := v.ReservedMB
		if obj.Config.MemoryAllocation == nil {
			obj.Config.MemoryAllocation = &types.ResourceAllocationInfo{}
		}
		obj.Config.MemoryAllocation.Reservation = &reserved
		locked := v.LockedToMax
		obj.Config.MemoryReservationLockedToMax = &locked
		for i, protocol := range v.Vrdma {
			card := &types.VirtualVmxnet3Vrdma{DeviceProtocol: protocol}
			card.Key = int32(4100 + i)
			card.DeviceInfo = &types.Description{Label: fmt.Sprintf("Network adapter %d", i+2), Summary: "PVRDMA"}
			card.AddressType = string(types.VirtualEthernetCardMacTypeGenerated)
			card.MacAddress = fmt.Sprintf("00:50:56:aa:%02x:%02x", len(vms)%256, i)
			if i < len(v.Macs) && v.Macs[i] != "" {
				card.AddressType = string(types.VirtualEthernetCardMacTypeAssigned)
				card.MacAddress = v.Macs[i]
			}
			if v.Dvs != "" {
				card.Backing = &types.VirtualEthernetCardDistributedVirtualPortBackingInfo{
					Port: types.DistributedVirtualSwitchPortConnection{SwitchUuid: v.Dvs, PortgroupKey: "dvportgroup-pvrdma"},
				}
			}
			obj.Config.Hardware.Device = append(obj.Config.Hardware.Device, card)
		}
	})
}

// done returns a task's result. The simulator runs a task before answering the call that
// started it, so its outcome is read from the object rather than waited for (waiting
// costs a property-collector round per task: minutes for 10,000 VMs).
func done(task *object.Task, err error) types.AnyType {
	result, err := outcome(task, err)
	check(err)
	return result
}

func outcome(task *object.Task, err error) (types.AnyType, error) {
	if err != nil {
		return nil, err
	}
	t := simulator.Map.Get(task.Reference()).(*simulator.Task)
	if t.Info.State != types.TaskInfoStateSuccess {
		return nil, fmt.Errorf("task %s: %s %v", t.Info.DescriptionId, t.Info.State, t.Info.Error)
	}
	return t.Info.Result, nil
}

func maintenance(h *object.HostSystem, on bool) {
	if on {
		done(h.EnterMaintenanceMode(ctx, 0, false, nil))
	} else {
		done(h.ExitMaintenanceMode(ctx, 0))
	}
}

// setState: the simulator has no API to lose a host; vCenter sets this property itself
// when a host stops answering, so the harness sets it the same way, on the object.
func setState(h *object.HostSystem, state string) {
	switch state {
	case "connected", "disconnected", "notResponding":
	default:
		log.Fatalf("unknown connection state %q", state)
	}
	obj := simulator.Map.Get(h.Reference()).(*simulator.HostSystem)
	simulator.Map.WithLock(obj, func() {
		obj.Runtime.ConnectionState = types.HostSystemConnectionState(state)
		obj.Summary.Runtime.ConnectionState = types.HostSystemConnectionState(state)
	})
}

// harness is a session of this program's own, never in the SessionManager's list: it
// reads the list and terminates sessions without logging in.
var harness = simulator.Session{
	UserSession: types.UserSession{Key: "vcsim-test-harness"},
	Registry:    simulator.NewRegistry(),
}

func sessionKeys() []string {
	sm := harness.Get(simulator.Map.SessionManager().Reference()).(*simulator.SessionManager)
	var keys []string
	for _, s := range sm.SessionList {
		keys = append(keys, s.Key)
	}
	return keys
}

func commands(c *vim25.Client, in *bufio.Scanner) {
	for in.Scan() {
		f := strings.Fields(in.Text())
		reply := "ok"
		switch {
		case len(f) == 1 && f[0] == "sessions":
			reply = fmt.Sprint(len(sessionKeys()))
		case len(f) == 1 && f[0] == "new-certificate":
			// vCenter's certificate renewed (same CA, new key), as after a VMCA renewal,
			// which restarts its services: the connections open are closed.
			cert, thumbprint := authority.sign()
			serving.Lock()
			serving.cert = cert
			serving.Unlock()
			closeConnections()
			reply = thumbprint
		case len(f) == 1 && f[0] == "expire-sessions":
			if keys := sessionKeys(); len(keys) > 0 {
				res := simulator.Map.SessionManager().TerminateSession(
					&simulator.Context{Context: ctx, Session: &harness, Map: simulator.Map},
					&types.TerminateSession{SessionId: keys})
				if res.Fault() != nil {
					reply = "error: " + res.Fault().String
				}
			}
		case len(f) >= 3 && f[0] == "move":
			// VM names may hold spaces: the host is the last word.
			vm, host := vms[strings.Join(f[1:len(f)-1], " ")], hosts[f[len(f)-1]]
			if vm == nil || host == nil {
				reply = "error: no such VM or host"
				break
			}
			ref := host.Reference()
			spec := types.VirtualMachineRelocateSpec{Host: &ref}
			if _, err := outcome(vm.Relocate(ctx, spec, types.VirtualMachineMovePriorityDefaultPriority)); err != nil {
				reply = "error: " + err.Error()
			}
		case len(f) == 1 && f[0] == "actions":
			// The SOAPActions since the last asking, in order, then forgotten.
			actions.Lock()
			reply = strings.Join(actions.seen, ",")
			actions.seen = nil
			actions.Unlock()
		case len(f) == 1 && f[0] == "fail-next":
			inject.Lock()
			inject.fail = true
			inject.Unlock()
		case len(f) == 2 && f[0] == "delay-next":
			d, err := time.ParseDuration(f[1] + "s")
			if err != nil {
				reply = "error: " + err.Error()
				break
			}
			inject.Lock()
			inject.delay = d
			inject.Unlock()
		case len(f) == 3 && f[0] == "maintenance" && hosts[f[1]] != nil && (f[2] == "on" || f[2] == "off"):
			maintenance(hosts[f[1]], f[2] == "on")
		case len(f) == 3 && f[0] == "state" && hosts[f[1]] != nil:
			setState(hosts[f[1]], f[2])
		default:
			reply = "error: unknown command"
		}
		fmt.Println(reply)
	}
}

// pagingCollector adds vCenter's paging to the simulator's property collector: at most
// maxObjects objects per answer, the rest behind a token for ContinueRetrievePropertiesEx.
// Each session gets its own instance (the simulator makes one per session), so tokens
// are per session as on vCenter.
type pagingCollector struct {
	simulator.PropertyCollector
	mu    sync.Mutex
	pages map[string]pending
}

type pending struct {
	objects []types.ObjectContent
	max     int
}

// actions holds the SOAPAction of every request, in order.
var actions struct {
	sync.Mutex
	seen []string
}

// inject holds the misbehaviour ordered for the next RetrievePropertiesEx.
var inject struct {
	sync.Mutex
	fail  bool
	delay time.Duration
}

// notAuthenticated is vCenter's answer to a property-collector call without a session
// (never logged in, or the session expired): the simulator lets such calls through.
func notAuthenticated(c *simulator.Context, this types.ManagedObjectReference) *soap.Fault {
	if c.Session != nil {
		return nil
	}
	return simulator.Fault("", &types.NotAuthenticated{NoPermission: types.NoPermission{Object: this, PrivilegeId: "System.View"}})
}

func (pc *pagingCollector) RetrievePropertiesEx(c *simulator.Context, r *types.RetrievePropertiesEx) soap.HasFault {
	if fault := notAuthenticated(c, r.This); fault != nil {
		return &methods.RetrievePropertiesExBody{Fault_: fault}
	}
	inject.Lock()
	fail, delay := inject.fail, inject.delay
	inject.fail, inject.delay = false, 0
	inject.Unlock()
	time.Sleep(delay)
	if fail {
		return &methods.RetrievePropertiesExBody{Fault_: simulator.Fault("injected by the test", &types.SystemError{Reason: "injected"})}
	}
	res := pc.PropertyCollector.RetrievePropertiesEx(c, r)
	body, ok := res.(*methods.RetrievePropertiesExBody)
	if !ok || body.Res == nil || body.Res.Returnval == nil || r.Options.MaxObjects <= 0 {
		return res
	}
	body.Res.Returnval = pc.page(body.Res.Returnval.Objects, int(r.Options.MaxObjects))
	return body
}

func (pc *pagingCollector) ContinueRetrievePropertiesEx(c *simulator.Context, r *types.ContinueRetrievePropertiesEx) soap.HasFault {
	body := &methods.ContinueRetrievePropertiesExBody{}
	if fault := notAuthenticated(c, r.This); fault != nil {
		body.Fault_ = fault
		return body
	}
	pc.mu.Lock()
	p, ok := pc.pages[r.Token]
	delete(pc.pages, r.Token)
	pc.mu.Unlock()
	if !ok {
		body.Fault_ = simulator.Fault("unknown token", &types.InvalidArgument{InvalidProperty: "token"})
		return body
	}
	body.Res = &types.ContinueRetrievePropertiesExResponse{Returnval: *pc.page(p.objects, p.max)}
	return body
}

func (pc *pagingCollector) page(objects []types.ObjectContent, max int) *types.RetrieveResult {
	result := &types.RetrieveResult{Objects: objects}
	if len(objects) > max {
		result.Objects = objects[:max]
		token := uuid.New().String()
		pc.mu.Lock()
		if pc.pages == nil {
			pc.pages = map[string]pending{}
		}
		pc.pages[token] = pending{objects: objects[max:], max: max}
		pc.mu.Unlock()
		result.Token = token
	}
	return result
}

// serving holds the certificate the server presents now.
var serving struct {
	sync.Mutex
	cert tls.Certificate
}

// authority signs the server's certificates; closeConnections ends the connections open.
var (
	authority        *certificateAuthority
	closeConnections func()
)

type certificateAuthority struct {
	cert   *x509.Certificate
	der    []byte
	key    *ecdsa.PrivateKey
	serial int64
}

// newCA makes a CA, ECDSA P-256, written to caOut as PEM (as vCenter's VMCA root is
// downloaded).
func newCA(caOut string) *certificateAuthority {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(err)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "vcsim-test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	check(err)
	check(os.WriteFile(caOut, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	cert, err := x509.ParseCertificate(der)
	check(err)
	return &certificateAuthority{cert: cert, der: der, key: key, serial: 1}
}

// sign makes a server certificate for 127.0.0.1 and localhost with a key of its own,
// ECDSA P-256; returns it and its SHA-256 thumbprint in vSphere's colon form.
func (ca *certificateAuthority) sign() (tls.Certificate, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(err)
	ca.serial++
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	check(err)
	sum := sha256.Sum256(der)
	hex := make([]string, len(sum))
	for i, b := range sum {
		hex[i] = fmt.Sprintf("%02X", b)
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.der}, PrivateKey: key}, strings.Join(hex, ":")
}

// selfSignedCertificate makes a certificate that signs itself and says it is a CA (basic
// constraints CA:TRUE, key usage certSign and digitalSignature, extended key usage
// serverAuth), as vCenter's and ESXi's own self-signed certificates do, for 127.0.0.1
// alone; writes it to caOut as PEM; returns it and its SHA-256 thumbprint.
func selfSignedCertificate(caOut string) (tls.Certificate, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(err)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(3),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	check(err)
	check(os.WriteFile(caOut, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	sum := sha256.Sum256(der)
	hex := make([]string, len(sum))
	for i, b := range sum {
		hex[i] = fmt.Sprintf("%02X", b)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, strings.Join(hex, ":")
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// ownHostState gives a host a firewall system and an advanced-option manager of its own
// whose state is the host's config.firewall and config.option: a change made through
// either manager (EnableRuleset, UpdateRuleset, UpdateOptions) is what the next read of
// the host's configuration shows, as on a real host. The simulator's defaults share one
// ruleset list and one option list between every host, so enabling a ruleset on one host
// would enable it on all.
func ownHostState(h *object.HostSystem) {
	obj := simulator.Map.Get(h.Reference()).(*simulator.HostSystem)
	simulator.Map.WithLock(obj, func() {
		cfg := obj.Config
		fw := *cfg.Firewall
		fw.Ruleset = append([]types.HostFirewallRuleset(nil), fw.Ruleset...)
		for i := range fw.Ruleset {
			if hosts := fw.Ruleset[i].AllowedHosts; hosts != nil {
				own := *hosts
				own.IpAddress = append([]string(nil), hosts.IpAddress...)
				own.IpNetwork = append([]types.HostFirewallRulesetIpNetwork(nil), hosts.IpNetwork...)
				fw.Ruleset[i].AllowedHosts = &own
			}
		}
		cfg.Firewall = &fw
		firewall := &hostFirewall{}
		firewall.Self = *obj.ConfigManager.FirewallSystem
		firewall.FirewallInfo = cfg.Firewall
		simulator.Map.Put(firewall)

		options := &hostOptions{host: obj}
		options.Self = *obj.ConfigManager.AdvancedOption
		for _, o := range cfg.Option {
			own := *o.GetOptionValue()
			options.Setting = append(options.Setting, &own)
		}
		cfg.Option = options.Setting
		options.SupportedOption = append(options.SupportedOption, pvrdmaVmknicDef)
		simulator.Map.Put(options)
	})
}

// pvrdmaVmknicDef describes Net.PVRDMAVmknic as an ESXi host lists it in its option
// manager's supportedOption: a string, empty by default. Ansible's
// vmware_host_config_manager changes only options the host describes there.
var pvrdmaVmknicDef = types.OptionDef{
	ElementDescription: types.ElementDescription{
		Description: types.Description{Label: "PVRDMAVmknic", Summary: "Vmknic for PVRDMA"},
		Key:         "Net.PVRDMAVmknic",
	},
	OptionType: &types.StringOption{DefaultValue: ""},
}

// hostFirewall is one host's firewall system; its FirewallInfo is the host's
// config.firewall.
type hostFirewall struct {
	simulator.HostFirewallSystem
}

// UpdateRuleset sets the hosts a ruleset allows (vSphere Web Services API reference,
// HostFirewallSystem.UpdateRuleset), which govmomi 0.24's simulator does not implement.
func (s *hostFirewall) UpdateRuleset(req *types.UpdateRuleset) soap.HasFault {
	body := &methods.UpdateRulesetBody{}
	for i := range s.FirewallInfo.Ruleset {
		if s.FirewallInfo.Ruleset[i].Key == req.Id {
			allowed := req.Spec.AllowedHosts
			s.FirewallInfo.Ruleset[i].AllowedHosts = &allowed
			body.Res = &types.UpdateRulesetResponse{}
			return body
		}
	}
	body.Fault_ = simulator.Fault("", &types.NotFound{})
	return body
}

// hostOptions is one host's advanced-option manager; its Setting is the host's
// config.option.
type hostOptions struct {
	simulator.OptionManager
	host *simulator.HostSystem
}

// UpdateOptions changes the settings, then shows a newly added one in config.option too
// (the simulator's own changes existing values in place, which config.option shares).
func (m *hostOptions) UpdateOptions(req *types.UpdateOptions) soap.HasFault {
	res := m.OptionManager.UpdateOptions(req)
	simulator.Map.WithLock(m.host, func() {
		m.host.Config.Option = m.Setting
	})
	return res
}

//! A host's `config.network` (`HostNetworkInfo`): its RDMA devices, VMkernel interfaces,
//! vDSes and standard switches, as the `esxcli` parsers' rows.
//!
//! The API refers to one network object of the host from another by its key, never by
//! the name esxcli and the vSphere Client show (vSphere Web Services API reference:
//! `HostRdmaDevicePnicBacking.pairedUplink`, `HostProxySwitch.pnic` and
//! `HostVirtualSwitch.pnic` hold `key-vim.host.PhysicalNic-vmnic2`;
//! `HostVirtualSwitch.portgroup` holds `key-vim.host.PortGroup-VM Network`;
//! `HostPortGroup.vswitch` holds `key-vim.host.VirtualSwitch-vSwitch0`). Each key is
//! resolved through the list that holds the object with its name (`pnic`, `vswitch`,
//! `portgroup`), so a host reads alike over SSH and through vCenter. A key none of them
//! has is named as such, never passed for an object; a name (what captures of older
//! simulators hold) is kept.
use super::{HostConfigRows, Values};
use crate::rdma::PortState;
use crate::xml::Element;
use crate::{DvPort, DvsSwitch, Ipv4Interface, RdmaDevice, RdmaProtocols, StandardSwitch, VmkInterface};

/// A kind of network object the API refers to by key: the prefix of its keys and what
/// a key of it with nothing behind it is called.
struct Kind {
    prefix: &'static str,
    what: &'static str,
}

static PHYSICAL_NIC: Kind = Kind {
    prefix: "key-vim.host.PhysicalNic-",
    what: "physical NIC",
};
static VIRTUAL_SWITCH: Kind = Kind {
    prefix: "key-vim.host.VirtualSwitch-",
    what: "standard switch",
};
static PORT_GROUP: Kind = Kind {
    prefix: "key-vim.host.PortGroup-",
    what: "port group",
};

/// The objects of one kind the host lists: key, then name.
struct Named<'k> {
    kind: &'k Kind,
    by_key: Vec<(String, String)>,
}

impl Named<'_> {
    /// `list` children of `net` with their `key` and the name at `name`.
    fn of<'k>(kind: &'k Kind, net: &Element, list: &str, name: &[&str]) -> Named<'k> {
        Named {
            kind,
            by_key: net
                .children_named(list)
                .filter_map(|o| Some((o.text(&["key"])?, o.text(name)?)))
                .collect(),
        }
    }

    /// The name of the object `reference` refers to.
    fn name(&self, reference: String) -> String {
        if let Some((_, name)) = self.by_key.iter().find(|(key, _)| *key == reference) {
            return name.clone();
        }
        match reference.strip_prefix(self.kind.prefix) {
            Some(name) => format!("{name} (no {} of the host has this key)", self.kind.what),
            None => reference,
        }
    }
}

/// Every name the host's network objects are referred to by.
struct Names<'k> {
    nics: Named<'k>,
    switches: Named<'k>,
    portgroups: Named<'k>,
}

impl Names<'_> {
    fn of(net: &Element) -> Names<'static> {
        Names {
            nics: Named::of(&PHYSICAL_NIC, net, "pnic", &["device"]),
            switches: Named::of(&VIRTUAL_SWITCH, net, "vswitch", &["name"]),
            portgroups: Named::of(&PORT_GROUP, net, "portgroup", &["spec", "name"]),
        }
    }

    /// The standard switch a port group (by name, as a `HostVirtualNic` names it) is on:
    /// its `vswitch` key resolved, else the name its spec gives.
    fn switch_of_portgroup(&self, net: &Element, portgroup: &str) -> Option<String> {
        let group = net
            .children_named("portgroup")
            .find(|g| g.text(&["spec", "name"]).as_deref() == Some(portgroup))?;
        group
            .text(&["vswitch"])
            .map(|key| self.switches.name(key))
            .or_else(|| group.text(&["spec", "vswitchName"]))
    }
}

/// Reads `config.network` into `rows`.
pub(super) fn read(net: &Element, rows: &mut HostConfigRows) {
    let names = Names::of(net);
    rdma_devices(net, &names, rows);
    let switches: Vec<(String, String)> = net
        .children_named("proxySwitch")
        .filter_map(|s| Some((s.text(&["dvsUuid"])?, s.text(&["dvsName"])?)))
        .collect();
    let mut ports: Vec<(String, DvPort)> = Vec::new();
    for v in net.children_named("vnic") {
        let Some(nic) = vmknic(net, v, &names, &switches) else {
            continue;
        };
        ports.extend(nic.port);
        rows.vmknics.push(nic.interface);
        rows.ipv4.push(nic.ipv4);
    }
    for s in net.children_named("proxySwitch") {
        let Some(name) = s.text(&["dvsName"]) else { continue };
        let uuid = s.text(&["dvsUuid"]);
        rows.dvs.push(DvsSwitch {
            name,
            vds_id: uuid.clone(),
            mtu: s.number(&["mtu"]),
            uplinks: s
                .children_named("pnic")
                .filter_map(|p| p.text(&[]))
                .map(|u| names.nics.name(u))
                .collect(),
            ports: ports
                .iter()
                .filter(|(u, _)| Some(u) == uuid.as_ref())
                .map(|(_, p)| p.clone())
                .collect(),
        });
    }
    rows.standard_switches = net
        .children_named("vswitch")
        .filter_map(|s| {
            Some(StandardSwitch {
                name: s.text(&["name"])?,
                mtu: s.number(&["mtu"]).or_else(|| s.number(&["spec", "mtu"])),
                uplinks: s
                    .children_named("pnic")
                    .filter_map(|p| p.text(&[]))
                    .map(|u| names.nics.name(u))
                    .collect(),
                portgroups: s
                    .children_named("portgroup")
                    .filter_map(|p| p.text(&[]))
                    .map(|g| names.portgroups.name(g))
                    .collect(),
            })
        })
        .collect();
}

fn rdma_devices(net: &Element, names: &Names, rows: &mut HostConfigRows) {
    for d in net.children_named("rdmaDevice") {
        let Some(name) = d.text(&["device"]) else { continue };
        let speed = d
            .number(&["connectionInfo", "speedInMbps"])
            .map(|m| format!("{} Gbps", m / 1000))
            .unwrap_or_default();
        rows.rdma.push(RdmaDevice {
            name: name.clone(),
            driver: d.text(&["driver"]).unwrap_or_default(),
            state: PortState::from_cell(&d.text(&["connectionInfo", "state"]).unwrap_or_default()),
            mtu: d.number(&["connectionInfo", "mtu"]),
            speed,
            paired_uplink: d.text(&["backing", "pairedUplink"]).map(|u| names.nics.name(u)),
            description: d.text(&["description"]).unwrap_or_default(),
        });
        rows.protocols.push(RdmaProtocols {
            device: name,
            roce_v1: d.flag(&["capability", "roceV1Capable"]),
            roce_v2: d.flag(&["capability", "roceV2Capable"]),
            iwarp: d.flag(&["capability", "iWarpCapable"]),
        });
    }
}

/// One `HostVirtualNic` as esxcli shows it.
struct VirtualNic {
    /// As `esxcli network ip interface list` shows it.
    interface: VmkInterface,
    /// As `esxcli network ip interface ipv4 get` shows it.
    ipv4: Ipv4Interface,
    /// Its port on a vDS, with the vDS's uuid, if it has one.
    port: Option<(String, DvPort)>,
}

fn vmknic(net: &Element, v: &Element, names: &Names, switches: &[(String, String)]) -> Option<VirtualNic> {
    let name = v.text(&["device"])?;
    let dvs_uuid = v.text(&["spec", "distributedVirtualPort", "switchUuid"]);
    let vds_name = dvs_uuid
        .as_ref()
        .and_then(|u| switches.iter().find(|(id, _)| id == u).map(|(_, n)| n.clone()));
    let vds_port = v.text(&["spec", "distributedVirtualPort", "portKey"]);
    let port = match (&dvs_uuid, &vds_port) {
        (Some(uuid), Some(port)) => Some((
            uuid.clone(),
            DvPort {
                client: Some(name.clone()),
                portgroup_id: v.text(&["spec", "distributedVirtualPort", "portgroupKey"]),
                in_use: Some(true),
                port_id: Some(port.clone()),
            },
        )),
        _ => None,
    };
    // `HostVirtualNic.portgroup` names a standard port group (empty on a vDS); esxcli's
    // `Portset` is then the standard switch it is on.
    let portgroup = v.text(&["portgroup"]).or_else(|| v.text(&["spec", "portgroup"]));
    let portset = vds_name
        .clone()
        .or_else(|| portgroup.as_deref().and_then(|g| names.switch_of_portgroup(net, g)));
    let interface = VmkInterface {
        name: name.clone(),
        mac_address: v.text(&["spec", "mac"]),
        enabled: Some(true),
        portset,
        portgroup,
        netstack: v
            .text(&["spec", "netStackInstanceKey"])
            .or_else(|| Some("defaultTcpipStack".into())),
        vds_name,
        vds_port,
        mtu: v.number(&["spec", "mtu"]),
    };
    let dhcp = v.flag(&["spec", "ip", "dhcp"]);
    let ipv4 = Ipv4Interface {
        name,
        address: v.text(&["spec", "ip", "ipAddress"]),
        netmask: v.text(&["spec", "ip", "subnetMask"]),
        broadcast: None,
        address_type: dhcp.map(|d| if d { "DHCP" } else { "STATIC" }.to_string()),
        gateway: v.text(&["spec", "ipRouteSpec", "ipRouteConfig", "defaultGateway"]),
        dhcp_dns: None,
    };
    Some(VirtualNic { interface, ipv4, port })
}

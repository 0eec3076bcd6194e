//! The hosts' and VMs' PVRDMA configuration read from govmomi's vSphere simulator
//! (`tests/vcsim/main.go`): every property the diagnosis reads comes back, per host, in
//! one request plus its pages. A real-tool test: scripts/test.sh runs it.
#[path = "../../tests/support/vcsim.rs"]
#[allow(dead_code)]
mod vcsim;

use std::time::Duration;

use pvrdma_vsphere::{Client, Config, Endpoint, SecretString, Thumbprint, Trust};
use vcsim::{ClusterSpec, DatacenterSpec, HostSpec, PvrdmaSpec, Spec, Vcsim, VmSpec};

fn client(sim: &Vcsim, page_size: u32) -> Client {
    let endpoint = Endpoint::parse(&sim.url).unwrap();
    let trust = Trust::Pinned(Thumbprint::parse(&sim.thumbprint).unwrap());
    let mut c = Config::new(endpoint, trust, &sim.user, SecretString::from(sim.password.clone()));
    c.timeout = Duration::from_secs(60);
    c.page_size = page_size;
    Client::new(c).unwrap()
}

fn host(name: &str, pvrdma: Option<PvrdmaSpec>) -> HostSpec {
    HostSpec {
        pvrdma,
        ..HostSpec::new(name)
    }
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn the_configuration_of_hosts_and_their_vms_is_read_in_pages() {
    let mut off = PvrdmaSpec::healthy(12);
    off.firewall = false;
    off.vmknic = String::new();
    off.rdma[0].state = "down".into();
    off.rdma[0].roce_v2 = false;
    let mut hosts = vec![host("esx01", Some(PvrdmaSpec::healthy(11))), host("esx02", Some(off))];
    hosts.extend((3..=9).map(|i| host(&format!("esx{i:02}"), None)));
    let mut vm = VmSpec::new("hpc-node07", "esx01", "");
    vm.hw_version = "vmx-19".into();
    vm.reserved_mb = 4096;
    vm.locked_to_max = true;
    vm.vrdma = vec!["rocev2".into(), "rocev1".into()];
    let mut old = VmSpec::new("old-node", "esx02", "");
    old.hw_version = "vmx-11".into();
    old.vrdma = vec!["rocev2".into()];
    let spec = Spec {
        datacenters: vec![DatacenterSpec {
            name: "Lab".into(),
            folder: String::new(),
            clusters: vec![ClusterSpec {
                name: "HPC".into(),
                folder: String::new(),
                hosts,
            }],
            standalone: vec![],
        }],
        vms: vec![vm, old, VmSpec::new("plain", "esx03", "")],
    };
    let mut sim = Vcsim::start(&spec);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut client = client(&sim, 4);
    let inv = rt.block_on(client.inventory()).unwrap();
    let ids: Vec<String> = inv.hosts.iter().map(|h| h.id.clone()).collect();
    let before = client.calls().clone();
    let configs = rt.block_on(client.host_configs(&ids)).unwrap();
    let count = |m: &str| client.calls().get(m).copied().unwrap_or(0) - before.get(m).copied().unwrap_or(0);
    // 9 hosts and 3 VMs, 4 objects a page: one request and 2 continuations, not a
    // call per host.
    assert_eq!(count("RetrievePropertiesEx"), 1, "{:?}", client.calls());
    assert_eq!(count("ContinueRetrievePropertiesEx"), 2, "{:?}", client.calls());
    assert_eq!(configs.len(), 9);

    let by_name = |n: &str| configs.values().find(|c| c.name == n).unwrap();
    let good = by_name("esx01");
    if let Ok(dir) = std::env::var("PVRDMA_VCSIM_SAMPLE_DIR") {
        std::fs::write(format!("{dir}/host.xml"), &good.host_xml).unwrap();
        std::fs::write(format!("{dir}/vm.xml"), &good.vm_xml[0]).unwrap();
    }
    for needle in [
        "<name>config.product</name>",
        "<version>7.0.3</version>",
        "<build>21930508</build>",
        "<device>vmrdma0</device>",
        // NICs are referred to by key, and listed with their key and device, as the API has them.
        "<pairedUplink>key-vim.host.PhysicalNic-vmnic2</pairedUplink>",
        "<key>key-vim.host.PhysicalNic-vmnic2</key><device>vmnic2</device>",
        "<state>active</state>",
        "<roceV2Capable>true</roceV2Capable>",
        "<key>Net.PVRDMAVmknic</key>",
        "<ipAddress>192.168.50.11</ipAddress>",
        "<dvsName>dvs-rdma</dvsName>",
        "<pnic>key-vim.host.PhysicalNic-vmnic2</pnic>",
    ] {
        assert!(good.host_xml.contains(needle), "{needle} missing in {}", good.host_xml);
    }
    assert!(good.host_xml.contains(">vmk1</value>"), "{}", good.host_xml);
    // The pvrdma ruleset: enabled on esx01, not on esx02.
    let ruleset = |xml: &str| {
        let at = xml.find("<key>pvrdma</key>").expect("the pvrdma ruleset");
        let rest = &xml[at..];
        rest[..rest.find("</ruleset>").unwrap()].contains("<enabled>true</enabled>")
    };
    let bad = by_name("esx02");
    assert!(ruleset(&good.host_xml));
    assert!(!ruleset(&bad.host_xml));
    assert!(bad.host_xml.contains("<state>down</state>"));
    assert!(bad.host_xml.contains("<roceV2Capable>false</roceV2Capable>"));

    assert_eq!(good.vm_xml.len(), 1);
    let vm = &good.vm_xml[0];
    for needle in [
        ">hpc-node07</val>",
        ">vmx-19</val>",
        "<reservation>4096</reservation>",
        "VirtualVmxnet3Vrdma",
        "<deviceProtocol>rocev2</deviceProtocol>",
        "<deviceProtocol>rocev1</deviceProtocol>",
    ] {
        assert!(vm.contains(needle), "{needle} missing in {vm}");
    }
    assert!(bad.vm_xml[0].contains(">vmx-11</val>"));
    assert_eq!(by_name("esx03").vm_xml.len(), 1);
    assert!(by_name("esx04").vm_xml.is_empty());

    // A session vCenter ended in between is renewed, and the read made again.
    sim.expire_sessions();
    let logins = client.calls().get("Login").copied();
    let again = rt.block_on(client.host_configs(&ids)).expect("a new session");
    assert_eq!(again, configs);
    assert_eq!(client.calls().get("Login").copied(), logins.map(|n| n + 1));
    rt.block_on(client.logout()).unwrap();
    assert_eq!(sim.sessions(), 0);
}

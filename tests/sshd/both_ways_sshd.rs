//! One host read both ways: over SSH (a real OpenSSH sshd serving a sample host's `esxcli`
//! and `vsish` outputs) and through vCenter's vSphere API (govmomi's simulator, the same
//! host configured there as the sample is: build, NICs, switches, VMkernel interfaces, VM
//! and adapter MAC). A fleet whose SSH is on for some hosts and off for others is one fleet
//! to its admin: every field both sources can know must read the same, and what only one
//! side can know is listed below, with why.
use crate::support::client::{alias, Client, Doctor};
use crate::support::vcsim::{DvsSpec, HostSpec, PvrdmaSpec, RdmaSpec, Spec, Vcsim, VmSpec, VmknicSpec};
use crate::support::*;
use serde_json::Value;
use std::time::Duration;

/// The vDS of the sample fleet (`esxcli network vswitch dvs vmware list`).
const SAMPLE_DVS: &str = "50 2b 7e 1c 9a 44 0f 63-d1 5e 8a 27 c3 90 4b 11";

/// The sample fleet's `esx01` as vCenter has it (see samples/README.md, healthy-cluster):
/// ESXi 8.0.2 build 22380479; `vmrdma0` paired with `vmnic2`, RoCE v1 and v2; the pvrdma
/// ruleset on; `vmk0` (10.0.0.11, MTU 1500) on the simulator's own standard `vSwitch0`
/// (uplink `vmnic0`, port groups `VM Network` and `Management Network`, as the sample's
/// `vswitch standard list`), `vmk1` (10.10.10.11, MTU 9000) on vDS `DSwitch-RDMA`, whose
/// only uplink is `vmnic2`; `hpc-node01` (hardware 19, 16 GiB all locked) with one PVRDMA
/// adapter, RoCE v2, MAC 00:50:56:8a:9f:c2, on that vDS; and the vCLS VM, no adapter.
fn sample_esx01(change: impl FnOnce(&mut PvrdmaSpec)) -> Spec {
    let mut pvrdma = PvrdmaSpec {
        version: "8.0.2".into(),
        build: "22380479".into(),
        rdma: vec![RdmaSpec {
            device: "vmrdma0".into(),
            driver: "nmlx5_rdma".into(),
            uplink: "vmnic2".into(),
            state: "active".into(),
            mtu: 4096,
            roce_v1: true,
            roce_v2: true,
        }],
        firewall: true,
        vmknic: "vmk1".into(),
        vmknics: vec![
            VmknicSpec {
                device: "vmk0".into(),
                ip: "10.0.0.11".into(),
                netmask: "255.255.255.0".into(),
                mtu: 1500,
                ..VmknicSpec::default()
            },
            VmknicSpec {
                device: "vmk1".into(),
                ip: "10.10.10.11".into(),
                netmask: "255.255.255.0".into(),
                mtu: 9000,
                dvs: SAMPLE_DVS.into(),
                ..VmknicSpec::default()
            },
        ],
        dvs: vec![DvsSpec {
            name: "DSwitch-RDMA".into(),
            uuid: SAMPLE_DVS.into(),
            mtu: 9000,
            uplinks: vec!["vmnic2".into()],
        }],
        vswitches: vec![],
    };
    change(&mut pvrdma);
    Spec::one_cluster(
        "Lab",
        "HPC",
        vec![HostSpec {
            pvrdma: Some(pvrdma),
            ..HostSpec::new("esx01")
        }],
        vec![
            VmSpec {
                hw_version: "vmx-19".into(),
                reserved_mb: 16384,
                locked_to_max: true,
                vrdma: vec!["rocev2".into()],
                dvs: SAMPLE_DVS.into(),
                macs: vec!["00:50:56:8a:9f:c2".into()],
                ..VmSpec::new("hpc-node01", "esx01", "")
            },
            VmSpec {
                hw_version: "vmx-19".into(),
                ..VmSpec::new("vCLS-b4a3a15f-b274-44f1-8b47-b5de5d4093e1", "esx01", "")
            },
        ],
    )
}

/// What one side knows and the other cannot, as paths into a host of the JSON report
/// (`*`: every element of a list), with why. Each is taken out of both sides before they
/// are compared; what it says is checked on its own below where the two relate.
const ONLY_ONE_SIDE_KNOWS: &[(&[&str], &str)] = &[
    (
        &["checks", "*", "evidence"],
        "names where each fact came from: an esxcli command over SSH, an API property through vCenter",
    ),
    (
        &["status"],
        "follows from the adapters' transport, observed only on the host (vsish `Physical HCA available`): `incomplete` through the API",
    ),
    (&["configuration_only"], "marks the host read through the API alone"),
    (
        &["vms", "*", "adapters", "*", "verdict"],
        "the transport is observed only on the host (vsish); the API's `predicted` is compared with it instead",
    ),
    (
        &["vms", "*", "adapters", "*", "reasons"],
        "through the API they say the transport was predicted, not observed",
    ),
    (
        &["vms", "*", "adapters", "*", "predicted"],
        "only a configuration-only verdict predicts; compared with the verdict over SSH",
    ),
    (
        &["vms", "*", "adapters", "*", "active_mtu"],
        "the MTU the adapter negotiated is runtime state of the host (vsish `Active MTU`)",
    ),
    (
        &["vms", "*", "adapters", "*", "port", "uplink"],
        "the uplink a port is teamed to now is runtime state of the host's switch (`esxcli network vm port list`, `Team Uplink`)",
    ),
    (
        &["vms", "*", "adapters", "*", "port", "portgroup"],
        "the VM's backing holds the port group's key (`dvportgroup-…`), its name is a property of the DistributedVirtualPortgroup, which the tool does not read",
    ),
    (
        &["vms", "*", "world_id"],
        "a running VM's VMkernel world exists only on its host (`esxcli vm process list`)",
    ),
    (
        &["vms", "*", "config_file"],
        "the host names the .vmx by its volume path (/vmfs/volumes/<uuid>/…); the API read does not ask for config.files, where vCenter names it by datastore ([ds] dir/vm.vmx)",
    ),
    (
        &["uplinks"],
        "traffic counters of the NICs (`esxcli network nic stats get`); HostConfigInfo holds none",
    ),
];

/// The check whose summary and status only SSH can give: pause frames and PFC
/// (`esxcli network nic pauseParams list`, `nic dcb status get`) are in no API property.
const SSH_ONLY_CHECK: &str = "lossless-network";

fn remove(value: &mut Value, path: &[&str]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    match (*first, value) {
        ("*", Value::Array(items)) => items.iter_mut().for_each(|v| remove(v, rest)),
        (key, Value::Object(map)) if rest.is_empty() => {
            map.remove(key);
        }
        (key, Value::Object(map)) => {
            if let Some(v) = map.get_mut(key) {
                remove(v, rest);
            }
        }
        _ => {}
    }
}

/// The host `esx01` of a report, with what only one side knows taken out.
fn comparable(report: &Value) -> Value {
    let mut host = crate::vcenter_sshd::host_of(report, "esx01");
    for (path, _) in ONLY_ONE_SIDE_KNOWS {
        remove(&mut host, path);
    }
    if let Some(checks) = host["checks"].as_array_mut() {
        checks.retain(|c| c["id"] != SSH_ONLY_CHECK);
    }
    host
}

fn adapters(report: &Value) -> Vec<Value> {
    crate::vcenter_sshd::host_of(report, "esx01")["vms"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|vm| vm["adapters"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// Reads `scenario`'s esx01 over SSH and `spec` through the API; compares them.
fn read_both_ways(scenario: &str, spec: &Spec, ssh_code: i32) {
    let client = Client::new();
    let mut options = SshdOptions::new(samples_host(scenario, "esx01"));
    client.authorize(&mut options);
    let sshd = Sshd::start(options);
    client.trust(&sshd);
    client.write_config(&alias("esx01", &sshd));
    let over_ssh = client
        .doctor()
        .args([
            "esx01",
            "--format",
            "json",
            "--connect-timeout",
            "20s",
            "--timeout",
            "120s",
        ])
        .timeout(Duration::from_secs(180))
        .run();
    assert_eq!(over_ssh.code, Some(ssh_code), "{}", over_ssh.stderr);

    let mut sim = Vcsim::start(spec);
    let through_api = Doctor::new()
        .reading(&sim)
        .args(["--no-ssh", "--cluster", "HPC", "--format", "json"])
        .timeout(Duration::from_secs(120))
        .run();
    // A failing check exits 1 either way; a healthy configuration-only run exits 4.
    let api_code = if ssh_code == 0 { 4 } else { ssh_code };
    assert_eq!(through_api.code, Some(api_code), "{}", through_api.stderr);
    assert_eq!(sim.sessions(), 0);

    let (ssh, api) = (over_ssh.json(), through_api.json());
    let (ssh_host, api_host) = (comparable(&ssh), comparable(&api));
    assert!(
        ssh_host == api_host,
        "{scenario}: one host, read over SSH (left) and through vCenter (right), differs where both can know it:\nover SSH:\n{ssh_host:#}\nthrough vCenter:\n{api_host:#}"
    );
    assert!(
        ssh_host["checks"].as_array().is_some_and(|c| c.len() > 10),
        "{ssh_host:#}"
    );
    assert!(!adapters(&ssh).is_empty(), "{ssh:#}");
    for key in ["fleet_checks", "transport"] {
        assert_eq!(ssh[key], api[key], "{key}");
    }

    // What only one side knows, where the two relate: the API predicts what SSH observes.
    let observed: Vec<Value> = adapters(&ssh).iter().map(|a| a["verdict"].clone()).collect();
    let predicted: Vec<Value> = adapters(&api).iter().map(|a| a["predicted"].clone()).collect();
    assert_eq!(observed, predicted, "what SSH observes, what the API predicts");
    let api_esx01 = crate::vcenter_sshd::host_of(&api, "esx01");
    assert_eq!(api_esx01["configuration_only"], true);
    let lossless = api_esx01["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == SSH_ONLY_CHECK))
        .expect("lossless-network");
    assert_eq!(lossless["status"], "unknown", "{lossless:#}");
    assert!(
        lossless["summary"]
            .as_str()
            .unwrap_or_default()
            .contains("only SSH shows it"),
        "{lossless:#}"
    );
}

#[test]
#[ignore = "needs the vSphere simulator and sshd: scripts/test.sh runs it"]
fn a_healthy_host_reads_the_same_over_ssh_and_through_vcenter() {
    read_both_ways("healthy-cluster", &sample_esx01(|_| {}), 0);
}

/// The tagged vmknic on a standard switch: the API names the switch through the port
/// group's key to it (`HostPortGroup.vswitch`), as esxcli's `Portset` does.
#[test]
#[ignore = "needs the vSphere simulator and sshd: scripts/test.sh runs it"]
fn a_vmknic_on_a_standard_switch_reads_the_same_over_ssh_and_through_vcenter() {
    read_both_ways("management-vmk0-tagged", &sample_esx01(|p| p.vmknic = "vmk0".into()), 0);
}

/// A failing check: the same summary and the same fix, in every form, either way.
#[test]
#[ignore = "needs the vSphere simulator and sshd: scripts/test.sh runs it"]
fn a_failing_check_reads_the_same_over_ssh_and_through_vcenter() {
    read_both_ways("firewall-pvrdma-disabled", &sample_esx01(|p| p.firewall = false), 1);
}

//! The plan model and its two renderings: names that YAML, Jinja, the shell or PowerShell
//! read specially stay one plain value, a fix that needs a decision is never a task, the
//! steps by hand keep the report's order, a run without vCenter addresses each host's own
//! API by the name the run used, and reviewed plans with and without vCenter.
use super::*;
use crate::capture::{from_vsphere, HostCapture};
use crate::diagnose::{diagnose, ChangeTarget, Check, HostDiagnosis, Remedy};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};
use yaml_rust2::{Yaml, YamlLoader};

const HOST_XML: &str = include_str!("../../../../parsers/tests/fixtures/vsphere_host_config.xml");
const VM_XML: &str = include_str!("../../../../parsers/tests/fixtures/vsphere_vm_config.xml");

/// Names with what YAML, Jinja, the shell and PowerShell treat specially.
const AWKWARD: [&str; 14] = [
    "esx'01",
    "esx$(reboot)01",
    "esx`01",
    "esx01\nrm -rf /",
    "say \"hi\"",
    "rank: 1",
    "# not a comment",
    "- item",
    "*alias",
    "&anchor",
    "{{ lookup('env', 'HOME') }}",
    "'quoted' and \\ back",
    "%{x} @y !z",
    " padded ",
];

fn options(vcenter: Option<&str>) -> PlanOptions {
    PlanOptions {
        vcenter: vcenter.map(str::to_string),
        source: "a test".to_string(),
        made: UNIX_EPOCH + Duration::from_secs(1_795_000_000),
    }
}

fn captures(sample: &str) -> Vec<HostCapture> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples").join(sample);
    crate::capture::folder::read_dir_for_tests(&dir).expect("sample loads")
}

/// `sample`'s first host, diagnosed under the name `host`.
fn sample_host(sample: &str, host: &str) -> HostDiagnosis {
    let mut c = captures(sample).remove(0);
    c.host = host.to_string();
    diagnose(&[c]).hosts.remove(0)
}

/// A host read through the vSphere API with the simulator's answer, faulty three ways: the
/// pvrdma ruleset off, Net.PVRDMAVmknic empty (one vmknic on the HCA's vDS), and its VM
/// `vm` (vm-84) not reserving its memory.
fn api_host(host: &str, vm: &str) -> HostDiagnosis {
    api_host_at(host, vm, "vmx-19")
}

/// [`api_host`] with its VM at virtual hardware `hw` (`vmx-11` fails the hardware check).
fn api_host_at(host: &str, vm: &str, hw: &str) -> HostDiagnosis {
    let ruleset = HOST_XML.find("<key>pvrdma</key>").expect("the pvrdma ruleset");
    let enabled = ruleset + HOST_XML[ruleset..].find("<enabled>true</enabled>").expect("its state");
    let mut host_xml = HOST_XML.to_string();
    host_xml.replace_range(enabled..enabled + 22, "<enabled>false</enabled>");
    let host_xml = host_xml.replace(
        "<key>Net.PVRDMAVmknic</key><value XMLSchema-instance:type=\"xsd:string\">vmk1</value>",
        "<key>Net.PVRDMAVmknic</key><value XMLSchema-instance:type=\"xsd:string\"></value>",
    );
    let vm_xml = VM_XML
        .replace(">hpc-node07<", &format!(">{}<", xml_text(vm)))
        .replace("<reservation>4096</reservation>", "<reservation>0</reservation>")
        .replace(">vmx-19<", &format!(">{hw}<"))
        .replace(
            "config.memoryReservationLockedToMax</name><val xmlns:XMLSchema-instance=\"http://www.w3.org/2001/XMLSchema-instance\" XMLSchema-instance:type=\"xsd:boolean\">true",
            "config.memoryReservationLockedToMax</name><val xmlns:XMLSchema-instance=\"http://www.w3.org/2001/XMLSchema-instance\" XMLSchema-instance:type=\"xsd:boolean\">false",
        );
    let d = diagnose(&[from_vsphere(host, host_xml, &[vm_xml], 12)]);
    d.hosts.into_iter().next().expect("the host")
}

fn xml_text(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn of(hosts: Vec<HostDiagnosis>) -> Diagnosis {
    Diagnosis {
        hosts,
        ..Diagnosis::default()
    }
}

fn failing<'a>(h: &'a HostDiagnosis, id: &str) -> &'a Check {
    let c = h.checks.iter().find(|c| c.id == id).expect("the check");
    assert_eq!(c.status, Status::Fail, "{c:#?}");
    c
}

/// The API host's three faults are changes on the host and its VM, by moid.
#[test]
fn the_api_hosts_faults_are_three_changes_it_applies() {
    let h = api_host("esx01", "hpc-node07");
    let plan = Plan::of(&of(vec![h]));
    let changes: Vec<(CheckId, &ConfigChange)> = plan.hosts[0].changes().collect();
    let ids: Vec<String> = changes.iter().map(|(id, _)| id.to_string()).collect();
    assert_eq!(ids, ["pvrdma-vmknic-tagged", "firewall-pvrdma", "vm-memory-reserved"]);
    assert_eq!(
        changes[2].1.target,
        ChangeTarget::Vm {
            name: "hpc-node07".to_string(),
            moid: Some("vm-84".to_string())
        }
    );
    assert_eq!(changes[0].1.replaces.as_deref(), Some(""));
    assert_eq!(changes[1].1.replaces.as_deref(), Some("false"));
}

fn yaml(text: &str) -> Yaml {
    let docs = YamlLoader::load_from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(docs.len(), 1, "{text}");
    docs.into_iter().next().expect("one document")
}

/// The `add_host` task of the first play, and its variables.
fn host_entries(doc: &Yaml) -> Vec<&Yaml> {
    let plays = doc.as_vec().expect("a list of plays");
    assert_eq!(plays.len(), 2, "the plan is two plays");
    assert!(!plays[1]["tasks"].is_badvalue(), "the second play applies");
    plays[0]["tasks"]
        .as_vec()
        .expect("the first play's tasks")
        .iter()
        .filter(|t| !t["ansible.builtin.add_host"].is_badvalue())
        .collect()
}

#[test]
fn yaml_scalars_keep_every_character_of_host_and_vm_names() {
    for name in AWKWARD {
        let d = of(vec![api_host(name, name)]);
        let text = ansible::render(&d, &options(Some("vc01.example.com")));
        let doc = yaml(&text);
        let entries = host_entries(&doc);
        assert_eq!(entries.len(), 1, "{name:?}\n{text}");
        let task = entries[0];
        let vars = &task["ansible.builtin.add_host"];
        assert_eq!(task["name"].as_str(), Some(name), "{text}");
        assert_eq!(vars["pvrdma_esxi"].as_str(), Some(name), "{text}");
        assert_eq!(vars["pvrdma_api"].as_str(), Some("vc01.example.com"), "{text}");
        // The VM's name as the API gave it (the XML reader trims its ends).
        let vm_name = match &Plan::of(&d).hosts[0]
            .changes()
            .last()
            .expect("the VM's change")
            .1
            .target
        {
            ChangeTarget::Vm { name, .. } => name.clone(),
            ChangeTarget::Host => panic!("not a VM"),
        };
        assert_eq!(vm_name, name.trim());
        let vm = &vars["pvrdma_vm_memory"][0];
        assert_eq!(vm["name"].as_str(), Some(vm_name.as_str()), "{text}");
        assert_eq!(vm["moid"].as_str(), Some("vm-84"), "{text}");
        assert_eq!(vm["on_host"].as_str(), Some(name), "{text}");
        // Ansible never templates them: every value from a host or vCenter is !unsafe.
        for key in ["pvrdma_esxi: ", "pvrdma_api: "] {
            let line = text.lines().find(|l| l.trim_start().starts_with(key)).expect(key);
            assert!(line.contains(&format!("{key}!unsafe \"")), "{line}");
        }
        assert!(text.contains("\n    - name: !unsafe \""), "{text}");
        assert!(text.contains("{name: !unsafe \""), "{text}");
    }
}

#[test]
fn a_newline_in_a_name_never_ends_a_comment() {
    let name = "esx01\n- name: injected\n  ansible.builtin.shell: reboot";
    let d = of(vec![sample_host("vmknic-untagged", name)]);
    let text = ansible::render(&d, &options(None));
    assert!(
        !text.lines().any(|l| l.trim_start().starts_with("- name: injected")),
        "{text}"
    );
    assert_eq!(host_entries(&yaml(&text)).len(), 1);
    let script = powercli::render(&d, &options(None));
    // The name's newline shows as a space in a comment, and stays inside the quotes of a
    // single-quoted string (which PowerShell lets run over lines) in code.
    assert!(
        script.contains("# esx01 - name: injected   ansible.builtin.shell: reboot"),
        "{script}"
    );
    assert!(
        script.contains("Connect-VIServer -Server 'esx01\n- name: injected\n  ansible.builtin.shell: reboot'"),
        "{script}"
    );
}

#[test]
fn powershell_strings_keep_dollars_backticks_and_double_quotes_plain() {
    use crate::diagnose::powershell_quote as q;
    assert_eq!(q("esx'01"), "'esx''01'");
    assert_eq!(q("a$b`c\"d"), "'a$b`c\"d'");
    // PowerShell reads the typographic single quotes as quotes too.
    assert_eq!(q("it\u{2019}s"), "'it\u{2019}\u{2019}s'");
    for name in AWKWARD {
        let d = of(vec![api_host(name, name)]);
        let script = powercli::render(&d, &options(Some("vc01.example.com")));
        for line in script.lines().filter(|l| !l.trim_start().starts_with('#')) {
            // Outside a comment a name only ever appears quoted.
            if let Some(at) = line.find(name).filter(|_| !name.trim().is_empty()) {
                let before = &line[..at];
                assert!(
                    line.contains(&q(name)) || before.ends_with('\''),
                    "{name:?} unquoted in: {line}"
                );
            }
        }
        assert!(
            script.contains(&format!("Get-VMHost -Server $server -Name {}", q(name))),
            "{script}"
        );
        assert!(
            script.contains(&format!("-Id {}", q("VirtualMachine-vm-84"))),
            "{script}"
        );
    }
}

#[test]
fn a_powershell_comment_cannot_close_or_open_a_block_comment() {
    let d = of(vec![sample_host("vmknic-untagged", "esx#>01<#")]);
    let script = powercli::render(&d, &options(None));
    for line in script.lines().filter(|l| l.trim_start().starts_with('#')) {
        assert!(!line.contains("#>") && !line.contains("<#"), "{line}");
    }
    assert!(script.contains("Connect-VIServer -Server 'esx#>01<#'"), "{script}");
}

/// A fix with a change and a decision: the change must not be applied until decided.
fn decided_host() -> HostDiagnosis {
    let mut h = sample_host("vmknic-untagged", "esx01");
    let c = h
        .checks
        .iter_mut()
        .find(|c| c.id == "pvrdma-vmknic-tagged")
        .expect("the check");
    let remedy = c.remedy.as_mut().expect("a fix");
    assert!(!remedy.changes.is_empty());
    remedy.decision = Some("which vmknic carries PVRDMA: vmk1 and vmk2 are both on the vDS".to_string());
    h
}

#[test]
fn a_fix_that_needs_a_decision_is_a_comment_never_a_task() {
    let d = of(vec![decided_host()]);
    let plan = Plan::of(&d);
    assert_eq!(plan.hosts.len(), 1);
    assert!(plan.hosts[0].changes().next().is_none(), "{plan:#?}");
    assert_eq!(plan.counts(), (0, 1));
    let text = ansible::render(&d, &options(None));
    assert!(host_entries(&yaml(&text)).is_empty(), "{text}");
    assert!(text.contains("# BY HAND on esx01, pvrdma-vmknic-tagged"), "{text}");
    assert!(
        text.contains("#   decide first: which vmknic carries PVRDMA: vmk1 and vmk2 are both on the vDS"),
        "{text}"
    );
    assert!(
        text.contains("#   govc: govc host.option.set -host esx01 Net.PVRDMAVmknic vmk1"),
        "{text}"
    );
    let script = powercli::render(&d, &options(None));
    let code: Vec<&str> = script.lines().filter(|l| !l.trim_start().starts_with('#')).collect();
    assert!(!code.iter().any(|l| l.contains("Set-AdvancedSetting")), "{script}");
    assert!(!code.iter().any(|l| l.contains("Get-VMHost")), "{script}");
    assert!(script.contains("#   decide first: which vmknic"), "{script}");
}

/// healthy-cluster's first host with its tagged vmknic (vmk1) disabled.
fn disabled_vmknic_host(name: &str) -> HostDiagnosis {
    let mut c = captures("healthy-cluster").remove(0);
    c.host = name.to_string();
    let list = c
        .outputs
        .get_mut("esxcli_network_ip_interface_list")
        .expect("the vmknic list");
    let (at, _) = list.stdout.match_indices("Enabled: true").nth(1).expect("vmk1's state");
    list.stdout
        .replace_range(at..at + "Enabled: true".len(), "Enabled: false");
    diagnose(&[c]).hosts.remove(0)
}

#[test]
fn an_esxcli_change_is_a_step_by_hand_with_its_vcenter_forms() {
    let h = disabled_vmknic_host("esx01");
    assert_eq!(
        failing(&h, "pvrdma-vmknic-valid").summary,
        "vmk1 exists but is disabled"
    );
    let d = of(vec![h]);
    let plan = Plan::of(&d);
    assert_eq!(
        plan.hosts[0].steps,
        [Step::Manual {
            check: CheckId::PvrdmaVmknicValid,
            what: "vmk1 exists but is disabled".to_string(),
            lines: vec![
                "PowerCLI: (Get-EsxCli -VMHost (Get-VMHost -Name 'esx01') -V2).network.ip.interface.set.Invoke(@{ enabled = $true; interfacename = 'vmk1' })".to_string(),
                "govc: govc host.esxcli -host esx01 network ip interface set -e true -i vmk1".to_string(),
                "ESXi shell: esxcli network ip interface set -e true -i vmk1".to_string(),
            ],
        }]
    );
    let text = ansible::render(&d, &options(Some("vc01")));
    assert!(host_entries(&yaml(&text)).is_empty(), "{text}");
    assert!(
        text.contains("#   govc: govc host.esxcli -host esx01 network ip interface set -e true -i vmk1"),
        "{text}"
    );
    let script = powercli::render(&d, &options(Some("vc01")));
    assert!(
        !script
            .lines()
            .any(|l| !l.trim_start().starts_with('#') && l.contains("Get-EsxCli")),
        "{script}"
    );
}

#[test]
fn manual_steps_keep_the_reports_order_and_the_fleet_comes_first() {
    let mut d = of(vec![api_host_at("esx02", "hpc-hw11", "vmx-11")]);
    d.fleet_checks.push(Check {
        remedy: Some(Remedy {
            advice: Some("put the PVRDMA vmknics in one subnet".to_string()),
            ..Remedy::default()
        }),
        ..Check::new(CheckId::VmknicSubnets, Status::Fail, "two subnets")
    });
    let plan = Plan::of(&d);
    let order: Vec<String> = plan.hosts[0]
        .steps
        .iter()
        .map(|s| match s {
            Step::Apply { check, .. } | Step::Manual { check, .. } => check.to_string(),
        })
        .collect();
    assert_eq!(
        order,
        [
            "pvrdma-vmknic-tagged",
            "firewall-pvrdma",
            "vm-hardware-version",
            "vm-memory-reserved"
        ]
    );
    let applied: Vec<bool> = plan.hosts[0]
        .steps
        .iter()
        .map(|s| matches!(s, Step::Apply { .. }))
        .collect();
    assert_eq!(applied, [true, true, false, true]);
    for text in [
        ansible::render(&d, &options(None)),
        powercli::render(&d, &options(None)),
    ] {
        let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle}\n{text}"));
        let fleet = at("BY HAND across hosts, vmknic-subnets");
        let steps = [
            at("pvrdma-vmknic-tagged: Net.PVRDMAVmknic = 'vmk1'"),
            at("firewall-pvrdma: firewall ruleset pvrdma"),
            at("BY HAND on esx02, vm-hardware-version (hpc-hw11"),
            at("vm-memory-reserved: VM hpc-hw11"),
        ];
        assert!(fleet < steps[0], "{text}");
        assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}\n{text}");
    }
}

#[test]
fn without_vcenter_each_host_is_addressed_by_the_name_the_run_used() {
    let d = of(vec![
        sample_host("firewall-pvrdma-disabled", "esx01.lab.example"),
        api_host("10.0.0.12", "hpc-node07"),
    ]);
    let text = ansible::render(&d, &options(None));
    let doc = yaml(&text);
    let entries = host_entries(&doc);
    let apis: Vec<(&str, &str)> = entries
        .iter()
        .map(|t| {
            let v = &t["ansible.builtin.add_host"];
            (
                v["pvrdma_esxi"].as_str().expect("esxi"),
                v["pvrdma_api"].as_str().expect("api"),
            )
        })
        .collect();
    assert_eq!(
        apis,
        [("esx01.lab.example", "esx01.lab.example"), ("10.0.0.12", "10.0.0.12")]
    );
    assert!(entries
        .iter()
        .all(|t| t["ansible.builtin.add_host"]["pvrdma_api_port"].is_badvalue()));
    // A host's own API lists only its VMs: the VM is not held to a host name.
    let vm = &entries[1]["ansible.builtin.add_host"]["pvrdma_vm_memory"][0];
    assert!(vm["on_host"].is_null(), "{text}");
    assert!(
        text.contains("# It addresses each ESXi host's own vSphere API"),
        "{text}"
    );

    let script = powercli::render(&d, &options(None));
    let connects: Vec<&str> = script.lines().filter(|l| l.contains("Connect-VIServer")).collect();
    assert_eq!(
        connects,
        [
            "$server = Connect-VIServer -Server 'esx01.lab.example' -Credential $credential",
            "$server = Connect-VIServer -Server '10.0.0.12' -Credential $credential",
        ]
    );
    assert!(!script.contains("Get-VMHost -Server $server -Name"), "{script}");

    // With vCenter: one connection, every host by its name there, the port kept.
    let script = powercli::render(&d, &options(Some("vc01.example.com:8443")));
    let connects: Vec<&str> = script.lines().filter(|l| l.contains("Connect-VIServer")).collect();
    assert_eq!(
        connects,
        ["$server = Connect-VIServer -Server 'vc01.example.com' -Port 8443 -Credential $credential"]
    );
    assert!(
        script.contains("Get-VMHost -Server $server -Name '10.0.0.12'"),
        "{script}"
    );
    let text = ansible::render(&d, &options(Some("vc01.example.com:8443")));
    let doc = yaml(&text);
    for t in host_entries(&doc) {
        assert_eq!(
            t["ansible.builtin.add_host"]["pvrdma_api"].as_str(),
            Some("vc01.example.com")
        );
        assert_eq!(t["ansible.builtin.add_host"]["pvrdma_api_port"].as_i64(), Some(8443));
    }
}

#[test]
fn the_vcenter_address_splits_into_host_and_port() {
    for (given, host, port) in [
        ("vc01", "vc01", None),
        ("vc01:8443", "vc01", Some(8443)),
        ("https://vc01.example.com/sdk", "vc01.example.com", None),
        ("[fd00::1]:443", "fd00::1", Some(443)),
        ("fd00::1", "fd00::1", None),
    ] {
        assert_eq!(split_port(given), (host.to_string(), port), "{given}");
    }
}

#[test]
fn hosts_not_diagnosed_are_named_and_get_nothing() {
    let failure = crate::capture::Failure::of_host(
        crate::capture::ErrorKind::Unreachable,
        "esx09",
        "cannot connect to 10.0.0.9:443",
    );
    let d = of(vec![HostDiagnosis::not_diagnosed(
        "esx09",
        crate::diagnose::HostStatus::Unreachable,
        failure,
        Vec::new(),
    )]);
    let plan = Plan::of(&d);
    assert!(plan.hosts.is_empty());
    assert_eq!(plan.not_diagnosed.len(), 1);
    for text in [
        ansible::render(&d, &options(None)),
        powercli::render(&d, &options(None)),
    ] {
        assert!(
            text.contains(
                "# esx09 was not diagnosed (esx09: cannot connect to 10.0.0.9:443): nothing is planned for it."
            ),
            "{text}"
        );
    }
}

/// A fleet of every kind of step: changes on a host and its VM (by moid), a choice, an
/// esxcli change, steps by hand, a fleet check and a host that was not reached.
fn mixed_fleet() -> Diagnosis {
    let mut d = diagnose(&captures("vmknic-subnets-differ"));
    let mut teamed = sample_host("dvs-two-uplinks", "esx04");
    teamed.host = "esx04".to_string();
    d.hosts = vec![
        api_host_at("esx01", "hpc-node07", "vmx-11"),
        sample_host("firewall-pvrdma-disabled", "esx02"),
        sample_host("roce-version-mismatch", "esx03"),
        disabled_vmknic_host("esx06"),
        teamed,
        HostDiagnosis::not_diagnosed(
            "esx05",
            crate::diagnose::HostStatus::Unreachable,
            crate::capture::Failure::of_host(
                crate::capture::ErrorKind::Unreachable,
                "esx05",
                "cannot connect to 10.0.0.5:443",
            ),
            Vec::new(),
        ),
    ];
    d
}

fn reviewed(text: String) -> String {
    text.replace(env!("CARGO_PKG_VERSION"), "VERSION")
}

#[test]
fn reviewed_plans_with_vcenter() {
    let d = mixed_fleet();
    let o = options(Some("vc01.example.com"));
    insta::assert_snapshot!("vcenter.ansible", reviewed(ansible::render(&d, &o)));
    insta::assert_snapshot!("vcenter.powercli", reviewed(powercli::render(&d, &o)));
}

#[test]
fn reviewed_plans_without_vcenter() {
    let d = mixed_fleet();
    let o = options(None);
    insta::assert_snapshot!("hosts.ansible", reviewed(ansible::render(&d, &o)));
    insta::assert_snapshot!("hosts.powercli", reviewed(powercli::render(&d, &o)));
}

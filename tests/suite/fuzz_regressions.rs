//! Regression tests for what `cargo fuzz` found outside the parsers (a parser's go in
//! `parsers/tests/`). Each names the invariant the fuzzer broke; the
//! crashing input itself is kept in `fuzz/regressions/<target>/` and replayed by
//! `tests/suite/fuzz_corpus.rs`.
use pvrdma_engine::capture::{CaptureSource, ErrorKind, Failure, HostCapture, RawOutput};
use pvrdma_engine::diagnose::{diagnose_host, Status};

const RULESETS: &str = "\
Name                         Enabled  Enable/Disable configurable  Allowed IP configurable
---------------------------  -------  ---------------------------  -----------------------
sshServer                       true                         true                     true
pvrdma                          true                         true                     true
";

fn output(id: &str, stdout: &str) -> RawOutput {
    RawOutput {
        stdout: stdout.to_string(),
        exit_status: Some(0),
        ..RawOutput::new(id, id)
    }
}

/// Found by the `diagnosis` target: with the pvrdma ruleset enabled, `firewall-pvrdma`
/// passed and cited `esxcli network firewall get` as its evidence although that command
/// had failed. The pass does not need the firewall state; it must not cite a failed
/// command, and it must still cite it when it was read.
#[test]
fn firewall_pass_does_not_cite_a_failed_firewall_get() {
    let mut capture = HostCapture::new("esx01", CaptureSource::Live);
    let mut failed = output("esxcli_network_firewall_get", "");
    failed.exit_status = None;
    failed.failure = Some(Failure::new(
        ErrorKind::Timeout,
        "did not finish within --command-timeout 60s",
    ));
    capture.outputs.insert(failed.id.clone(), failed);
    let rulesets = output("esxcli_network_firewall_ruleset_list", RULESETS);
    capture.outputs.insert(rulesets.id.clone(), rulesets);

    let check = |capture: &HostCapture| {
        diagnose_host(capture)
            .checks
            .into_iter()
            .find(|c| c.id == "firewall-pvrdma")
            .unwrap()
    };
    let c = check(&capture);
    assert_eq!(c.status, Status::Pass, "{c:?}");
    let cited: Vec<&str> = c.evidence.iter().map(|e| e.command).collect();
    assert_eq!(cited, ["esxcli_network_firewall_ruleset_list"]);

    let read = output(
        "esxcli_network_firewall_get",
        "   Default Action: DROP\n   Enabled: true\n   Loaded: true\n",
    );
    capture.outputs.insert(read.id.clone(), read);
    let c = check(&capture);
    assert_eq!(c.status, Status::Pass, "{c:?}");
    let cited: Vec<&str> = c.evidence.iter().map(|e| e.command).collect();
    assert_eq!(
        cited,
        ["esxcli_network_firewall_get", "esxcli_network_firewall_ruleset_list"]
    );
}

/// A running VM with one PVRDMA adapter, as the live `.vmx` inventory reports it.
const ONE_ADAPTER_VMX: &str = "\
==> /vmfs/volumes/ds1/hpc01/hpc01.vmx <==
virtualHW.version = \"19\"
memSize = \"16384\"
sched.mem.pin = \"TRUE\"
displayName = \"hpc01\"
ethernet1.virtualDev = \"vrdma\"
ethernet1.present = \"TRUE\"
<== /vmfs/volumes/ds1/hpc01/hpc01.vmx exit 0 ==>
";

fn check_of(capture: &HostCapture, id: &str) -> pvrdma_engine::diagnose::Check {
    diagnose_host(capture)
        .checks
        .into_iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no check {id}"))
}

/// Found by the `diagnosis` target: `vm-pvrdma-adapter-count` passed (one adapter per VM
/// is allowed on every release) and cited `esxcli system version get`, which had timed
/// out. It cites the release only when it read one.
#[test]
fn adapter_count_pass_does_not_cite_an_unread_release() {
    let mut capture = HostCapture::new("esx01", CaptureSource::VmSupport);
    capture.vmx_files.push(pvrdma_engine::capture::VmxFile {
        path: "vmfs/volumes/ds1/hpc01/hpc01.vmx".to_string(),
        content: ONE_ADAPTER_VMX
            .lines()
            .filter(|l| !l.contains("=="))
            .collect::<Vec<_>>()
            .join("\n"),
    });
    let mut version = output("esxcli_system_version_get", "   Product: VMware ESXi\n");
    version.exit_status = None;
    version.failure = Some(Failure::new(
        ErrorKind::Timeout,
        "did not finish within --command-timeout 60s",
    ));
    capture.outputs.insert(version.id.clone(), version);
    let c = check_of(&capture, "vm-pvrdma-adapter-count");
    assert_eq!(c.status, Status::Pass, "{c:?}");
    assert!(
        c.evidence.iter().all(|e| e.command != "esxcli_system_version_get"),
        "{c:?}"
    );

    let read = output(
        "esxcli_system_version_get",
        "   Product: VMware ESXi\n   Version: 8.0.2\n   Build: Releasebuild-22380479\n   Update: 2\n   Patch: 0\n",
    );
    capture.outputs.insert(read.id.clone(), read);
    let c = check_of(&capture, "vm-pvrdma-adapter-count");
    assert_eq!(c.status, Status::Pass, "{c:?}");
    assert!(
        c.evidence.iter().any(|e| e.command == "esxcli_system_version_get"),
        "{c:?}"
    );
}

/// The live `.vmx` inventory broke off after its first VM: the VMs after the cut have no
/// section at all, so the VM checks cannot pass on the sections that did arrive; they are
/// `unknown` and name the event, and cite the inventory command.
#[test]
fn vm_checks_are_unknown_when_the_vmx_inventory_broke_off() {
    let mut capture = HostCapture::new("esx01", CaptureSource::Live);
    let mut inventory = output("vmx_pvrdma_lines", ONE_ADAPTER_VMX);
    inventory.command = pvrdma_engine::catalogue::vmx_lines_command(&[
        "/vmfs/volumes/ds1/hpc01/hpc01.vmx".to_string(),
        "/vmfs/volumes/ds1/hpc02/hpc02.vmx".to_string(),
    ])
    .expect("inventory command");
    let whole = inventory.clone();
    inventory.exit_status = None;
    inventory.timeout_hit = true;
    inventory.failure = Some(Failure::new(
        ErrorKind::Timeout,
        "did not finish within --command-timeout 60s",
    ));
    capture.outputs.insert(inventory.id.clone(), inventory);
    for id in ["vm-hardware-version", "vm-memory-reserved", "vm-pvrdma-adapter-count"] {
        let c = check_of(&capture, id);
        assert_eq!(c.status, Status::Unknown, "{c:?}");
        assert!(c.summary.contains("--command-timeout 60s"), "{c:?}");
        assert!(c.evidence.iter().any(|e| e.command == "vmx_pvrdma_lines"), "{c:?}");
    }

    // Whole, but without the second VM's section: that VM is unknown too.
    capture.outputs.insert(whole.id.clone(), whole.clone());
    let c = check_of(&capture, "vm-hardware-version");
    assert_eq!(c.status, Status::Unknown, "{c:?}");
    assert!(c.summary.contains("hpc02.vmx"), "{c:?}");

    // Both sections: the checks pass.
    let mut both = whole;
    both.stdout.push_str(&ONE_ADAPTER_VMX.replace("hpc01", "hpc02"));
    capture.outputs.insert(both.id.clone(), both);
    let c = check_of(&capture, "vm-hardware-version");
    assert_eq!(c.status, Status::Pass, "{c:?}");
}

/// Found by the `diagnosis` target: on a capture read back from a bundle, a `.vmx`
/// inventory recorded as failed still let the VM checks pass on the sections it held
/// (the failure was not an event of the live outcome). A failed or cut inventory makes
/// them `unknown`, whatever the capture's source.
#[test]
fn vm_checks_do_not_pass_on_a_failed_vmx_inventory_from_a_bundle() {
    let mut capture = HostCapture::new("esx01", CaptureSource::VmSupport);
    let mut inventory = output("vmx_pvrdma_lines", ONE_ADAPTER_VMX);
    inventory.exit_status = Some(255);
    inventory.failure = Some(Failure::new(ErrorKind::CommandFailed, "the SSH channel closed early"));
    capture.outputs.insert(inventory.id.clone(), inventory);
    for id in ["vm-hardware-version", "vm-memory-reserved", "vm-pvrdma-adapter-count"] {
        let c = check_of(&capture, id);
        assert_eq!(c.status, Status::Unknown, "{c:?}");
        assert!(c.summary.contains("the SSH channel closed early"), "{c:?}");
    }
}

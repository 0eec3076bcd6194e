use super::*;
use crate::capture::{CaptureSource, HostCapture, RawOutput, VmxFile};

fn out(id: &str, text: &str) -> RawOutput {
    let mut o = RawOutput::new(id, id);
    o.stdout = text.to_string();
    o.exit_status = Some(0);
    o
}

/// A live host (ESXi `version`) running one VM whose `.vmx` is `vmx`, with vsish's
/// `Native endpoints supported` for its adapter 0.
fn facts(version: &str, vmx: &str, native_live: u8) -> HostFacts {
    let mut c = HostCapture::new("esx01", CaptureSource::Live);
    let path = "/vmfs/volumes/ds/hpc/hpc.vmx";
    for (id, text) in [
        (cat::SYSTEM_VERSION, format!("   Product: VMware ESXi\n   Version: {version}\n")),
        (
            cat::VM_PROCESS_LIST,
            format!("hpc\n   World ID: 2101874\n   Display Name: hpc\n   Config File: {path}\n"),
        ),
        (
            cat::PVRDMA_PROPERTIES,
            format!("==> 2101874_0 <==\nPVRDMA Device Properties {{\n   Physical HCA available:1\n   Native endpoints supported:{native_live}\n   RoCE version:2\n}}\n<== 2101874_0 exit 0 ==>\n"),
        ),
    ] {
        c.outputs.insert(id.to_string(), out(id, &text));
    }
    c.vmx_files.push(VmxFile {
        path: path.to_string(),
        content: vmx.to_string(),
    });
    crate::facts::build(&c)
}

const VMX: &str = "displayName = \"hpc\"\nvirtualHW.version = \"18\"\nmemSize = \"8192\"\nsched.mem.min = \"8192\"\nethernet1.virtualDev = \"vrdma\"\nethernet1.present = \"TRUE\"\nvrdma1.nativeEndpointSupport = \"TRUE\"\n";

fn status(checks: &[Check], id: &str) -> Status {
    checks
        .iter()
        .find(|c| c.id.id() == id)
        .map_or(Status::Unknown, |c| c.status)
}

/// The VM checks the registry runs on a host with these facts.
fn checks(f: &HostFacts) -> Vec<Check> {
    let ctx = Context::new(f);
    let checks = crate::diagnose::host_checks(&ctx);
    checks
        .into_iter()
        .filter(|c| c.id.family() == crate::diagnose::Family::VmConfig)
        .collect()
}

#[test]
fn native_endpoints_follow_hardware_release_and_what_vsish_says() {
    let ok = checks(&facts("7.0.3", VMX, 1));
    assert_eq!(status(&ok, "vm-native-endpoints"), Status::Pass);
    assert_eq!(
        status(&ok, "vm-memory-reserved"),
        Status::Pass,
        "min == memSize is enough"
    );
    let not_live = checks(&facts("7.0.3", VMX, 0));
    assert_eq!(status(&not_live, "vm-native-endpoints"), Status::Warn);
    let old_release = checks(&facts("7.0.0", VMX, 0));
    assert_eq!(status(&old_release, "vm-native-endpoints"), Status::Fail);
    let old_hw = checks(&facts("8.0.2", &VMX.replace("\"18\"", "\"17\""), 0));
    assert_eq!(status(&old_hw, "vm-native-endpoints"), Status::Fail);
    let none = checks(&facts(
        "8.0.2",
        &VMX.replace("vrdma1.nativeEndpointSupport = \"TRUE\"\n", ""),
        0,
    ));
    assert_eq!(status(&none, "vm-native-endpoints"), Status::Pass);
}

#[test]
fn adapter_limit_is_one_before_7_0_2_and_ten_from_it() {
    let two = format!("{VMX}ethernet2.virtualDev = \"vrdma\"\n");
    assert_eq!(
        status(&checks(&facts("7.0.1", &two, 1)), "vm-pvrdma-adapter-count"),
        Status::Fail
    );
    assert_eq!(
        status(&checks(&facts("7.0.2", &two, 1)), "vm-pvrdma-adapter-count"),
        Status::Pass
    );
    let eleven: String = (0..11)
        .map(|n| format!("ethernet{n}.virtualDev = \"vrdma\"\n"))
        .collect();
    assert_eq!(
        status(
            &checks(&facts("8.0.2", &format!("{VMX}{eleven}"), 1)),
            "vm-pvrdma-adapter-count"
        ),
        Status::Fail
    );
    // A present = FALSE adapter does not count.
    let absent = format!("{VMX}ethernet2.virtualDev = \"vrdma\"\nethernet2.present = \"FALSE\"\n");
    assert_eq!(
        status(&checks(&facts("7.0.1", &absent, 1)), "vm-pvrdma-adapter-count"),
        Status::Pass
    );
}

#[test]
fn hardware_and_memory_fail_and_missing_keys_are_unknown() {
    let low = VMX.replace("\"18\"", "\"11\"");
    assert_eq!(
        status(&checks(&facts("8.0.2", &low, 0)), "vm-hardware-version"),
        Status::Fail
    );
    let no_hw = VMX.replace("virtualHW.version = \"18\"\n", "");
    assert_eq!(
        status(&checks(&facts("8.0.2", &no_hw, 0)), "vm-hardware-version"),
        Status::Unknown
    );
    let partial = VMX.replace("sched.mem.min = \"8192\"", "sched.mem.min = \"1024\"");
    assert_eq!(
        status(&checks(&facts("8.0.2", &partial, 0)), "vm-memory-reserved"),
        Status::Fail
    );
    let pinned = format!("{partial}sched.mem.pin = \"TRUE\"\n");
    assert_eq!(
        status(&checks(&facts("8.0.2", &pinned, 0)), "vm-memory-reserved"),
        Status::Pass
    );
    let broken = checks(&facts("8.0.2", "garbage\n", 0));
    assert_eq!(
        status(&broken, "vm-hardware-version"),
        Status::Unknown,
        "a .vmx that does not parse hides the answer"
    );
    // No .vmx facts at all: the VM checks are not run.
    let mut c = HostCapture::new("esx01", CaptureSource::Live);
    c.outputs.insert(
        cat::SYSTEM_VERSION.to_string(),
        out(cat::SYSTEM_VERSION, "   Version: 8.0.2\n"),
    );
    assert!(checks(&crate::facts::build(&c)).is_empty());
}

//! Captures read through vCenter's vSphere API instead of over SSH: the property
//! collector's answer for one host and its VMs, kept as text like any command output, so
//! a support bundle stores it, `--redact` masks it and `analyze` parses it again through
//! the same code.
use super::{CaptureSource, HostCapture, Outcome, RawOutput};
use crate::catalogue as cat;

/// How the bundle's manifest and `-v` name what was asked: the managed object and the
/// properties read (the vSphere Web Services API reference names them).
const HOST_REQUEST: &str =
    "RetrievePropertiesEx HostSystem name config.product config.network config.firewall config.option vm";
const VM_REQUEST: &str = "RetrievePropertiesEx VirtualMachine (HostSystem.vm) name runtime.host runtime.powerState config.version config.hardware.memoryMB config.memoryAllocation config.memoryReservationLockedToMax config.hardware.device";

/// One host's capture from the API: its `ObjectContent` and its VMs' (`vm_xml`, each one
/// `<objects>` element), read in `duration_ms` (the host's share of the paged calls).
pub fn from_vsphere(host: &str, host_xml: String, vm_xml: &[String], duration_ms: u64) -> HostCapture {
    let mut capture = HostCapture::new(host, CaptureSource::VsphereApi);
    add_vsphere(&mut capture, host_xml, vm_xml, duration_ms);
    capture
}

/// Adds the API's answers to a capture (one whose SSH collection failed keeps its error:
/// the report says both why SSH did not answer and what the API did).
pub fn add_vsphere(capture: &mut HostCapture, host_xml: String, vm_xml: &[String], duration_ms: u64) {
    capture.outputs.insert(
        cat::VSPHERE_HOST_CONFIG.to_string(),
        answer(cat::VSPHERE_HOST_CONFIG, HOST_REQUEST, host_xml, duration_ms),
    );
    capture.outputs.insert(
        cat::VSPHERE_VM_CONFIG.to_string(),
        answer(cat::VSPHERE_VM_CONFIG, VM_REQUEST, vm_xml.join("\n"), 0),
    );
}

fn answer(id: &str, request: &str, text: String, duration_ms: u64) -> RawOutput {
    RawOutput {
        stdout: text,
        exit_status: Some(0),
        duration_ms,
        outcome: Some(Outcome::Exited { code: 0 }),
        ..RawOutput::new(id, request)
    }
}

impl HostCapture {
    /// Whether this capture holds the host's configuration as the vSphere API gave it.
    pub fn has_api_config(&self) -> bool {
        self.outputs.contains_key(cat::VSPHERE_HOST_CONFIG)
    }
}

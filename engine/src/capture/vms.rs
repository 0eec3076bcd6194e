//! What a VM-first run chose (`--vm`, an exporter's `vm:` group), as vCenter's inventory
//! placed the VMs: part of what a run records with its captures (a support bundle's
//! manifest), so `analyze` narrows its report the same way.
use serde::{Deserialize, Serialize};

/// A chosen VM on a host the run left out: where the inventory placed it, and why that
/// host was not diagnosed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VmLeftOut {
    /// The VM's name.
    pub vm: String,
    /// The host the inventory placed it on.
    pub host: String,
    /// Why the host was left out: `in maintenance mode`, `disconnected`, `not responding`.
    pub reason: String,
}

/// The VMs a VM-first run chose (`--vm`, an exporter's `vm:` group), as the inventory
/// placed them: those on the hosts the run diagnoses by name, and those on hosts it left
/// out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmChoice {
    /// The chosen VMs on the hosts the run diagnoses.
    pub vms: Vec<String>,
    /// The chosen VMs on hosts it left out.
    pub left_out: Vec<VmLeftOut>,
}

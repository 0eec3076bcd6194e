use crate::ParseError;
use serde::Serialize;

/// A node name under `/vmkModules/vrdma/pvrdmaDevices/`: `<World ID>_<adapter index>/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct PvrdmaDeviceId {
    pub world_id: u64,
    pub index: u32,
}

/// The `PVRDMA Device Properties { ... }` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PvrdmaProperties {
    /// `VMM leader ID of VM`
    pub vmm_leader_id: Option<u64>,
    pub adapter_index: Option<u32>,
    pub mac_address: Option<String>,
    /// `Physical HCA available` — the verdict line. `None` when missing or not 0/1.
    pub physical_hca_available: Option<bool>,
    pub namespace_allocated: Option<bool>,
    pub native_endpoints_supported: Option<bool>,
    pub prefer_roce_v1: Option<bool>,
    pub roce_version: Option<u32>,
    pub active_mtu: Option<u32>,
    /// Every `key:value` member in order, including the ones above.
    pub fields: Vec<(String, String)>,
}

/// One section of the batched properties query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PvrdmaPropertiesSection {
    pub device: PvrdmaDeviceId,
    /// The parsed block, or the vsish error text / parse error message for this device.
    pub properties: Result<PvrdmaProperties, String>,
}

pub fn parse_pvrdma_device_ls(input: &str) -> Result<Vec<PvrdmaDeviceId>, ParseError> {
    let _ = input;
    Err(crate::error::pending("vsish_pvrdma_devices_ls"))
}

pub fn parse_pvrdma_properties(input: &str) -> Result<PvrdmaProperties, ParseError> {
    let _ = input;
    Err(crate::error::pending("vsish_pvrdma_properties"))
}

pub fn parse_pvrdma_properties_batch(
    input: &str,
) -> Result<Vec<PvrdmaPropertiesSection>, ParseError> {
    let _ = input;
    Err(crate::error::pending("vsish_pvrdma_properties"))
}

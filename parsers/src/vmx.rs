use crate::ParseError;
use serde::Serialize;

/// What a `.vmx` file says about a VM's PVRDMA adapters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmxConfig {
    pub display_name: Option<String>,
    pub hardware_version: Option<u32>,
    pub memsize_mb: Option<u64>,
    pub mem_min_mb: Option<u64>,
    pub mem_pin: Option<bool>,
    pub pvrdma_adapters: Vec<VmxAdapter>,
}

/// An `ethernetN` whose `virtualDev` is `vrdma`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmxAdapter {
    pub ethernet_index: u32,
    pub present: Option<bool>,
    pub mac_address: Option<String>,
    pub network_name: Option<String>,
}

pub fn parse_vmx(input: &str) -> Result<VmxConfig, ParseError> {
    let _ = input;
    Err(crate::error::pending("vmx"))
}

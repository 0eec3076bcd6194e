//! The checks, one file per [`registry::Family`]: the host checks, and (in `fleet/`) the
//! checks across hosts. [`registry`] lists every check with the function that judges it.
pub(super) mod device;
pub(super) mod firewall;
pub(super) mod lossless;
pub(super) mod mtu;
pub mod registry;
pub(super) mod roce;
pub(super) mod switch;
pub(super) mod vm_config;
pub(super) mod vmknic;

//! Host checks, one file per family.
pub(super) mod device;
pub(super) mod firewall;
pub(super) mod mtu;
pub mod registry;
pub(super) mod roce;
pub(super) mod switch;
pub(super) mod vmknic;

//! The fleet from vCenter: reads datacenters, clusters, ESXi hosts and VMs through the
//! vSphere Web Services API (SOAP at `/sdk`, every vCenter 6.7 to 8), and selects the hosts
//! a run is about, by cluster or by the VMs running on them.
//!
//! Pure parts first: [`endpoint`] (the address, the certificate thumbprint, the trust
//! policy), [`inventory`] (the model), [`select`] (clusters and VM patterns to hosts) and
//! [`error`]. None of them does I/O.
#![forbid(unsafe_code)]

pub mod endpoint;
pub mod error;
pub mod inventory;
pub mod select;

pub use endpoint::{Endpoint, EndpointError, Thumbprint, ThumbprintError, Trust};
pub use error::Error;
pub use inventory::{decode_name, ConnectionState, Host, Inventory, PowerState, Vm};
pub use select::{
    select, ClusterRef, SelectError, Selected, SelectedHost, SelectedVm, Selection, SelectorError, SkipReason,
    SkippedHost, VmPattern,
};

//! The fleet from vCenter: reads datacenters, clusters, ESXi hosts and VMs through the
//! vSphere Web Services API (SOAP at `/sdk`, every vCenter 6.7 to 8), and selects the hosts
//! a run is about, by cluster or by the VMs running on them.
//!
//! Pure parts: [`endpoint`] (the address, the certificate thumbprint, the trust policy),
//! [`inventory`] (the model), [`select`] (clusters and VM patterns to hosts), [`error`],
//! and the SOAP messages (`soap`, `xml`) with the inventory's assembly (`assemble`).
//! I/O: `tls` (the verified TLS configuration), `http` (one kept-alive connection) and
//! [`client`] (sessions, the paged read, [`read_inventory`]).
#![forbid(unsafe_code)]

mod assemble;
pub mod client;
pub mod config;
pub mod endpoint;
pub mod error;
mod http;
pub mod inventory;
pub mod select;
mod soap;
mod tls;
mod validity;
mod xml;

pub use client::{check_endpoint, read_configuration, read_configuration_each, read_inventory, Client, Config};
pub use config::HostConfig;
pub use secrecy::SecretString;

pub use endpoint::{Endpoint, EndpointError, Thumbprint, ThumbprintError, Trust};
pub use error::{CertificateProblem, Error, Stage, Vocabulary};
pub use inventory::{decode_name, ConnectionState, Host, Inventory, PowerState, Vm};
pub use select::{
    select, ClusterRef, SelectError, Selected, SelectedHost, SelectedVm, Selection, SelectorError, SkipReason,
    SkippedHost, VmPattern,
};

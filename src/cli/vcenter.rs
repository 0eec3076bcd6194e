//! Hosts from vCenter: the options that read a cluster's or a VM's hosts from the
//! inventory, and `hosts`, which prints them for other tools.
use clap::{Args, ValueEnum};
use pvrdma_vsphere::{ClusterRef, Endpoint, Thumbprint, VmPattern};
use std::path::PathBuf;

/// Where the hosts come from when vCenter knows them. The account needs only a read-only
/// role; its password comes from PVRDMA_DOCTOR_VCENTER_PASSWORD, --vcenter-password-file or
/// a prompt on a terminal, never from the command line.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Hosts from vCenter")]
pub(crate) struct VcenterArgs {
    /// Read the hosts from this vCenter's inventory instead of a host list: `vc01`,
    /// `vc01:8443` or `https://vc01/sdk` (HTTPS only; the certificate is always verified).
    #[arg(long, value_name = "URL", value_parser = parse_endpoint)]
    pub(crate) vcenter: Option<Endpoint>,
    /// The vCenter account, e.g. `monitor@vsphere.local` (a read-only role is enough);
    /// without it, PVRDMA_DOCTOR_VCENTER_USER.
    // Not clap's `env`: a value from the environment would count as given, so a user
    // exported in a profile would make every run without --vcenter a usage error.
    #[arg(long, value_name = "USER", requires = "vcenter", value_parser = parse_user)]
    pub(crate) vcenter_user: Option<String>,
    /// Read the vCenter password from FILE (its first line) instead of
    /// PVRDMA_DOCTOR_VCENTER_PASSWORD or a prompt.
    #[arg(long, value_name = "FILE", requires = "vcenter")]
    pub(crate) vcenter_password_file: Option<PathBuf>,
    /// Trust the vCenter certificate when this CA (PEM, e.g. the VMCA root from the
    /// vCenter landing page) signed it, instead of the system's roots.
    #[arg(
        long,
        value_name = "FILE",
        requires = "vcenter",
        conflicts_with = "vcenter_thumbprint"
    )]
    pub(crate) vcenter_ca: Option<PathBuf>,
    /// Trust exactly the vCenter certificate with this SHA-256 thumbprint, in the colon
    /// form vSphere shows (`AA:BB:…`); an unknown certificate is refused with its own.
    #[arg(long, value_name = "SHA256", requires = "vcenter", value_parser = parse_thumbprint)]
    pub(crate) vcenter_thumbprint: Option<Thumbprint>,
    /// Only the hosts of this cluster (repeatable): `NAME`, `DATACENTER/NAME` where two
    /// datacenters have a cluster of that name, or its inventory path as `govc find`
    /// prints it (`/DATACENTER/host/FOLDER/NAME`) where folders must tell them apart.
    #[arg(long, value_name = "NAME", requires = "vcenter", value_parser = parse_cluster)]
    pub(crate) cluster: Vec<ClusterRef>,
    /// Only the hosts these VMs run on, and only these VMs' adapters and the transports
    /// between them (repeatable): an exact name or a `*`/`?` glob; brackets, spaces and
    /// colons are literal.
    #[arg(long, value_name = "PATTERN", requires = "vcenter", value_parser = parse_vm)]
    pub(crate) vm: Vec<VmPattern>,
    /// How long each vSphere API request may take (connection and TLS handshake
    /// included) before the run gives up on vCenter and exits 3: `30s`, `2m`. A loaded
    /// vCenter or a large inventory may need more.
    #[arg(long, value_name = "DURATION", default_value = "30s", requires = "vcenter", value_parser = parse_request_timeout)]
    pub(crate) vcenter_timeout: std::time::Duration,
    /// Also take hosts in maintenance mode (skipped otherwise, and named on stderr).
    #[arg(long, requires = "vcenter")]
    pub(crate) include_maintenance: bool,
    /// Also take hosts vCenter has as disconnected or not responding (skipped otherwise).
    #[arg(long, requires = "vcenter")]
    pub(crate) include_disconnected: bool,
}

fn parse_endpoint(s: &str) -> Result<Endpoint, String> {
    Endpoint::parse(s).map_err(|e| e.to_string())
}

/// The environment variable that names the vCenter account when --vcenter-user does not.
pub(crate) const USER_ENV: &str = "PVRDMA_DOCTOR_VCENTER_USER";

impl VcenterArgs {
    /// `--vcenter-user`, else PVRDMA_DOCTOR_VCENTER_USER (read only with `--vcenter`).
    pub(crate) fn user(&self) -> anyhow::Result<Option<String>> {
        if let Some(user) = &self.vcenter_user {
            return Ok(Some(user.clone()));
        }
        match std::env::var(USER_ENV) {
            Ok(user) => parse_user(&user)
                .map(Some)
                .map_err(|e| anyhow::anyhow!("{USER_ENV}: {e}")),
            Err(_) => Ok(None),
        }
    }
}

/// A user name: an empty one (an unset shell variable) would only be refused by vCenter,
/// after a password was asked for.
fn parse_user(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("the vCenter user is empty: give the account, e.g. `monitor@vsphere.local`".into());
    }
    Ok(s.to_string())
}

fn parse_thumbprint(s: &str) -> Result<Thumbprint, String> {
    Thumbprint::parse(s).map_err(|e| e.to_string())
}

/// `--vcenter-timeout`: a duration as `--timeout` takes it, above zero (no request
/// could finish within none).
fn parse_request_timeout(s: &str) -> Result<std::time::Duration, String> {
    match super::values::parse_duration(s)? {
        d if d.is_zero() => Err("the vCenter request timeout must be above zero, e.g. 30s".into()),
        d => Ok(d),
    }
}

fn parse_cluster(s: &str) -> Result<ClusterRef, String> {
    ClusterRef::parse(s).map_err(|e| e.to_string())
}

fn parse_vm(s: &str) -> Result<VmPattern, String> {
    VmPattern::parse(s).map_err(|e| e.to_string())
}

/// `hosts`: the hosts vCenter has for a selection, printed for other tools.
#[derive(Debug, Clone, Args)]
pub(crate) struct HostsArgs {
    #[command(flatten)]
    pub(crate) vcenter: VcenterArgs,
    /// `nodeset`: the selected hosts as one folded node set on the first line (as
    /// `nodeset -f` prints it), for `pvrdma-doctor $(pvrdma-doctor hosts …)` and
    /// `clush -w`; `json`: selected and skipped hosts with datacenter, cluster and state.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "nodeset")]
    pub(crate) format: HostsFormat,
    /// Say on stderr which vCenter is read, as whom (`hosts` logs in to no ESXi host).
    /// RUST_LOG overrides the filter.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
}

/// What `hosts` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum HostsFormat {
    /// One folded node set on one line; skipped hosts on stderr.
    Nodeset,
    /// One JSON document: selected and skipped hosts, the VMs chosen.
    Json,
}

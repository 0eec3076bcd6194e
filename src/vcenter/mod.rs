//! Hosts from vCenter: reads the inventory once per use (one session, always logged out),
//! picks the hosts of the clusters or VMs asked for, and says which it skipped and why.
//! The diagnosis itself still goes over SSH to the names vCenter gives, so ssh_config
//! applies to them as to any host typed by hand.
use anyhow::Context;
use pvrdma_engine::capture::{VmChoice, VmLeftOut};
use pvrdma_vsphere::{Config, Endpoint, SelectError, Selected, Selection, Trust};
use secrecy::SecretString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

mod api;
mod print;
pub(crate) use api::{
    add_configuration, captures as api_captures, complete_refused, read_configuration, refused, HostSink,
};
pub(crate) use print::{certificate_refusal, hosts_json, pin_apart, selection_error, skipped_lines, VsphereError};

/// The environment variable that holds the vCenter password.
pub(crate) const PASSWORD_ENV: &str = "PVRDMA_DOCTOR_VCENTER_PASSWORD";

/// Which vCenter, as whom, trusting what, and which of its hosts: the command line
/// resolved, before any I/O (the password is read when the run logs in: [`login_config`]).
#[derive(Debug, Clone)]
pub(crate) struct VcenterSetup {
    pub(crate) endpoint: Endpoint,
    pub(crate) trust: Trust,
    pub(crate) user: String,
    pub(crate) password_file: Option<PathBuf>,
    pub(crate) selection: Selection,
    /// `--vcenter-timeout`: the limit on each vSphere API request.
    pub(crate) timeout: Duration,
}

impl VcenterSetup {
    /// Where the password was read from, as [`read_password`] chooses it.
    fn password_source(&self) -> String {
        match &self.password_file {
            Some(path) => format!("the file {}", path.display()),
            None if std::env::var_os(PASSWORD_ENV).is_some_and(|v| !v.is_empty()) => {
                format!("the environment variable {PASSWORD_ENV}")
            }
            None => "the prompt".to_string(),
        }
    }

    /// A read's error for the run: a refused login also says where the password came
    /// from, since a stale PVRDMA_DOCTOR_VCENTER_PASSWORD left in a shell is the usual
    /// cause and nothing else would show it.
    pub(crate) fn explain(&self, error: pvrdma_vsphere::Error) -> anyhow::Error {
        match error {
            e @ pvrdma_vsphere::Error::Login { .. } => {
                anyhow::anyhow!("{} (read from {})", VsphereError(e), self.password_source())
            }
            e => anyhow::Error::new(VsphereError(e)),
        }
    }
}

/// The step of a run that logs in to vCenter: reads the password (see [`read_password`],
/// which may check the certificate first) into the client configuration. Taken once per
/// run: a second session (the hosts that refused SSH) logs in with what it returned, so
/// the password is never asked twice.
pub(crate) fn login_config(setup: &VcenterSetup) -> anyhow::Result<Config> {
    let password = read_password(
        &setup.endpoint,
        &setup.user,
        setup.password_file.as_deref(),
        Some((&setup.trust, setup.timeout)),
    )?;
    Ok(Config {
        endpoint: setup.endpoint.clone(),
        trust: setup.trust.clone(),
        user: setup.user.clone(),
        password,
        timeout: setup.timeout,
        page_size: Config::DEFAULT_PAGE_SIZE,
    })
}

/// The vCenter password: `--vcenter-password-file` (its first line), else
/// PVRDMA_DOCTOR_VCENTER_PASSWORD, else a prompt when stdin is a terminal. Never from an
/// argument, never printed. With `check`, the prompt comes only once vCenter answered
/// with a certificate `check` trusts (as ssh verifies a host key before it asks for a
/// password): an admin is not asked to type a password for a run about to be refused;
/// that check waits at most the request timeout given with it.
pub(crate) fn read_password(
    endpoint: &Endpoint,
    user: &str,
    file: Option<&std::path::Path>,
    check: Option<(&Trust, Duration)>,
) -> anyhow::Result<SecretString> {
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the vCenter password file {}", path.display()))?;
        warn_if_world_readable(path);
        let first = text.lines().next().unwrap_or_default();
        anyhow::ensure!(
            !first.is_empty(),
            "the vCenter password file {} is empty",
            path.display()
        );
        return Ok(SecretString::from(first.to_string()));
    }
    let from_env = std::env::var_os(PASSWORD_ENV);
    if let Some(p) = from_env.as_ref().and_then(|p| p.to_str()).filter(|p| !p.is_empty()) {
        return Ok(SecretString::from(p.to_string()));
    }
    // Set but empty (`export VAR=` in a script whose secret did not arrive): said as such,
    // since "set it" would send the admin to what is already there.
    let env = match from_env {
        Some(v) if v.is_empty() => format!("{PASSWORD_ENV} is set but empty: put the password in it"),
        Some(_) => format!("{PASSWORD_ENV} does not hold UTF-8 text"),
        None => format!("set {PASSWORD_ENV}"),
    };
    anyhow::ensure!(
        std::io::stdin().is_terminal(),
        "no password for {user} on vCenter {}: {env}, give --vcenter-password-file FILE, or run on a terminal to be asked",
        endpoint.label()
    );
    if let Some((trust, timeout)) = check {
        let runtime = crate::live::runtime()?;
        runtime
            .block_on(pvrdma_vsphere::check_endpoint(endpoint.clone(), trust.clone(), timeout))
            .map_err(VsphereError)?;
    }
    let p = rpassword::prompt_password(format!(
        "Password for {user} on vCenter {} (not echoed): ",
        endpoint.label()
    ))
    .context("cannot read the vCenter password from the terminal")?;
    // An empty line (Enter pressed at once) would only come back as a refused login.
    anyhow::ensure!(
        !p.is_empty(),
        "no password typed for {user} on vCenter {}: nothing was sent to it",
        endpoint.label()
    );
    Ok(SecretString::from(p))
}

/// Warns when every user of the machine can read the password file, as ssh refuses a
/// private key others can read (a group-readable file, `root:pvrdma-doctor 0640` for
/// the exporter's service user, is left alone).
fn warn_if_world_readable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o004 != 0 {
        eprint!(
            "{}",
            crate::terminal::stderr_message(
                "pvrdma-doctor: warning: ",
                &format!(
                    "every user of this machine can read the vCenter password file {} (mode {mode:04o}): `chmod 600 {}`",
                    path.display(),
                    path.display()
                )
            )
        );
    }
}

/// Whether `error` says vCenter could not be read (refused, unresolved, silent, or a
/// fault or server error on its side, as a loaded vCenter answers): the run then knows
/// nothing, which the exit codes call unknown (3), not a usage error (2) as a wrong
/// password, an untrusted certificate, a missing privilege or a wrong address is, which
/// only the admin can fix.
pub(crate) fn is_unreachable(error: &anyhow::Error) -> bool {
    use pvrdma_vsphere::Error as E;
    match error.downcast_ref::<VsphereError>().map(|e| &e.0) {
        Some(E::Connect { .. } | E::Timeout { .. }) => true,
        Some(E::Fault { fault, .. }) => fault != "NoPermission",
        Some(E::Http { status, .. }) => *status >= 500,
        _ => false,
    }
}

/// What a discovery found: the hosts and VMs selected from the inventory.
pub(crate) struct Discovery {
    pub(crate) selected: Selected,
    /// The chosen VMs the chosen clusters left out, which [`Selected`] does not list.
    pub(crate) outside: Vec<print::OutsideVm>,
    /// The selection, for the lines that name it.
    selection: Selection,
}

impl Discovery {
    /// Selects from `inventory` what `selection` asks for.
    pub(crate) fn of(inventory: &pvrdma_vsphere::Inventory, selection: &Selection) -> Result<Discovery, SelectError> {
        let selected = pvrdma_vsphere::select(inventory, selection)?;
        let outside = print::outside_clusters(inventory, selection, &selected);
        Ok(Discovery {
            selected,
            outside,
            selection: selection.clone(),
        })
    }

    /// Selects from `inventory` what `setup` asks for; an error names the vCenter, in the
    /// command line's words.
    pub(crate) fn select(setup: &VcenterSetup, inventory: &pvrdma_vsphere::Inventory) -> anyhow::Result<Discovery> {
        Discovery::of(inventory, &setup.selection)
            .map_err(|e| print::selection_error(&e))
            .with_context(|| format!("vCenter {}", setup.endpoint.label()))
    }

    /// What the selection left out, one line each for stderr: the hosts skipped with why,
    /// the chosen VMs that run nowhere diagnosed or outside the chosen clusters.
    pub(crate) fn lines(&self) -> Vec<String> {
        let mut lines = skipped_lines(&self.selected);
        lines.extend(self.outside.iter().map(|vm| print::outside_line(vm, &self.selection)));
        lines
    }

    /// The hosts to diagnose.
    pub(crate) fn host_names(&self) -> Vec<String> {
        self.selected.hosts.iter().map(|h| h.name.clone()).collect()
    }

    /// The VMs a VM-first run (`--vm`) reports on: the running ones, by the host vCenter
    /// has them on, a selected one or a skipped one (the report names those not
    /// diagnosed, never calls them stopped); `None` when the run is not VM-first.
    pub(crate) fn vms(&self) -> Option<VmChoice> {
        let selected = &self.selected;
        (!self.selection.vms.is_empty()).then(|| {
            let mut chosen = VmChoice::default();
            for vm in &selected.vms {
                let Some(host) = vm.host.as_deref() else { continue };
                if selected.hosts.iter().any(|s| s.name == host) {
                    chosen.vms.push(vm.name.clone());
                } else if let Some(skipped) = selected.skipped.iter().find(|s| s.name == host) {
                    chosen.left_out.push(VmLeftOut {
                        vm: vm.name.clone(),
                        host: host.to_string(),
                        reason: skipped.reason.to_string(),
                    });
                }
            }
            chosen
        })
    }
}

/// Completes at Ctrl-C. A listener that cannot be set up never fires: a read then runs
/// to its end.
async fn ctrl_c() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Reads the inventory (login, paged reads, logout, also on Ctrl-C) and selects from it.
/// `Ok(None)` when Ctrl-C stopped it.
pub(crate) fn discover(setup: &VcenterSetup, config: Config) -> anyhow::Result<Option<Discovery>> {
    let runtime = crate::live::runtime()?;
    tracing::info!(
        "reading the inventory of vCenter {} as {}",
        setup.endpoint.label(),
        setup.user
    );
    let read = runtime.block_on(pvrdma_vsphere::read_inventory(config, ctrl_c()));
    let inventory = match read {
        Ok(inventory) => inventory,
        Err(pvrdma_vsphere::Error::Cancelled { .. }) => return Ok(None),
        Err(e) => return Err(setup.explain(e)),
    };
    Discovery::select(setup, &inventory).map(Some)
}

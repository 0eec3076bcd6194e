//! `--no-ssh`: the selected hosts' configuration and their VMs' read through vCenter's
//! vSphere API, in the session that read the inventory: one request for every host, then
//! one per page, never a call per host. Each host becomes a capture like one collected over
//! SSH, so the same checks judge it and a support bundle keeps the API's answers.
use super::{Discovery, VcenterSetup};
use pvrdma_engine::capture::{self, CaptureSource, ErrorKind, Failure, HostCapture};
use pvrdma_vsphere::{Config, HostConfig, Inventory};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Instant, SystemTime};

/// What a configuration read found: the selection, and when it was read.
pub(crate) struct ApiRead {
    pub(crate) discovery: Discovery,
    pub(crate) started: SystemTime,
    pub(crate) finished: SystemTime,
}

/// Where a configuration read hands each selected host, the moment its answers are whole:
/// what the run keeps of a host (its judgement, its files in a bundle) is made then, and
/// its answers dropped, so a run holds one page of vCenter's answer, not the fleet's.
pub(crate) trait HostSink {
    /// The hosts chosen, before any of them is handed on.
    fn selected(&mut self, discovery: &Discovery);
    /// One selected host's capture, in the order vCenter's pages bring them (a host
    /// vCenter returned nothing for comes last, as a failed capture that says so).
    fn host(&mut self, capture: HostCapture);
}

/// What the read has handed on so far.
struct Handing<'a> {
    sink: &'a mut dyn HostSink,
    /// The hosts chosen, by name; each handed on once.
    chosen: BTreeSet<String>,
    handed: BTreeSet<String>,
    /// When the last host was handed on (at first, when the read began): each host's
    /// capture takes the time since as its share of the read.
    last: Instant,
}

impl Handing<'_> {
    fn hand(&mut self, config: HostConfig) {
        let name = config.name.as_str();
        if !self.chosen.contains(name) || self.handed.contains(name) {
            return;
        }
        let share = u64::try_from(self.last.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last = Instant::now();
        self.handed.insert(config.name.clone());
        let capture = capture::from_vsphere(&config.name, config.host_xml, &config.vm_xml, share);
        self.sink.host(capture);
    }
}

/// Reads the inventory, selects from it and reads the selected hosts' configuration, in
/// one session (logged out on every path, also on Ctrl-C), handing each host to `sink` as
/// it is read. `Ok(None)` when Ctrl-C stopped it. After an error, what `sink` was handed is
/// not the whole selection.
pub(crate) fn read_configuration(
    setup: &VcenterSetup,
    config: Config,
    sink: &mut dyn HostSink,
) -> anyhow::Result<Option<ApiRead>> {
    let started = SystemTime::now();
    let runtime = crate::live::runtime()?;
    tracing::info!(
        "reading the inventory and the hosts' configuration from vCenter {} as {}",
        setup.endpoint.label(),
        setup.user
    );
    let handing = RefCell::new(Handing {
        sink,
        chosen: BTreeSet::new(),
        handed: BTreeSet::new(),
        last: Instant::now(),
    });
    let mut selection = None;
    let pick = |inventory: &Inventory| {
        let picked = Discovery::select(setup, inventory);
        let ids = match &picked {
            Ok(found) => {
                let mut handing = handing.borrow_mut();
                handing.sink.selected(found);
                handing.chosen = found.host_names().into_iter().collect();
                inventory.host_ids(found.selected.hosts.iter().map(|h| h.name.as_str()))
            }
            Err(_) => Vec::new(),
        };
        selection = Some(picked);
        ids
    };
    let each = |config: HostConfig| handing.borrow_mut().hand(config);
    let read = runtime.block_on(pvrdma_vsphere::read_configuration_each(
        config,
        super::ctrl_c(),
        pick,
        each,
    ));
    match read {
        Ok(_) => {}
        Err(pvrdma_vsphere::Error::Cancelled { .. }) => return Ok(None),
        Err(e) => return Err(setup.explain(e)),
    }
    let discovery = match selection {
        Some(picked) => picked?,
        None => anyhow::bail!("vCenter {} gave no inventory", setup.endpoint.label()),
    };
    let handing = handing.into_inner();
    for name in discovery.host_names() {
        if !handing.handed.contains(&name) {
            handing.sink.host(not_returned(&name));
        }
    }
    Ok(Some(ApiRead {
        discovery,
        started,
        finished: SystemTime::now(),
    }))
}

/// One capture per selected host, in selection order; a host vCenter no longer had when
/// its configuration was read is a failed capture that says so.
pub(crate) fn captures(hosts: &[String], configs: BTreeMap<String, HostConfig>, elapsed_ms: u64) -> Vec<HostCapture> {
    let by_name: BTreeMap<&str, &HostConfig> = configs.values().map(|c| (c.name.as_str(), c)).collect();
    let share = elapsed_ms / u64::try_from(hosts.len().max(1)).unwrap_or(1);
    hosts
        .iter()
        .map(|name| match by_name.get(name.as_str()) {
            Some(c) => capture::from_vsphere(name, c.host_xml.clone(), &c.vm_xml, share),
            None => not_returned(name),
        })
        .collect()
}

/// The capture of a host vCenter returned no configuration for.
fn not_returned(name: &str) -> HostCapture {
    HostCapture::failed(
        name,
        CaptureSource::VsphereApi,
        Failure::of_host(
            ErrorKind::CommandFailed,
            name,
            "vCenter returned no configuration for this host (removed from the inventory while it was read?); run again",
        ),
    )
}

/// Whether SSH to this host failed before anything was read, as a closed or refused SSH
/// service does (the host is up: vCenter has it connected).
fn ssh_refused(capture: &HostCapture) -> bool {
    capture.outputs.is_empty()
        && capture
            .error
            .as_ref()
            .is_some_and(|e| matches!(e.kind, ErrorKind::Unreachable | ErrorKind::Timeout) && e.run_stage.is_none())
}

/// The hosts whose SSH failed before anything was read, in capture order.
pub(crate) fn refused(captures: &[HostCapture]) -> Vec<String> {
    captures
        .iter()
        .filter(|c| ssh_refused(c))
        .map(|c| c.host.clone())
        .collect()
}

/// Hosts whose SSH service refused the run are judged from vCenter's vSphere API instead
/// (in a session of their own), keeping the SSH error: one closed SSH service no longer
/// leaves a host with nothing known. A vCenter that cannot be read then is said on stderr
/// and changes nothing: the SSH results stand as they are.
///
/// `login` is the run's own ([`super::login_config`]): the password is not asked again.
pub(crate) fn complete_refused(setup: &VcenterSetup, login: &Config, captures: &mut [HostCapture]) {
    let refused = refused(captures);
    if refused.is_empty() {
        return;
    }
    let clock = Instant::now();
    let read = crate::live::runtime().and_then(|runtime| {
        let pick = |inventory: &Inventory| inventory.host_ids(refused.iter().map(String::as_str));
        runtime
            .block_on(pvrdma_vsphere::read_configuration(login.clone(), super::ctrl_c(), pick))
            .map(|(_, configs)| configs)
            .map_err(|e| setup.explain(e))
    });
    add_configuration(captures, &refused, read, clock);
}

/// Adds to the captures of the `refused` hosts the configuration `read` found for them,
/// begun at `clock`; an unread configuration is said on stderr and changes nothing.
pub(crate) fn add_configuration(
    captures: &mut [HostCapture],
    refused: &[String],
    read: anyhow::Result<BTreeMap<String, HostConfig>>,
    clock: Instant,
) {
    let configs = match read {
        Ok(configs) => configs,
        Err(e) => {
            eprint!(
                "{}",
                crate::terminal::stderr_message(
                    "pvrdma-doctor: ",
                    &format!(
                        "SSH refused {}, and their configuration could not be read from vCenter either: {e:#}",
                        pvrdma_nodeset::fold(refused)
                    )
                )
            );
            return;
        }
    };
    let elapsed = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
    let share = elapsed / u64::try_from(refused.len()).unwrap_or(1).max(1);
    for capture in captures.iter_mut().filter(|c| ssh_refused(c)) {
        if let Some(c) = configs.values().find(|c| c.name == capture.host) {
            capture::add_vsphere(capture, c.host_xml.clone(), &c.vm_xml, share);
        }
    }
}

#[cfg(test)]
mod tests {
    use pvrdma_engine::capture;
    use pvrdma_engine::catalogue as cat;

    /// The engine names the request in each capture (the manifest, `-v`); it must name
    /// what the client asks for, which the engine cannot see (the crates stand apart).
    #[test]
    fn each_capture_names_every_property_the_client_reads() {
        let c = capture::from_vsphere("esx01", String::new(), &[], 0);
        let named = |id: &str| {
            c.outputs[id]
                .command
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        let (host, vm) = (named(cat::VSPHERE_HOST_CONFIG), named(cat::VSPHERE_VM_CONFIG));
        for p in pvrdma_vsphere::config::HOST_PROPERTIES {
            assert!(host.iter().any(|w| w == p), "{p} in {host:?}");
        }
        for p in pvrdma_vsphere::config::VM_PROPERTIES {
            assert!(vm.iter().any(|w| w == p), "{p} in {vm:?}");
        }
    }
}

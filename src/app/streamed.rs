//! `--no-ssh`'s one-shot run, made as vCenter's pages come: each host judged, and its
//! files spooled into the bundle, the moment its answers are whole; its answers are then
//! dropped. The report and the bundle are made once every host is in. What the run holds
//! grows with the report, not with the answers read (1,000 hosts of 10 VMs answer about
//! 80 MB of XML).
use super::output::{self, RunTimes};
use super::setup::ReportSetup;
use crate::cli::BundleArgs;
use crate::plugin::Session;
use crate::vcenter::{Discovery, HostSink};
use pvrdma_engine::capture::HostCapture;
use pvrdma_engine::diagnose::{HostByHost, Selection};
use std::time::SystemTime;

/// What the run keeps of the hosts handed on so far.
pub(super) struct Streamed<'a> {
    bundle: &'a BundleArgs,
    /// The hosts judged (made when the selection is known: a VM-first run judges only
    /// its VMs).
    judged: Option<HostByHost>,
    /// The hosts chosen, in the order the report keeps.
    order: Vec<String>,
    /// `--bundle`: the hosts' files so far.
    spool: Option<crate::bundle::Spool>,
    /// `--bundle --redact`: the captures themselves, since redaction learns every value to
    /// hide from the whole fleet before it replaces any.
    kept: Vec<HostCapture>,
    /// Why the bundle cannot be written; said after the report, as a bundle that fails
    /// after the run is.
    bundle_error: Option<anyhow::Error>,
}

impl<'a> Streamed<'a> {
    pub(super) fn new(bundle: &'a BundleArgs) -> Streamed<'a> {
        Streamed {
            bundle,
            judged: None,
            order: Vec::new(),
            spool: None,
            kept: Vec::new(),
            bundle_error: None,
        }
    }

    /// Reports the hosts handed on (the read began at `started`, ended at `finished`),
    /// then writes the bundle when asked for. Returns the exit code.
    pub(super) fn report(
        self,
        (started, finished): (SystemTime, SystemTime),
        setup: &ReportSetup,
        baseline: Option<&pvrdma_engine::baseline::Baseline>,
        plugin: Option<&Session>,
    ) -> anyhow::Result<u8> {
        let mut judged = self
            .judged
            .unwrap_or_else(|| HostByHost::new(Selection::of_vms(setup.vms.as_deref())));
        judged.order_by(&self.order);
        if let Some(p) = plugin {
            p.stage("diagnosing");
        }
        let times = RunTimes::of_run(started, finished);
        let (diagnosis, code) = output::report(judged.finish(), setup, baseline, &times, plugin, &[])?;
        if let Some(e) = self.bundle_error {
            return Err(e);
        }
        let written = match self.spool {
            Some(spool) => {
                super::bundle::finish_spooled(self.bundle, spool, &diagnosis, started, finished, &self.order)?
            }
            None => super::bundle::write_support_bundle_hiding(
                self.bundle,
                &self.kept,
                &diagnosis,
                started,
                finished,
                false,
                &crate::redact::LocalValues::default(),
            )?,
        };
        if let Some(path) = written {
            eprintln!("pvrdma-doctor: support bundle written to {}", path.display());
        }
        Ok(code)
    }
}

impl HostSink for Streamed<'_> {
    fn selected(&mut self, discovery: &Discovery) {
        self.judged = Some(HostByHost::new(Selection::of_vms(discovery.vms().as_deref())));
        self.order = discovery.host_names();
        if let (Some(path), false) = (&self.bundle.bundle, self.bundle.redact) {
            match crate::bundle::Spool::new(path, self.bundle.force) {
                Ok(spool) => self.spool = Some(spool),
                Err(e) => self.bundle_error = Some(e),
            }
        }
    }

    fn host(&mut self, capture: HostCapture) {
        if let Some(judged) = &mut self.judged {
            judged.add(&capture);
        }
        if let (Some(spool), None) = (&mut self.spool, &self.bundle_error) {
            if let Err(e) = spool.add(&capture, SystemTime::now()) {
                self.bundle_error = Some(e);
                self.spool = None;
            }
        }
        if self.bundle.bundle.is_some() && self.bundle.redact {
            self.kept.push(capture);
        }
    }
}

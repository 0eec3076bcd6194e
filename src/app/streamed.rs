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
use anyhow::Context as _;
use pvrdma_engine::capture::HostCapture;
use pvrdma_engine::diagnose::{HostByHost, Selection};
use std::io::{Seek as _, Write as _};
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
    /// `--bundle --redact`: what redaction learnt so far, and the captures kept on disk
    /// until then, since it learns every value to hide from the whole fleet before it
    /// replaces any.
    redacting: Option<(crate::redact::Redactor, Held)>,
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
            redacting: None,
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
            .unwrap_or_else(|| HostByHost::new(Selection::of_vms(setup.vms.as_ref())));
        judged.order_by(&self.order);
        if let Some(p) = plugin {
            p.stage("diagnosing");
        }
        let times = RunTimes::of_run(started, finished);
        let diagnosis = judged.finish();
        let html = output::html_options(None, &diagnosis, setup.format, &times);
        let (diagnosis, code) = output::report(diagnosis, html, setup, baseline, &times, plugin, &[])?;
        if let Some(e) = self.bundle_error {
            return Err(e);
        }
        let written = match (self.spool, self.redacting) {
            (Some(spool), _) => {
                super::bundle::finish_spooled(self.bundle, spool, &diagnosis, started, finished, &self.order)?
            }
            (None, Some((redactor, held))) => super::bundle::finish_redacted(
                self.bundle,
                &redactor,
                held.read_back()?,
                &diagnosis,
                (started, finished),
                &self.order,
            )?,
            (None, None) => None,
        };
        if let Some(path) = written {
            eprintln!("pvrdma-doctor: support bundle written to {}", path.display());
        }
        Ok(code)
    }
}

impl HostSink for Streamed<'_> {
    fn selected(&mut self, discovery: &Discovery) {
        self.judged = Some(HostByHost::new(Selection::of_vms(discovery.vms().as_ref())));
        self.order = discovery.host_names();
        let Some(path) = &self.bundle.bundle else {
            return;
        };
        if self.bundle.redact {
            let mut redactor = crate::redact::Redactor::new();
            // The API read names no local path or login user; said as the live run says it.
            redactor.hide_local(&crate::redact::LocalValues::default());
            match Held::new(path) {
                Ok(held) => self.redacting = Some((redactor, held)),
                Err(e) => self.bundle_error = Some(e),
            }
            return;
        }
        match crate::bundle::Spool::new(path, self.bundle.force) {
            Ok(spool) => self.spool = Some(spool),
            Err(e) => self.bundle_error = Some(e),
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
        if let (Some((redactor, held)), None) = (&mut self.redacting, &self.bundle_error) {
            if let Err(e) = redactor.learn_capture(&capture).and_then(|()| held.push(&capture)) {
                self.bundle_error = Some(e);
                self.redacting = None;
            }
        }
    }
}

/// Captures kept on disk rather than in memory until they are redacted: JSON lines,
/// compressed, in an unnamed temporary file (readable by its owner alone) in the bundle's
/// folder, gone with the process.
pub(super) struct Held {
    out: flate2::write::GzEncoder<std::io::BufWriter<std::fs::File>>,
}

impl Held {
    fn new(bundle: &std::path::Path) -> anyhow::Result<Held> {
        let dir = crate::atomic_file::parent_dir(bundle);
        let file = tempfile::tempfile_in(dir)
            .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
        Ok(Held {
            out: flate2::write::GzEncoder::new(std::io::BufWriter::new(file), flate2::Compression::fast()),
        })
    }

    fn push(&mut self, capture: &HostCapture) -> anyhow::Result<()> {
        serde_json::to_writer(&mut self.out, capture)
            .map_err(std::io::Error::from)
            .and_then(|()| self.out.write_all(b"\n"))
            .context("writing to the bundle's temporary file")
    }

    /// The captures, in the order they were kept.
    fn read_back(self) -> anyhow::Result<impl Iterator<Item = anyhow::Result<HostCapture>>> {
        let mut file = self
            .out
            .finish()
            .and_then(|b| b.into_inner().map_err(|e| e.into_error()))
            .context("writing to the bundle's temporary file")?;
        file.seek(std::io::SeekFrom::Start(0))
            .context("reading the bundle's temporary file")?;
        // serde_json reads a byte at a time: buffered after the decompression too.
        let lines = std::io::BufReader::new(flate2::read::GzDecoder::new(std::io::BufReader::new(file)));
        Ok(serde_json::Deserializer::from_reader(lines)
            .into_iter::<HostCapture>()
            .map(|c| c.context("reading the bundle's temporary file")))
    }
}

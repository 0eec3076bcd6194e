//! The HTML report (`--format html`): one self-contained page to attach to a ticket. From
//! top to bottom: what was read, when, how and by which version, with the outcome and
//! what its exit code means; the path picture (inline SVG: hosts, their RDMA devices,
//! uplinks and vDSes, the VMs' PVRDMA adapters, and the paths between adapters coloured
//! and labelled by transport); each failing check with its evidence and every form of its
//! fix; each adapter's verdict and reason; the transport between adapters; every host's
//! checklist. For a bundle or capture read offline, the command outputs behind each
//! finding travel with it, folded in `<details>`.
//!
//! The page asks the network for nothing: no script, style sheet, font or image from
//! anywhere; its Content-Security-Policy forbids every load and allows only its own
//! inline script, by hash. Everything, the picture included, reads with scripts off (the
//! script only filters tables and opens the folds). Every string from a host or vCenter is
//! escaped (`escape.rs`). It folds hosts with identical results as the text report does
//! (the same grouping), so a fleet of 1,000 hosts draws a few bands.
use crate::capture::CaptureSource;
use crate::diagnose::{Diagnosis, HostDiagnosis};
use crate::report::HumanOptions;
use std::sync::Arc;
use std::time::SystemTime;

mod adapters;
mod assets;
mod escape;
mod evidence;
mod findings;
mod fix;
mod hosts;
mod page;
mod picture;
#[cfg(test)]
mod tests;

pub use evidence::Outputs;

/// What the page says about where its data comes from, and what it carries besides the
/// diagnosis. The default (a page of no known source) is what a renderer without a front
/// end gets.
#[derive(Debug, Clone, Default)]
pub struct HtmlOptions {
    pub provenance: Provenance,
    /// The command outputs behind the findings, for a page that carries them (read
    /// offline, or written into a bundle); `None` for a live run's page.
    pub outputs: Option<Arc<Outputs>>,
}

/// Where the diagnosed outputs come from.
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    /// How the hosts were read, counted per source, in first-seen order.
    pub sources: Vec<(CaptureSource, usize)>,
    /// What `analyze` read: the file or folder name (never its whole path).
    pub read_from: Option<String>,
    /// When the outputs were collected, and how that is known.
    pub times: Option<Times>,
    /// The version of pvrdma-doctor that collected them, when a bundle records it.
    pub collected_by: Option<String>,
    /// Host names, addresses, MACs, VM names and UUIDs were replaced by tokens.
    pub redacted: bool,
}

impl Provenance {
    /// How each capture was read, counted.
    pub fn count_sources(captures: &[crate::capture::HostCapture]) -> Vec<(CaptureSource, usize)> {
        let mut out: Vec<(CaptureSource, usize)> = Vec::new();
        for c in captures {
            match out.iter_mut().find(|(s, _)| *s == c.source) {
                Some((_, n)) => *n += 1,
                None => out.push((c.source, 1)),
            }
        }
        out
    }
}

/// When the outputs were collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    pub started: SystemTime,
    pub finished: SystemTime,
    pub from: TimesFrom,
}

/// Where the times of [`Times`] come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimesFrom {
    /// This run collected the outputs.
    Run,
    /// The support bundle recorded the run that collected them.
    Bundle,
    /// The capture records no time: when `analyze` read it.
    Read,
}

/// What every part of the page reads: the diagnosis, the options, and the hosts folded
/// into groups as the text report folds them.
struct Page<'a> {
    d: &'a Diagnosis,
    options: &'a HtmlOptions,
    fold: bool,
    only_problems: bool,
    groups: Vec<Vec<&'a HostDiagnosis>>,
}

/// The page. `human` gives the folding (`--no-fold`) and `--only-problems`, which the
/// page honours as the text report does.
pub fn render(d: &Diagnosis, options: &HtmlOptions, human: &HumanOptions) -> String {
    let page = Page {
        d,
        options,
        fold: human.fold,
        only_problems: human.only_problems,
        groups: crate::report::human::group_hosts(&d.hosts, human.fold),
    };
    page::document(&page)
}

/// A folded host set: `esx[01-03]`.
fn fold_names<S: AsRef<str>>(names: &[S]) -> String {
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    pvrdma_nodeset::fold(&names)
}

/// `1 host`, `2 hosts`, with a thousands separator.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

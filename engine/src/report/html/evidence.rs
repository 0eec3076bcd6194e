//! The command outputs a finding rests on, carried by a page read offline (a support
//! bundle, a capture folder) or written into a bundle: the engineer on the ticket sees
//! what the host printed without unpacking anything. Taken from the same captures the
//! diagnosis read, so a redacted bundle's page shows the redacted outputs and nothing
//! else.
use super::escape;
use crate::capture::HostCapture;
use crate::diagnose::{Diagnosis, Status};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Most of one output the page shows; the rest is in the bundle or capture.
const SHOWN_BYTES: usize = 64 * 1024;

/// One output as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputText {
    /// The command line as it ran.
    pub command: String,
    pub stdout: String,
    pub stderr: String,
    pub exit_status: Option<u32>,
    /// How it broke off, when it did (timed out, cut at a cap).
    pub cut_short: Option<String>,
}

/// The outputs behind the findings, by host and catalogue id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outputs {
    by_host: BTreeMap<String, BTreeMap<String, OutputText>>,
}

impl Outputs {
    /// The outputs of `captures` that the findings of `d` cite: the evidence of every
    /// failing or warning check (on the host, and across hosts on each host it involves)
    /// and every output that did not parse.
    pub fn behind(d: &Diagnosis, captures: &[HostCapture]) -> Outputs {
        let mut wanted: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let finding = |s: Status| matches!(s, Status::Fail | Status::Warn);
        for h in &d.hosts {
            let ids = wanted.entry(h.host.as_str()).or_default();
            for c in h.checks.iter().filter(|c| finding(c.status)) {
                ids.extend(c.evidence.iter().map(|e| e.command));
            }
            for c in d.fleet_checks.iter().filter(|c| h.fleet_failures.contains(&c.id)) {
                ids.extend(c.evidence.iter().map(|e| e.command));
            }
            ids.extend(h.unparsed_outputs.iter().map(|u| u.command.as_str()));
        }
        let mut by_host = BTreeMap::new();
        for capture in captures {
            let Some(ids) = wanted.get(capture.host.as_str()) else {
                continue;
            };
            let outputs: BTreeMap<String, OutputText> = ids
                .iter()
                .filter_map(|id| {
                    let raw = capture.outputs.get(*id)?;
                    Some((
                        id.to_string(),
                        OutputText {
                            command: raw.command.clone(),
                            stdout: raw.stdout.clone(),
                            stderr: raw.stderr.clone(),
                            exit_status: raw.exit_status,
                            cut_short: raw.cut_short(),
                        },
                    ))
                })
                .collect();
            if !outputs.is_empty() {
                by_host.insert(capture.host.clone(), outputs);
            }
        }
        Outputs { by_host }
    }

    /// The output of command `id` on `host`, when the page carries it.
    pub fn get(&self, host: &str, id: &str) -> Option<&OutputText> {
        self.by_host.get(host)?.get(id)
    }
}

/// A `<details>` with the outputs of `ids` on `host` (in the order given, each once), or
/// nothing when the page carries none of them. `note` says whose outputs stand for a
/// folded set of hosts.
pub(super) fn details(out: &mut String, outputs: &Outputs, host: &str, ids: &[&str], note: Option<&str>) {
    let mut seen = BTreeSet::new();
    let shown: Vec<(&str, &OutputText)> = ids
        .iter()
        .filter(|id| seen.insert(**id))
        .filter_map(|id| Some((*id, outputs.get(host, id)?)))
        .collect();
    if shown.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<details class=\"outputs\"><summary>What {} printed ({})</summary>",
        escape::text(host),
        super::count(shown.len() as u64, "output", "outputs")
    );
    if let Some(note) = note {
        let _ = write!(out, "<p class=\"note\">{}</p>", escape::text(note));
    }
    for (id, o) in shown {
        let label = crate::catalogue::display_label(id);
        let status = match (&o.cut_short, o.exit_status) {
            (Some(cut), _) => cut.clone(),
            (None, Some(code)) => format!("exit status {code}"),
            (None, None) => "no exit status".to_string(),
        };
        let _ = write!(
            out,
            "<p><code>{}</code> <span class=\"muted\">({})</span></p>",
            escape::text(label),
            escape::text(&status)
        );
        if o.command != label && !o.command.is_empty() && o.command.len() < 400 {
            let _ = write!(
                out,
                "<p class=\"note\">ran as <code>{}</code></p>",
                escape::text(&o.command)
            );
        }
        pre(out, &o.stdout, "(no output)");
        if !o.stderr.is_empty() {
            out.push_str("<p class=\"note\">on stderr:</p>");
            pre(out, &o.stderr, "");
        }
    }
    out.push_str("</details>");
}

/// The text in a `<pre>`, shortened beyond [`SHOWN_BYTES`] (on a character boundary),
/// saying so.
fn pre(out: &mut String, text: &str, empty: &str) {
    out.push_str("<pre>");
    if text.is_empty() {
        escape::push(out, empty);
    } else if text.len() > SHOWN_BYTES {
        let mut end = SHOWN_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        escape::push(out, text.get(..end).unwrap_or(""));
        let _ = write!(
            out,
            "\n… {} more bytes, whole in the bundle or capture",
            super::thousands((text.len() - end) as u64)
        );
    } else {
        escape::push(out, text);
    }
    out.push_str("</pre>");
}

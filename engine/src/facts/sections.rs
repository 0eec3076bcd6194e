//! The sections of the concurrent batches: one [`Section`] per query, whatever the batch,
//! so a batch's cut-off sections are found and marked by one function ([`mark_cut`]) for
//! every batch the facts declare.
use super::{label, Fact};
use crate::capture::{CaptureSource, HostCapture, RawOutput};
use crate::catalogue as cat;
use pvrdma_parsers as p;
use std::borrow::Cow;

/// What the facts need of one section of a batch (one query's answer).
pub(crate) trait Section {
    /// The key the query was asked for (a World ID, an adapter node, an uplink, a path).
    fn key(&self) -> Cow<'_, str>;
    /// The parser found the section without its end marker while others have theirs.
    fn cut_off(&self) -> bool;
    /// The reason the section already carries, when it is no answer.
    fn error(&self) -> Option<&str>;
    /// Makes the section a cut-off one, for `why`: what it held is no evidence.
    fn cut(&mut self, why: String);
}

impl Section for p::VmPorts {
    fn key(&self) -> Cow<'_, str> {
        Cow::Owned(self.world_id.to_string())
    }
    fn cut_off(&self) -> bool {
        self.cut_off
    }
    fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
    fn cut(&mut self, why: String) {
        self.cut_off = true;
        self.ports.clear();
        self.error = Some(why);
    }
}

impl Section for p::PvrdmaPropertiesSection {
    fn key(&self) -> Cow<'_, str> {
        Cow::Owned(format!("{}_{}", self.device.world_id, self.device.index))
    }
    fn cut_off(&self) -> bool {
        self.cut_off
    }
    fn error(&self) -> Option<&str> {
        self.properties.as_ref().err().map(String::as_str)
    }
    fn cut(&mut self, why: String) {
        self.cut_off = true;
        self.properties = Err(why);
    }
}

impl Section for p::VmxSection {
    fn key(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.config_file)
    }
    fn cut_off(&self) -> bool {
        self.cut_off
    }
    fn error(&self) -> Option<&str> {
        self.config.as_ref().err().map(String::as_str)
    }
    fn cut(&mut self, why: String) {
        self.cut_off = true;
        self.config = Err(why);
    }
}

impl Section for p::DcbStatus {
    fn key(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.nic)
    }
    /// The DCB parser already turns a section without its end marker into an error state
    /// (the batch came with end markers: there is no older capture without them).
    fn cut_off(&self) -> bool {
        false
    }
    fn error(&self) -> Option<&str> {
        self.state.as_ref().err().map(String::as_str)
    }
    fn cut(&mut self, why: String) {
        self.state = Err(why);
    }
}

impl Section for p::NicStatsSection {
    fn key(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.nic)
    }
    fn cut_off(&self) -> bool {
        self.cut_off
    }
    fn error(&self) -> Option<&str> {
        self.stats.as_ref().err().map(String::as_str)
    }
    fn cut(&mut self, why: String) {
        self.cut_off = true;
        self.stats = Err(why);
    }
}

/// Names the event that cut batch `id` in the reason of the section it cut, and treats
/// every section of a batch whose markers are required but absent as cut. A section the
/// live collection found unfinished (hung, killed, cut on the host, damaged) is cut
/// whatever it holds, and says so by its key.
pub(super) fn mark_cut<S: Section>(fact: &mut Fact<Vec<S>>, capture: &HostCapture, id: &str) {
    let Ok(sections) = fact else {
        return;
    };
    let all = markers_required(capture, id);
    for s in sections.iter_mut() {
        let key = s.key().into_owned();
        let own = unfinished(capture, id, &key);
        if !(s.cut_off() || all || own.is_some()) {
            continue;
        }
        let why = match s.error() {
            Some(why) if s.cut_off() => why.to_string(),
            _ => format!("its section has no end marker (`<== {key} exit N ==>`): the output was cut off inside it"),
        };
        let why = own.unwrap_or_else(|| match capture.outputs.get(id).and_then(RawOutput::cut_short) {
            Some(event) => format!("`{}` {event}: {why}", label(id)),
            None => format!("`{}`: {why}", label(id)),
        });
        s.cut(why);
    }
}

/// Why the live collection found the answer of `key` unfinished, if it did.
fn unfinished(capture: &HostCapture, id: &str, key: &str) -> Option<String> {
    let u = capture.outputs.get(id)?.unfinished.iter().find(|u| u.key == key)?;
    Some(format!("{} {}", cat::batch_item_label(id, key), u.reason))
}

/// Whether a batch's sections must carry end markers to count as whole: on a live run,
/// whose command line prints them. Captures read back (sample directories, bundles, older
/// ones among them) may come from loops without markers, which only ever ended cleanly
/// (a cut output is refused by its outcome anyway); there a section needs a marker only
/// when another one has one.
fn markers_required(capture: &HostCapture, id: &str) -> bool {
    let Some(output) = capture.outputs.get(id) else {
        return false;
    };
    // A batch's answers carry end markers (the client sorts the framed answers into
    // sections and ends each with its marker).
    let printed = cat::spec(id).is_some_and(|s| s.is_batch());
    let trusted_command = capture.source == CaptureSource::Live;
    let none_marked = !output.stdout.lines().any(|l| p::batch_end_marker(l).is_some());
    printed && trusted_command && none_marked
}

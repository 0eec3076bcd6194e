//! `--redact`: a bundle a customer can attach to a public ticket.
//!
//! Host names, IPv4/IPv6 addresses, MAC addresses, VM display names, UUIDs and datastore
//! names are replaced by tokens before the report is computed, so neither the raw outputs
//! nor the report in the bundle hold an original value. Three properties matter:
//!
//! * **Consistency.** One value maps to one token everywhere (outputs, `.vmx` files, folder
//!   names, error messages), so the joins the diagnosis makes (vsish MAC ↔ VM port MAC,
//!   vmknic name ↔ advanced option) still hold and the verdicts stay the same.
//! * **Still parseable.** A token has the shape of what it replaces: an IPv4 stays an IPv4
//!   (from the 198.18.0.0/15 benchmarking range, keeping the last octet so /24 subnet
//!   relations survive), an IPv6 goes to 2001:db8::/32, a MAC to `00:00:5e:00:xx:xx` with the
//!   original separators and case, a UUID keeps its exact layout. Tokens may be longer than
//!   the original (`10.0.0.1` → `198.18.0.1`), and esxcli tables are sliced by the dash row's
//!   column offsets, so a table whose cells change width is re-aligned: columns widen, the
//!   dash row follows, right-aligned columns stay right-aligned. Keeping every token the
//!   same length as its original was the alternative; it cannot work for short addresses
//!   (no `7.x.y.z`-length address exists in any documentation range).
//! * **The mapping never enters the bundle.** It is written next to it, mode 0600.
//!
//! The vSphere API's answers are XML: their text is redacted as it reads (`R&amp;D` is the
//! name `R&D`), so a name is hidden whatever entities vCenter wrote it with.
//!
//! Deliberately kept: loopback, unspecified, broadcast and netmask addresses, all-zero and
//! broadcast MACs; they identify nothing and some verdicts read them.
mod learn;
mod map_file;
mod replace;
mod table;
#[cfg(test)]
mod tests;

pub(crate) use map_file::map_path;

use pvrdma_engine::capture::HostCapture;
use serde::Serialize;
use std::collections::BTreeMap;

/// Which kind of value a token replaces; decides token shape, case folding and what counts
/// as the edge of a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Host,
    Vm,
    Datastore,
    Ipv4,
    Ipv6,
    Mac,
    Uuid,
}

impl Kind {
    fn glue_tolerant(self) -> bool {
        matches!(self, Kind::Ipv6 | Kind::Mac | Kind::Uuid)
    }

    fn case_insensitive(self) -> bool {
        !matches!(self, Kind::Vm | Kind::Datastore)
    }
}

/// The original → token mapping, per category; what `--redact` writes next to the bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RedactionMap {
    pub hosts: BTreeMap<String, String>,
    pub vm_names: BTreeMap<String, String>,
    pub datastores: BTreeMap<String, String>,
    pub ipv4: BTreeMap<String, String>,
    ipv6: BTreeMap<String, String>,
    pub macs: BTreeMap<String, String>,
    pub uuids: BTreeMap<String, String>,
    /// Local paths (identity files, config files, the home directory) seen in messages.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    local_paths: BTreeMap<String, String>,
    /// SSH login users seen in messages.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    login_users: BTreeMap<String, String>,
}

/// Values of the machine that ran the collection, which end up in SSH error messages
/// (`-i /home/alice/.ssh/lab_ecdsa refused`, `authentication as "alice" failed`): they
/// name the admin and their machine, not the hosts, so the capture-based learning cannot
/// find them. The live run lists them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LocalValues {
    /// Identity files, ssh config files, the home directory.
    pub(crate) paths: Vec<String>,
    /// Login users of every hop.
    pub(crate) users: Vec<String>,
}

/// One literal to replace.
#[derive(Debug, Clone)]
struct Rule {
    /// As seen in the text (case folded when the kind is case-insensitive).
    needle: String,
    token: String,
    kind: Kind,
}

#[derive(Debug, Default)]
pub struct Redactor {
    map: RedactionMap,
    /// Folded literal → index in `rules`.
    known: BTreeMap<String, usize>,
    rules: Vec<Rule>,
    /// Lookup structure over `rules`, built on first use after learning (one redaction
    /// pass calls `redact_text` per line).
    index: std::cell::OnceCell<replace::Index>,
    /// Canonical key (folded literal, parsed IPv6) → token, so two spellings of one value
    /// share a token.
    tokens: BTreeMap<(u8, String), String>,
    /// /24 network → index in 198.18.0.0/15, and separately within 169.254.0.0/16.
    ipv4_nets: BTreeMap<[u8; 3], u16>,
    link_local_nets: BTreeMap<[u8; 3], u16>,
    counters: [u32; 7],
    /// Local paths and login users → token, longest first; applied to failure messages.
    local: Vec<(String, String, bool)>,
}

impl Redactor {
    pub fn new() -> Self {
        Self::default()
    }

    /// The mapping learnt so far.
    pub fn map(&self) -> &RedactionMap {
        &self.map
    }

    /// Every original value learnt so far (as first seen), e.g. to prove none survives.
    pub fn originals(&self) -> Vec<String> {
        let m = &self.map;
        [
            &m.hosts,
            &m.vm_names,
            &m.datastores,
            &m.ipv4,
            &m.ipv6,
            &m.macs,
            &m.uuids,
        ]
        .iter()
        .flat_map(|c| c.keys().cloned())
        .collect()
    }

    /// Learns every value to hide from the captures, then returns redacted copies: outputs,
    /// `.vmx` files, host names (the bundle folder names) and failure messages.
    pub fn redact_captures(&mut self, captures: &[HostCapture]) -> anyhow::Result<Vec<HostCapture>> {
        for capture in captures {
            self.learn_capture(capture)?;
        }
        Ok(captures.iter().map(|c| self.apply_capture(c)).collect())
    }
}

/// argv for a redacted manifest: option names stay (they tell how the tool was run),
/// every value and every host argument becomes `<redacted>`.
pub fn redact_command_line(args: &[String]) -> Vec<String> {
    args.iter()
        .enumerate()
        .map(|(n, arg)| {
            if n == 0 {
                "pvrdma-doctor".to_string()
            } else if let Some((opt, _)) = arg.split_once('=').filter(|_| arg.starts_with('-')) {
                format!("{opt}=<redacted>")
            } else if arg.starts_with('-') {
                arg.clone()
            } else {
                "<redacted>".to_string()
            }
        })
        .collect()
}

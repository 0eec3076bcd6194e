//! Replacing learnt values: one pass over the text, longest match first, each match
//! checked against the edges its kind requires.
use super::{Kind, LocalValues, Redactor, Rule};
use pvrdma_engine::capture::{Failure, HostCapture};

/// Learns the values to hide, then replaces them consistently.
/// Finds the longest rule at a position with one hash lookup per distinct needle length,
/// so the cost does not grow with the number of values (a fleet has thousands of MACs).
#[derive(Debug, Default)]
pub(super) struct Index {
    /// Distinct needle lengths, longest first.
    lengths: Vec<usize>,
    /// The same for MACs, UUIDs and IPv6 addresses, which are replaced even when glued to
    /// a word (`A56 4d 70 ...`): they are long enough never to be part of something else.
    glued_lengths: Vec<usize>,
    /// Folded first bytes that start some needle.
    first: std::collections::HashSet<u8>,
    folded: std::collections::HashMap<String, usize>,
    exact: std::collections::HashMap<String, usize>,
}

impl Index {
    pub(super) fn build(rules: &[Rule]) -> Index {
        let mut index = Index::default();
        let mut lengths = std::collections::BTreeSet::new();
        let mut glued_lengths = std::collections::BTreeSet::new();
        for (n, rule) in rules.iter().enumerate() {
            let Some(&b) = rule.needle.as_bytes().first() else {
                continue;
            };
            index.first.insert(b.to_ascii_lowercase());
            lengths.insert(rule.needle.len());
            if rule.kind.glue_tolerant() {
                glued_lengths.insert(rule.needle.len());
            }
            let map = if rule.kind.case_insensitive() {
                &mut index.folded
            } else {
                &mut index.exact
            };
            map.entry(rule.needle.clone()).or_insert(n);
        }
        index.lengths = lengths.into_iter().rev().collect();
        index.glued_lengths = glued_lengths.into_iter().rev().collect();
        index
    }
}

impl Redactor {
    /// A redacted copy of one capture, with what was learnt: outputs, `.vmx` files, the
    /// host name (the bundle folder name) and failure messages.
    pub(crate) fn apply_capture(&self, capture: &HostCapture) -> HostCapture {
        let mut out = capture.clone();
        out.host = self.redact_text(&capture.host);
        for raw in out.outputs.values_mut() {
            self.redact_raw(raw);
        }
        for f in out.missing.values_mut() {
            self.redact_failure(f);
        }
        if let Some(f) = &mut out.error {
            self.redact_failure(f);
        }
        for vmx in &mut out.vmx_files {
            vmx.path = self.redact_text(&vmx.path);
            vmx.content = self.redact_text(&vmx.content);
        }
        if let Some(probe) = &mut out.probe {
            // Peers are host names of this run: the same tokens as their folders.
            probe.peers = probe.peers.iter().map(|p| self.redact_text(p)).collect();
            probe.outputs = std::mem::take(&mut probe.outputs)
                .into_iter()
                .map(|(peer, mut raw)| {
                    self.redact_raw(&mut raw);
                    (self.redact_text(&peer), raw)
                })
                .collect();
            probe.missing = std::mem::take(&mut probe.missing)
                .into_iter()
                .map(|(peer, mut f)| {
                    self.redact_failure(&mut f);
                    (self.redact_text(&peer), f)
                })
                .collect();
        }
        out
    }

    fn redact_raw(&self, raw: &mut pvrdma_engine::capture::RawOutput) {
        raw.stdout = match pvrdma_engine::catalogue::api_source(&raw.id) {
            Some(_) => self.redact_xml(&raw.stdout),
            None => self.redact_output(&raw.stdout),
        };
        raw.stderr = self.redact_output(&raw.stderr);
        raw.command = self.redact_text(&raw.command);
        if let Some(f) = &mut raw.failure {
            self.redact_failure(f);
        }
        // A `.vmx` path is the key of its answer: hidden as in the command line.
        for u in &mut raw.unfinished {
            u.key = self.redact_text(&u.key);
            u.reason = self.redact_text(&u.reason);
        }
    }

    /// An answer of the vSphere API, as vCenter wrote it: its text is read as it means, so
    /// a name written with entities (`R&amp;D`, `o&#39;neil`) is found as the name learnt
    /// (`R&D`, `o'neil`); what holds no learnt value stays byte for byte as written.
    fn redact_xml(&self, xml: &str) -> String {
        pvrdma_parsers::xml::rewrite_text(
            xml,
            |text| {
                let hidden = self.redact_text(text);
                (hidden != text).then_some(hidden)
            },
            |markup| self.redact_text(markup),
        )
    }

    pub(super) fn redact_failure(&self, f: &mut Failure) {
        f.message = self.redact_text(&self.redact_local(&f.message));
        if let Some(d) = &mut f.detail {
            *d = self.redact_text(&self.redact_local(d));
        }
    }

    /// Hides the local paths and login users of `values` in failure messages (paths as
    /// `<local-path-N>`, the home directory as `~`, users as `<login-user-N>` where the
    /// name stands as a word). Call before [`Redactor::redact_captures`].
    pub(crate) fn hide_local(&mut self, values: &LocalValues) {
        let home = std::env::var("HOME").ok().filter(|h| h.len() > 1);
        let mut paths: Vec<&String> = values.paths.iter().filter(|p| p.len() > 1).collect();
        paths.sort();
        paths.dedup();
        for p in paths {
            let token = if home.as_deref() == Some(p.trim_end_matches('/')) {
                "~".to_string()
            } else {
                let n = self.map.local_paths.len() + 1;
                format!("<local-path-{n}>")
            };
            if !self.map.local_paths.contains_key(p) {
                self.map.local_paths.insert(p.clone(), token.clone());
                self.local.push((p.clone(), token, false));
            }
        }
        let mut users: Vec<&String> = values.users.iter().filter(|u| !u.is_empty()).collect();
        users.sort();
        users.dedup();
        for u in users {
            let n = self.map.login_users.len() + 1;
            let token = format!("<login-user-{n}>");
            self.map.login_users.insert(u.clone(), token.clone());
            self.local.push((u.clone(), token, true));
        }
        // Longest first, so a file under the home directory is one token, not `~/...`.
        self.local.sort_by_key(|r| std::cmp::Reverse(r.0.len()));
    }

    fn redact_local(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (needle, token, word) in &self.local {
            out = if *word {
                replace_word(&out, needle, token)
            } else {
                out.replace(needle.as_str(), token)
            };
        }
        out
    }

    /// Replaces every learnt value in `text`, longest match first.
    pub(crate) fn redact_text(&self, text: &str) -> String {
        let index = self.index.get_or_init(|| Index::build(&self.rules));
        if index.lengths.is_empty() {
            return text.to_string();
        }
        let folded = text.to_ascii_lowercase();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        let mut copied = 0;
        let bytes = text.as_bytes();
        while i < bytes.len() {
            // Names and IPv4 addresses need a non-word character (or the start) before a
            // match; inside a word only the long hex kinds are looked for.
            let prev = i.checked_sub(1).and_then(|p| bytes.get(p));
            let first = bytes.get(i).map(u8::to_ascii_lowercase).unwrap_or_default();
            if !text.is_char_boundary(i) || !index.first.contains(&first) {
                i += 1;
                continue;
            }
            let in_word = prev.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
            let lengths = if in_word { &index.glued_lengths } else { &index.lengths };
            let hit = lengths.iter().find_map(|&len| {
                let end = i + len;
                let candidates = [
                    folded.get(i..end).and_then(|k| index.folded.get(k)),
                    text.get(i..end).and_then(|k| index.exact.get(k)),
                ];
                candidates
                    .into_iter()
                    .flatten()
                    .filter_map(|n| self.rules.get(*n))
                    .find(|r| at_edges(r.kind, text, i, end))
            });
            match hit {
                Some(rule) => {
                    let end = i + rule.needle.len();
                    out.push_str(text.get(copied..i).unwrap_or_default());
                    let original = text.get(i..end).unwrap_or_default();
                    out.push_str(&match_case(rule.kind, original, &rule.token));
                    i = end;
                    copied = i;
                }
                None => i += 1,
            }
        }
        out.push_str(text.get(copied..).unwrap_or_default());
        out
    }
}

/// An upper-case original (`00:50:56:8A:9F:C2` in a .vmx) gets an upper-case token.
fn match_case(kind: Kind, original: &str, token: &str) -> String {
    let hexish = matches!(kind, Kind::Mac | Kind::Uuid | Kind::Ipv6);
    if hexish && original.chars().any(|c| c.is_ascii_uppercase()) && !original.chars().any(|c| c.is_ascii_lowercase()) {
        token.to_ascii_uppercase()
    } else {
        token.to_string()
    }
}

/// Whether the match `text[start..end]` stands alone for its kind: `esx01` matches in
/// `esx01.eth1` but not in `esx010`; `10.0.0.1` not inside `10.0.0.12` or `110.0.0.1`.
pub(super) fn at_edges(kind: Kind, text: &str, start: usize, end: usize) -> bool {
    let before = text.get(..start).and_then(|s| s.chars().next_back());
    let after = text.get(end..).and_then(|s| s.chars().next());
    let after2 = text.get(end..).and_then(|s| s.chars().nth(1));
    let before2 = text.get(..start).and_then(|s| s.chars().rev().nth(1));
    // ASCII only, like the scanners that learnt the values: a non-ASCII letter next to a
    // value is an edge, so the value is hidden rather than kept.
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    match kind {
        Kind::Host | Kind::Vm | Kind::Datastore => {
            !word(before) && !word(after) && before != Some('-') && after != Some('-')
        }
        Kind::Ipv4 => {
            let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
            let glued_before = before == Some('.') && digit(before2);
            let glued_after = after == Some('.') && digit(after2);
            !(word(before) || word(after) || glued_before || glued_after)
        }
        // Long and distinctive: the same digits are the same value wherever they stand,
        // except as part of a longer hex run (a MAC inside an IPv6 address).
        Kind::Ipv6 | Kind::Mac | Kind::Uuid => {
            let hex = |c: Option<char>| c.is_some_and(|c| c.is_ascii_hexdigit());
            // An IPv6 address is learnt after a `-` (`A-fe80::1`), so it is replaced there
            // too; only a `:` glues it to a longer hex run, as when it was learnt. A UUID
            // (16 hex bytes) is never a piece of a longer value: replaced wherever it
            // stands. The glue is for a MAC inside an IPv6 address.
            let sep = |c: Option<char>| match kind {
                Kind::Ipv6 => c == Some(':'),
                Kind::Uuid => false,
                _ => matches!(c, Some(':') | Some('-')),
            };
            let glued_before = sep(before) && hex(before2);
            let glued_after = sep(after) && hex(after2);
            !(glued_before || glued_after)
        }
    }
}

/// Replaces `needle` where it is not part of a longer word (letters, digits, `_`).
fn replace_word(text: &str, needle: &str, token: &str) -> String {
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(needle) {
        let (before, after) = (
            rest.get(..i).unwrap_or_default(),
            rest.get(i + needle.len()..).unwrap_or_default(),
        );
        out.push_str(before);
        if is_word(before.chars().next_back()) || is_word(after.chars().next()) {
            out.push_str(needle);
        } else {
            out.push_str(token);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

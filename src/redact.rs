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
//! Deliberately kept: loopback, unspecified, broadcast and netmask addresses, all-zero and
//! broadcast MACs; they identify nothing and some verdicts read them.
use crate::collect::{Failure, HostCapture};
use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

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
    pub ipv6: BTreeMap<String, String>,
    pub macs: BTreeMap<String, String>,
    pub uuids: BTreeMap<String, String>,
}

/// One literal to replace.
#[derive(Debug, Clone)]
struct Rule {
    /// As seen in the text (case folded when the kind is case-insensitive).
    needle: String,
    token: String,
    kind: Kind,
}

/// Learns the values to hide, then replaces them consistently.
/// Finds the longest rule at a position with one hash lookup per distinct needle length,
/// so the cost does not grow with the number of values (a fleet has thousands of MACs).
#[derive(Debug, Default)]
struct Index {
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
    fn build(rules: &[Rule]) -> Index {
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

#[derive(Debug, Default)]
pub struct Redactor {
    map: RedactionMap,
    /// Folded literal → index in `rules`.
    known: BTreeMap<String, usize>,
    rules: Vec<Rule>,
    /// Lookup structure over `rules`, built on first use after learning (one redaction
    /// pass calls `redact_text` per line).
    index: std::cell::OnceCell<Index>,
    /// Canonical key (folded literal, parsed IPv6) → token, so two spellings of one value
    /// share a token.
    tokens: BTreeMap<(u8, String), String>,
    /// /24 network → index in 198.18.0.0/15, and separately within 169.254.0.0/16.
    ipv4_nets: BTreeMap<[u8; 3], u16>,
    link_local_nets: BTreeMap<[u8; 3], u16>,
    counters: [u32; 7],
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

    fn learn_capture(&mut self, capture: &HostCapture) -> anyhow::Result<()> {
        self.learn_host(&capture.host)?;
        // Named things first, so a datastore id inside a path becomes `datastore-NNN`
        // rather than a UUID-shaped token (one value, one token).
        let mut texts: Vec<&str> = Vec::new();
        for out in capture.outputs.values() {
            texts.extend([out.stdout.as_str(), out.stderr.as_str(), out.command.as_str()]);
            if let Some(f) = &out.failure {
                texts.push(&f.message);
            }
        }
        texts.extend(capture.missing.values().map(|f| f.message.as_str()));
        if let Some(e) = &capture.error {
            texts.push(&e.message);
        }
        for vmx in &capture.vmx_files {
            texts.push(&vmx.path);
            texts.push(&vmx.content);
            if let Ok(config) = pvrdma_parsers::parse_vmx(&vmx.content) {
                if let Some(name) = config.display_name {
                    self.learn_name(Kind::Vm, &name)?;
                }
            }
        }
        for text in &texts {
            self.learn_datastores_and_vm_dirs(text)?;
            self.learn_display_names(text)?;
        }
        for text in &texts {
            self.learn_patterns(text)?;
        }
        Ok(())
    }

    fn learn_host(&mut self, host: &str) -> anyhow::Result<()> {
        // The label is what the user typed: `root@esx01:2222`, `[fe80::1]:22`, `10.0.0.5`.
        let after_user = host.rsplit_once('@').map_or(host, |(_, h)| h);
        let bare = match after_user.strip_prefix('[') {
            Some(rest) => rest.split_once(']').map_or(rest, |(h, _)| h),
            None => match after_user.split_once(':') {
                Some((h, port)) if !port.contains(':') => h,
                _ => after_user,
            },
        };
        if let Ok(ip) = bare.parse::<Ipv4Addr>() {
            self.learn_ipv4(bare, ip)?;
            if bare != host {
                self.learn_name(Kind::Host, host)?;
            }
            return Ok(());
        }
        if let Ok(ip) = bare.parse::<Ipv6Addr>() {
            self.learn_ipv6(bare, ip)?;
            if bare != host {
                self.learn_name(Kind::Host, host)?;
            }
            return Ok(());
        }
        self.learn_name(Kind::Host, host)?;
        if bare != host && !bare.is_empty() {
            self.learn(Kind::Host, bare, 0, host.to_string(), |n| format!("host-{n:03}"))?;
        }
        // `esx01.lab.example.com` also appears as plain `esx01`: same host, same token.
        if let Some((short, _)) = bare.split_once('.') {
            if !short.is_empty() {
                self.learn(Kind::Host, short, 0, host.to_string(), |n| format!("host-{n:03}"))?;
            }
        }
        Ok(())
    }

    /// `/vmfs/volumes/<ds>/<vm dir>/<vm>.vmx` (and the bundle-relative `vmfs/volumes/...`).
    fn learn_datastores_and_vm_dirs(&mut self, text: &str) -> anyhow::Result<()> {
        const MARK: &str = "vmfs/volumes/";
        let mut rest = text;
        while let Some(pos) = rest.find(MARK) {
            let after = rest.get(pos + MARK.len()..).unwrap_or_default();
            let path_end = after.find(['\n', '\r', '"']).unwrap_or(after.len());
            let (path, remainder) = after.split_at(path_end);
            let mut parts = path.split('/');
            if let Some(ds) = parts.next().map(str::trim_end).filter(|d| !d.is_empty()) {
                self.learn_name(Kind::Datastore, ds)?;
            }
            let tail: Vec<&str> = parts.collect();
            if let [.., dir, file] = tail.as_slice() {
                if let Some(stem) = file.strip_suffix(".vmx") {
                    self.learn_name(Kind::Vm, dir)?;
                    self.learn_name(Kind::Vm, stem)?;
                }
            }
            rest = remainder;
        }
        Ok(())
    }

    /// `Display Name: <name>` lines of `vm process list`, and `displayName = "<name>"` lines
    /// of `.vmx` text (`vmx_pvrdma_lines`).
    fn learn_display_names(&mut self, text: &str) -> anyhow::Result<()> {
        for line in text.lines() {
            let t = line.trim_start();
            if let Some(name) = t.strip_prefix("Display Name:") {
                let name = name.trim();
                if !name.is_empty() {
                    self.learn_name(Kind::Vm, name)?;
                }
            } else if let Some(("displayname", value)) = t
                .split_once('=')
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim()))
                .as_ref()
                .map(|(k, v)| (k.as_str(), *v))
            {
                let name = value.trim_matches('"').trim();
                if !name.is_empty() {
                    self.learn_name(Kind::Vm, name)?;
                }
            }
        }
        Ok(())
    }

    fn learn_patterns(&mut self, text: &str) -> anyhow::Result<()> {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            // Every matcher accepts ASCII only, so `i..i + len` is on char boundaries.
            let at = |len: usize| text.get(i..i + len).unwrap_or_default();
            if let Some(len) = match_uuid(bytes, i) {
                self.learn_hex(Kind::Uuid, at(len))?;
                i += len;
            } else if let Some(len) = match_mac(bytes, i) {
                self.learn_hex(Kind::Mac, at(len))?;
                i += len;
            } else if let Some((len, ip)) = match_ipv4(bytes, i) {
                self.learn_ipv4(at(len), ip)?;
                i += len;
            } else if let Some((len, ip)) = match_ipv6(text, i) {
                self.learn_ipv6(at(len), ip)?;
                i += len;
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    fn learn_name(&mut self, kind: Kind, value: &str) -> anyhow::Result<()> {
        if kind != Kind::Host && is_vocabulary(value) {
            return Ok(());
        }
        let (prefix, category) = match kind {
            Kind::Host => ("host", 0u8),
            Kind::Vm => ("vm", 1),
            _ => ("datastore", 2),
        };
        self.learn(kind, value, category, value.to_string(), |n| format!("{prefix}-{n:03}"))
    }

    fn learn_hex(&mut self, kind: Kind, value: &str) -> anyhow::Result<()> {
        let lower = value.to_ascii_lowercase();
        if kind == Kind::Mac && (lower == "00:00:00:00:00:00" || lower == "ff:ff:ff:ff:ff:ff") {
            return Ok(());
        }
        let category = if kind == Kind::Mac { 5 } else { 6 };
        let canonical = lower.replace(['-', ':', ' '], "");
        let shape = value.to_string();
        self.learn(kind, value, category, canonical, move |n| {
            if kind == Kind::Mac {
                let sep = if shape.contains('-') { '-' } else { ':' };
                let hi = (n >> 8) & 0xff;
                let lo = n & 0xff;
                ["00", "00", "5e", "00", &format!("{hi:02x}"), &format!("{lo:02x}")].join(&sep.to_string())
            } else {
                uuid_token(&shape, n)
            }
        })
    }

    fn learn_ipv4(&mut self, text: &str, ip: Ipv4Addr) -> anyhow::Result<()> {
        if keep_ipv4(ip) {
            return Ok(());
        }
        let o = ip.octets();
        let net = [o[0], o[1], o[2]];
        let link_local = o[0] == 169 && o[1] == 254;
        let token = if link_local {
            let next = self.link_local_nets.len();
            let index = *self.link_local_nets.entry(net).or_insert(next as u16);
            anyhow::ensure!(index < 256, "more than 256 link-local /24 networks to redact");
            format!("169.254.{index}.{}", o[3])
        } else {
            let next = self.ipv4_nets.len();
            let index = *self.ipv4_nets.entry(net).or_insert(next as u16);
            anyhow::ensure!(
                index < 512,
                "more than 512 distinct /24 networks to redact; 198.18.0.0/15 has no room left"
            );
            format!("198.{}.{}.{}", 18 + index / 256, index % 256, o[3])
        };
        self.learn(Kind::Ipv4, text, 3, ip.to_string(), move |_| token.clone())
    }

    fn learn_ipv6(&mut self, text: &str, ip: Ipv6Addr) -> anyhow::Result<()> {
        if ip.is_unspecified() || ip.is_loopback() {
            return Ok(());
        }
        let link_local = (ip.segments()[0] & 0xffc0) == 0xfe80;
        self.learn(Kind::Ipv6, text, 4, ip.to_string(), move |n| {
            if link_local {
                format!("fe80::{n:x}")
            } else {
                format!("2001:db8::{n:x}")
            }
        })
    }

    /// Records `literal` with the token of its canonical value (made on first sight).
    fn learn(
        &mut self,
        kind: Kind,
        literal: &str,
        category: u8,
        canonical: String,
        make: impl FnOnce(u32) -> String,
    ) -> anyhow::Result<()> {
        let folded = fold(kind, literal);
        if folded.is_empty() || self.known.contains_key(&folded) {
            return Ok(());
        }
        let key = (category, fold(kind, &canonical));
        let token = match self.tokens.get(&key) {
            Some(t) => t.clone(),
            None => {
                let counter = self
                    .counters
                    .get_mut(usize::from(category))
                    .context("redaction category out of range")?;
                *counter += 1;
                anyhow::ensure!(
                    kind != Kind::Mac || *counter < 0x1_0000,
                    "more than 65535 MAC addresses to redact"
                );
                let token = make(*counter);
                self.tokens.insert(key, token.clone());
                token
            }
        };
        let map = &mut self.map;
        let category_map = match kind {
            Kind::Host => &mut map.hosts,
            Kind::Vm => &mut map.vm_names,
            Kind::Datastore => &mut map.datastores,
            Kind::Ipv4 => &mut map.ipv4,
            Kind::Ipv6 => &mut map.ipv6,
            Kind::Mac => &mut map.macs,
            Kind::Uuid => &mut map.uuids,
        };
        category_map.insert(literal.to_string(), token.clone());
        self.known.insert(folded.clone(), self.rules.len());
        self.index = std::cell::OnceCell::new();
        self.rules.push(Rule {
            needle: folded,
            token,
            kind,
        });
        Ok(())
    }

    fn apply_capture(&self, capture: &HostCapture) -> HostCapture {
        let mut out = capture.clone();
        out.host = self.redact_text(&capture.host);
        for raw in out.outputs.values_mut() {
            raw.stdout = self.redact_output(&raw.stdout);
            raw.stderr = self.redact_output(&raw.stderr);
            raw.command = self.redact_text(&raw.command);
            if let Some(f) = &mut raw.failure {
                self.redact_failure(f);
            }
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
        out
    }

    fn redact_failure(&self, f: &mut Failure) {
        f.message = self.redact_text(&f.message);
    }

    /// Replaces every learnt value in `text`, longest match first.
    pub fn redact_text(&self, text: &str) -> String {
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

    /// [`Redactor::redact_text`], re-aligning esxcli tables whose cells changed width.
    pub fn redact_output(&self, text: &str) -> String {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        while let Some(line) = lines.get(i) {
            let is_table = !line.trim().is_empty() && lines.get(i + 1).is_some_and(|l| is_dash_row(l));
            if !is_table {
                out.push_str(&self.redact_text(line));
                i += 1;
                continue;
            }
            // The table runs to a blank line or the next `==> KEY <==` batch section.
            let mut end = i + 2;
            while lines
                .get(end)
                .is_some_and(|l| !l.trim().is_empty() && !l.starts_with("==> "))
            {
                end += 1;
            }
            out.push_str(&self.redact_table(lines.get(i..end).unwrap_or_default()));
            i = end;
        }
        out
    }

    /// `block` = header, dash row, rows (each with its line ending).
    fn redact_table(&self, block: &[&str]) -> String {
        let plain: String = block.iter().map(|l| self.redact_text(l)).collect();
        let Some(dash) = block.get(1) else {
            return plain;
        };
        let spans = dash_spans(dash.trim_end_matches(['\n', '\r']));
        let Some(last_dash) = spans.last().map(|(s, e)| e - s) else {
            return plain;
        };
        struct Cell {
            text: String,
            right: bool,
        }
        let mut rows: Vec<(Vec<Cell>, &str)> = Vec::new();
        let mut widths: Vec<usize> = spans.iter().map(|(s, e)| e - s).collect();
        let mut changed = false;
        for (n, line) in block.iter().enumerate() {
            let body = line.trim_end_matches(['\n', '\r']);
            let ending = &line[body.len()..];
            if n == 1 {
                rows.push((Vec::new(), ending));
                continue;
            }
            let chars: Vec<char> = body.chars().collect();
            let mut cells = Vec::with_capacity(spans.len());
            for (j, &(start, _)) in spans.iter().enumerate() {
                let stop = spans.get(j + 1).map_or(chars.len(), |(next, _)| *next);
                let raw: String = chars
                    .get(start.min(chars.len())..stop.min(chars.len()))
                    .map(|c| c.iter().collect())
                    .unwrap_or_default();
                let trimmed = raw.trim();
                let redacted = self.redact_text(trimmed);
                if redacted.chars().count() != trimmed.chars().count() {
                    changed = true;
                }
                // esxcli right-aligns numbers and booleans: their cell starts with padding.
                let right = raw.starts_with(' ') && !trimmed.is_empty();
                if let Some(w) = widths.get_mut(j) {
                    *w = (*w).max(redacted.chars().count());
                }
                cells.push(Cell { text: redacted, right });
            }
            rows.push((cells, ending));
        }
        if !changed {
            return plain;
        }
        // Pasted copies indent the whole table; keep that indentation.
        let indent = spans.first().map_or(0, |(s, _)| *s);
        let gaps: Vec<usize> = spans
            .windows(2)
            .map(|w| match w {
                [a, b] => b.0.saturating_sub(a.1),
                _ => 2,
            })
            .collect();
        let mut out = String::new();
        for (n, (cells, ending)) in rows.iter().enumerate() {
            let mut line = " ".repeat(indent);
            if n == 1 {
                for (j, w) in widths.iter().enumerate() {
                    // The last dash run keeps its length: esxcli sizes it either to the
                    // header or to the values, and parsers read that column to the end.
                    let width = if j + 1 == spans.len() { last_dash } else { *w };
                    line.push_str(&"-".repeat(width));
                    if let Some(g) = gaps.get(j) {
                        line.push_str(&" ".repeat(*g));
                    }
                }
            } else {
                for (j, cell) in cells.iter().enumerate() {
                    let is_last = j + 1 == cells.len();
                    let w = widths.get(j).copied().unwrap_or(0);
                    if cell.right {
                        line.push_str(&format!("{:>w$}", cell.text));
                    } else if is_last {
                        // The last column is not padded.
                        line.push_str(&cell.text);
                    } else {
                        line.push_str(&format!("{:<w$}", cell.text));
                    }
                    if let Some(g) = gaps.get(j) {
                        line.push_str(&" ".repeat(*g));
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push_str(ending);
        }
        out
    }

    /// Writes the mapping as JSON to `<bundle>.redaction-map.json`, readable by the owner
    /// only, atomically; refuses an existing file unless `force`.
    pub fn write_map(&self, bundle: &Path, force: bool) -> anyhow::Result<PathBuf> {
        let path = map_path(bundle);
        crate::bundle::check_target(&path, force)?;
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // tempfile creates the file with mode 0600 before anything is written into it.
        let mut tmp = tempfile::Builder::new()
            .prefix(".redaction-map.")
            .suffix(".partial")
            .tempfile_in(&dir)
            .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
        serde_json::to_writer_pretty(&mut tmp, &self.map).context("writing the redaction map")?;
        std::io::Write::write_all(&mut tmp, b"\n")?;
        tmp.as_file().sync_all()?;
        let placed = if force {
            tmp.persist(&path).map_err(|e| e.error)
        } else {
            tmp.persist_noclobber(&path).map_err(|e| e.error)
        };
        placed.with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    }
}

/// Where the redaction map of `bundle` goes: `FILE.tar.gz.redaction-map.json`.
pub fn map_path(bundle: &Path) -> PathBuf {
    let mut name = bundle.as_os_str().to_owned();
    name.push(".redaction-map.json");
    PathBuf::from(name)
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

/// A VM or datastore named like a word esxcli itself prints (`true`, `Up`, `9000`,
/// `vmk1`) is left alone: replacing every such word would change what the parsers read and
/// so the verdicts, and the name reveals nothing.
fn is_vocabulary(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "true", "false", "yes", "no", "up", "down", "active", "inactive", "enabled", "disabled", "full", "half",
        "static", "dhcp", "none", "n/a", "unknown", "default", "local", "vsan", "nfs", "vmfs",
    ];
    let lower = name.trim().to_ascii_lowercase();
    let device = ["vmk", "vmnic", "vmrdma", "vmhba", "vusb"].iter().any(|p| {
        lower
            .strip_prefix(p)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    });
    lower.len() < 2
        || device
        || WORDS.contains(&lower.as_str())
        || lower.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

fn fold(kind: Kind, s: &str) -> String {
    if kind.case_insensitive() {
        s.to_ascii_lowercase()
    } else {
        s.to_string()
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

/// A token for a UUID with the exact layout of `shape`: every hex digit replaced by the
/// counter's digits (right-aligned), separators kept, so parsers see the same shape.
fn uuid_token(shape: &str, n: u32) -> String {
    let digits = shape.chars().filter(|c| c.is_ascii_hexdigit()).count();
    let number = format!("{n:0digits$x}");
    let mut fill = number.chars().skip(number.len().saturating_sub(digits));
    shape
        .chars()
        .map(|c| {
            if c.is_ascii_hexdigit() {
                fill.next().unwrap_or('0')
            } else {
                c
            }
        })
        .collect()
}

fn keep_ipv4(ip: Ipv4Addr) -> bool {
    let bits = u32::from(ip);
    let is_mask = bits != 0 && bits.leading_ones() + bits.trailing_zeros() == 32;
    ip.is_unspecified() || ip.is_broadcast() || ip.is_loopback() || is_mask
}

/// Whether the match `text[start..end]` stands alone for its kind: `esx01` matches in
/// `esx01.eth1` but not in `esx010`; `10.0.0.1` not inside `10.0.0.12` or `110.0.0.1`.
fn at_edges(kind: Kind, text: &str, start: usize, end: usize) -> bool {
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
            let sep = |c: Option<char>| matches!(c, Some(':') | Some('-'));
            let glued_before = sep(before) && hex(before2);
            let glued_after = sep(after) && hex(after2);
            !(glued_before || glued_after)
        }
    }
}

fn is_dash_row(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && t.starts_with('-') && t.chars().all(|c| c == '-' || c == ' ')
}

/// (start, end) char offsets of each run of dashes.
fn dash_spans(dash: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in dash.chars().enumerate() {
        match (c == '-', start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, dash.chars().count()));
    }
    spans
}

fn hex_at(b: &[u8], i: usize, n: usize) -> bool {
    b.get(i..i + n).is_some_and(|s| s.iter().all(u8::is_ascii_hexdigit))
}

/// vsish prints `MAC address:00:50:...`, so a colon or dash before a match is a boundary
/// unless it continues a longer hex run (IPv6, a bigger UUID).
fn boundary_before(b: &[u8], i: usize) -> bool {
    let Some(prev) = i.checked_sub(1).and_then(|p| b.get(p)) else {
        return true;
    };
    if prev.is_ascii_alphanumeric() {
        return false;
    }
    if *prev == b':' || *prev == b'-' {
        return !i
            .checked_sub(2)
            .and_then(|p| b.get(p))
            .is_some_and(u8::is_ascii_hexdigit);
    }
    true
}

fn boundary_after(b: &[u8], i: usize) -> bool {
    b.get(i).is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b':')
        && !(b.get(i) == Some(&b'-') && b.get(i + 1).is_some_and(u8::is_ascii_hexdigit))
}

/// Hex groups of the given sizes separated by one of `seps`, standing alone.
fn match_groups(b: &[u8], i: usize, groups: &[usize], seps: &[u8]) -> Option<usize> {
    if !boundary_before(b, i) {
        return None;
    }
    let mut pos = i;
    for (n, &size) in groups.iter().enumerate() {
        if !hex_at(b, pos, size) {
            return None;
        }
        pos += size;
        if n + 1 < groups.len() {
            if !b.get(pos).is_some_and(|c| seps.contains(c)) {
                return None;
            }
            pos += 1;
        }
    }
    boundary_after(b, pos).then_some(pos - i)
}

/// ESXi `56 4d 70 ad 43 f1 5e 25-8a 12 a0 e2 18 2e 38 ec`, RFC 4122 `8-4-4-4-12`,
/// VMFS `8-8-4-12`, vSAN `16-16`.
fn match_uuid(b: &[u8], i: usize) -> Option<usize> {
    if let Some(len) = match_groups(b, i, &[2; 16], b" -") {
        // Only the ESXi layout: spaces, with the single dash in the middle.
        let s = b.get(i..i + len)?;
        if s.get(23) == Some(&b'-') && s.iter().filter(|c| **c == b'-').count() == 1 {
            return Some(len);
        }
    }
    match_groups(b, i, &[8, 4, 4, 4, 12], b"-")
        .or_else(|| match_groups(b, i, &[8, 8, 4, 12], b"-"))
        .or_else(|| match_groups(b, i, &[16, 16], b"-"))
}

fn match_mac(b: &[u8], i: usize) -> Option<usize> {
    match_groups(b, i, &[2; 6], b":").or_else(|| match_groups(b, i, &[2; 6], b"-"))
}

fn match_ipv4(b: &[u8], i: usize) -> Option<(usize, Ipv4Addr)> {
    let prev_ok = i == 0 || b.get(i - 1).is_some_and(|c| !c.is_ascii_alphanumeric() && *c != b'.');
    if !prev_ok || !b.get(i).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let mut pos = i;
    for n in 0..4 {
        let start = pos;
        while pos < b.len() && pos - start < 3 && b.get(pos).is_some_and(u8::is_ascii_digit) {
            pos += 1;
        }
        if pos == start {
            return None;
        }
        if n < 3 {
            if b.get(pos) != Some(&b'.') {
                return None;
            }
            pos += 1;
        }
    }
    let next_ok = b.get(pos).is_none_or(|c| !c.is_ascii_alphanumeric())
        && !(b.get(pos) == Some(&b'.') && b.get(pos + 1).is_some_and(u8::is_ascii_digit));
    if !next_ok {
        return None;
    }
    let text = std::str::from_utf8(b.get(i..pos)?).ok()?;
    text.parse::<Ipv4Addr>().ok().map(|ip| (pos - i, ip))
}

fn match_ipv6(text: &str, i: usize) -> Option<(usize, Ipv6Addr)> {
    let b = text.as_bytes();
    let is_part = |c: &u8| c.is_ascii_hexdigit() || *c == b':' || *c == b'.';
    if i > 0 && b.get(i - 1).is_some_and(|c| is_part(c) || c.is_ascii_alphanumeric()) {
        return None;
    }
    let mut end = i;
    while b.get(end).is_some_and(is_part) {
        end += 1;
    }
    if b.get(end).is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    let candidate = text.get(i..end)?.trim_end_matches(['.', ':']);
    // `Address:` style labels end in one colon; an address has at least two.
    if candidate.matches(':').count() < 2 {
        return None;
    }
    candidate.parse::<Ipv6Addr>().ok().map(|ip| (candidate.len(), ip))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::{CaptureSource, RawOutput};

    fn capture(host: &str, id: &str, stdout: &str) -> HostCapture {
        let mut c = HostCapture::new(host, CaptureSource::Live);
        c.outputs.insert(
            id.to_string(),
            RawOutput {
                stdout: stdout.to_string(),
                exit_status: Some(0),
                ..RawOutput::new(id, "esxcli")
            },
        );
        c
    }

    #[test]
    fn ipv4_table_is_realigned_and_keeps_its_shape() {
        let table = "Name  IPv4 Address    IPv4 Netmask     IPv4 Broadcast  Address Type  Gateway         DHCP DNS\n----  --------------  ---------------  --------------  ------------  --------------  --------\nvmk0  147.75.201.186  255.255.255.248  147.75.201.191  STATIC        147.75.201.185     false\nvmk1  10.8.1.2        255.255.255.248  10.8.1.7        STATIC        0.0.0.0            false\n";
        let mut r = Redactor::new();
        let out = r.redact_captures(&[capture("esx01", "ipv4", table)]).unwrap();
        let text = &out[0].outputs["ipv4"].stdout;
        assert_eq!(
            text,
            "Name  IPv4 Address    IPv4 Netmask     IPv4 Broadcast  Address Type  Gateway         DHCP DNS\n----  --------------  ---------------  --------------  ------------  --------------  --------\nvmk0  198.18.0.186    255.255.255.248  198.18.0.191    STATIC        198.18.0.185       false\nvmk1  198.18.1.2      255.255.255.248  198.18.1.7      STATIC        0.0.0.0            false\n"
        );
    }

    #[test]
    fn short_addresses_widen_the_column() {
        let table = "Name  IP       Up\n----  -------  --\nvmk0  1.2.3.4  true\n";
        let r = {
            let mut r = Redactor::new();
            r.learn_patterns(table).unwrap();
            r
        };
        assert_eq!(
            r.redact_output(table),
            "Name  IP          Up\n----  ----------  --\nvmk0  198.18.0.4  true\n"
        );
    }

    #[test]
    fn right_aligned_cells_stay_right_aligned() {
        let table = "Name    MTU   Addr\n------  ----  -----\nvmk10    900  1.2.3.4\n";
        let mut r = Redactor::new();
        r.learn_name(Kind::Host, "vmk10").unwrap();
        assert_eq!(
            r.redact_output(table),
            "Name      MTU   Addr\n--------  ----  -----\nhost-001   900  1.2.3.4\n"
        );
    }

    #[test]
    fn same_value_same_token_across_case_and_files() {
        let mut r = Redactor::new();
        let mut a = capture(
            "esx01.lab.example.com",
            "props",
            "MAC address:00:50:56:8a:9f:c2\nseen on esx01\n",
        );
        a.vmx_files.push(crate::collect::VmxFile {
            path: "vmfs/volumes/ds 1/hpc01/hpc01.vmx".to_string(),
            content: "displayName = \"hpc01\"\nethernet1.generatedAddress = \"00:50:56:8A:9F:C2\"\n".to_string(),
        });
        let out = r.redact_captures(&[a]).unwrap();
        assert_eq!(out[0].host, "host-001");
        assert_eq!(
            out[0].outputs["props"].stdout,
            "MAC address:00:00:5e:00:00:01\nseen on host-001\n"
        );
        assert_eq!(out[0].vmx_files[0].path, "vmfs/volumes/datastore-001/vm-001/vm-001.vmx");
        assert_eq!(
            out[0].vmx_files[0].content,
            "displayName = \"vm-001\"\nethernet1.generatedAddress = \"00:00:5E:00:00:01\"\n"
        );
    }

    #[test]
    fn uuids_keep_their_layout() {
        let text = "UUID: 56 4d 70 ad 43 f1 5e 25-8a 12 a0 e2 18 2e 38 ec\nid 5cce4874-40c5c88e-a836-003048fc4ffe\nvsan:523d6567f1251470-01fff6533f4bec49\n";
        let mut r = Redactor::new();
        r.learn_patterns(text).unwrap();
        assert_eq!(
            r.redact_text(text),
            "UUID: 00 00 00 00 00 00 00 00-00 00 00 00 00 00 00 01\nid 00000000-00000000-0000-000000000002\nvsan:0000000000000000-0000000000000003\n"
        );
    }

    #[test]
    fn ipv6_and_kept_addresses() {
        let text =
            "fe80::250:56ff:fe69:96f0 2001:470:1f0b::1 ::1 0.0.0.0 255.255.255.0 127.0.0.1 169.254.1.1 version 8.0.2\n";
        let mut r = Redactor::new();
        r.learn_patterns(text).unwrap();
        assert_eq!(
            r.redact_text(text),
            "fe80::1 2001:db8::2 ::1 0.0.0.0 255.255.255.0 127.0.0.1 169.254.0.1 version 8.0.2\n"
        );
    }

    #[test]
    fn matches_respect_edges() {
        let mut r = Redactor::new();
        r.learn_patterns("10.0.0.1").unwrap();
        r.learn_name(Kind::Vm, "hpc01").unwrap();
        assert_eq!(
            r.redact_text("10.0.0.1 10.0.0.12 110.0.0.1 hpc01.eth1 hpc010 hpc01-b"),
            "198.18.0.1 10.0.0.12 110.0.0.1 vm-001.eth1 hpc010 hpc01-b"
        );
    }

    #[test]
    fn host_labels_with_user_and_port_hide_the_bare_host_too() {
        let mut r = Redactor::new();
        r.learn_host("root@esx07.lab:2222").unwrap();
        r.learn_host("10.1.2.3:22").unwrap();
        assert_eq!(
            r.redact_text("root@esx07.lab:2222 esx07.lab esx07 10.1.2.3:22 10.1.2.3"),
            "host-001 host-001 host-001 host-002 198.18.0.3"
        );
    }

    #[test]
    fn vm_names_that_are_esxcli_words_are_left_alone() {
        let mut r = Redactor::new();
        for name in ["true", "Up", "9000", "vmk1", "x", "hpc01"] {
            r.learn_name(Kind::Vm, name).unwrap();
        }
        assert_eq!(r.redact_text("true Up 9000 vmk1 x hpc01"), "true Up 9000 vmk1 x vm-001");
    }

    #[test]
    fn command_line_keeps_options_only() {
        let args: Vec<String> = [
            "/usr/bin/pvrdma-doctor",
            "esx01",
            "--bundle=x.tgz",
            "--redact",
            "-l",
            "root",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            redact_command_line(&args),
            [
                "pvrdma-doctor",
                "<redacted>",
                "--bundle=<redacted>",
                "--redact",
                "-l",
                "<redacted>"
            ]
        );
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Text shaped like esxcli output: tables, records, addresses, odd bytes.
        fn output_like() -> impl Strategy<Value = String> {
            let piece = prop_oneof![
                Just("Name  IP Address  MTU\n----  ----------  ---\n".to_string()),
                Just("   MAC Address: 00:50:56:8A:9f:c2\n".to_string()),
                "[a-z]{1,8}  10\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}  [0-9]{1,4}\n",
                "[ -~]{0,30}\n",
                "\\PC{0,12}",
                Just("fe80::250:56ff:fe69:96f0 ".to_string()),
                Just("/vmfs/volumes/ds1/vm a/vm a.vmx\n".to_string()),
                Just("56 4d 70 ad 43 f1 5e 25-8a 12 a0 e2 18 2e 38 ec\n".to_string()),
            ];
            proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
        }

        proptest! {
            #[test]
            fn never_panics_and_learnt_values_never_survive(text in output_like()) {
                let mut r = Redactor::new();
                prop_assert_eq!(r.redact_output(&text), text.clone());
                r.learn_patterns(&text).unwrap();
                r.learn_datastores_and_vm_dirs(&text).unwrap();
                let out = r.redact_output(&text);
                let m = r.map();
                // Long hex values never survive, wherever they stand (case folded).
                let folded = out.to_ascii_lowercase();
                for original in m.macs.keys().chain(m.uuids.keys()).chain(m.ipv6.keys()) {
                    prop_assert!(!folded.contains(&original.to_ascii_lowercase()), "{:?} survives in {:?}", original, out);
                }
                // Addresses and names never survive standing alone.
                for original in m.ipv4.keys().chain(m.datastores.keys()).chain(m.vm_names.keys()) {
                    let standalone = out.match_indices(original.as_str()).any(|(at, _)| {
                        at_edges(Kind::Ipv4, &out, at, at + original.len())
                    });
                    let inside_a_token = m.ipv4.values().chain(m.vm_names.values()).chain(m.datastores.values())
                        .any(|t| t.contains(original.as_str()));
                    prop_assert!(!standalone || inside_a_token, "{:?} survives in {:?}", original, out);
                }
            }
        }
    }

    #[test]
    fn map_file_is_private_and_next_to_the_bundle() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join("b.tar.gz");
        let mut r = Redactor::new();
        r.learn_host("esx01").unwrap();
        let path = r.write_map(&bundle, false).unwrap();
        assert_eq!(path, dir.path().join("b.tar.gz.redaction-map.json"));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(json["hosts"]["esx01"], "host-001");
        assert!(r.write_map(&bundle, false).is_err());
        assert!(r.write_map(&bundle, true).is_ok());
    }
}

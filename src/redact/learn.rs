//! Learning the values to hide: host labels, datastore and VM names from paths and
//! `Display Name:` lines, then UUIDs, MACs and IP addresses found by shape anywhere.
use super::{Kind, Redactor, Rule};
use anyhow::Context;
use pvrdma_engine::capture::HostCapture;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The text of a failure: its message, and its detail (read too, so a detail that is not
/// part of its message, as a damaged bundle may hold, still has its values learnt).
fn failure_texts(f: &pvrdma_engine::capture::Failure) -> impl Iterator<Item = &str> {
    std::iter::once(f.message.as_str()).chain(f.detail.as_deref())
}

impl Redactor {
    /// Learns every value to hide from one capture. A value one host's output names may be
    /// another host's (a peer's address): learn from every capture of the run before any
    /// is redacted.
    pub(crate) fn learn_capture(&mut self, capture: &HostCapture) -> anyhow::Result<()> {
        self.learn_host(&capture.host)?;
        // Named things first, so a datastore id inside a path becomes `datastore-NNN`
        // rather than a UUID-shaped token (one value, one token).
        let mut texts: Vec<&str> = Vec::new();
        for out in capture.outputs.values() {
            texts.extend([out.stdout.as_str(), out.stderr.as_str(), out.command.as_str()]);
            if let Some(f) = &out.failure {
                texts.extend(failure_texts(f));
            }
        }
        texts.extend(capture.missing.values().flat_map(failure_texts));
        if let Some(probe) = &capture.probe {
            for out in probe.outputs.values() {
                texts.extend([out.stdout.as_str(), out.stderr.as_str(), out.command.as_str()]);
                if let Some(f) = &out.failure {
                    texts.extend(failure_texts(f));
                }
            }
            texts.extend(probe.missing.values().flat_map(failure_texts));
        }
        if let Some(e) = &capture.error {
            texts.extend(failure_texts(e));
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
        // The VM names vCenter's API gave (the `name` of each VirtualMachine).
        if let Some(out) = capture.outputs.get(pvrdma_engine::catalogue::VSPHERE_VM_CONFIG) {
            for vm in pvrdma_parsers::parse_vsphere_vm_config(&out.stdout).unwrap_or_default() {
                if let Some(name) = vm.config.display_name {
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

    pub(super) fn learn_host(&mut self, host: &str) -> anyhow::Result<()> {
        // The label is what the user typed: `root@esx01:2222`, `[fe80::1]:22`, `10.0.0.5`.
        let bare = crate::hosts::split_label(host).host;
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
    pub(super) fn learn_datastores_and_vm_dirs(&mut self, text: &str) -> anyhow::Result<()> {
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
    pub(super) fn learn_display_names(&mut self, text: &str) -> anyhow::Result<()> {
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

    pub(super) fn learn_patterns(&mut self, text: &str) -> anyhow::Result<()> {
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

    pub(super) fn learn_name(&mut self, kind: Kind, value: &str) -> anyhow::Result<()> {
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

    pub(super) fn learn_hex(&mut self, kind: Kind, value: &str) -> anyhow::Result<()> {
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

    pub(super) fn learn_ipv4(&mut self, text: &str, ip: Ipv4Addr) -> anyhow::Result<()> {
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

    pub(super) fn learn_ipv6(&mut self, text: &str, ip: Ipv6Addr) -> anyhow::Result<()> {
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
    pub(super) fn learn(
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

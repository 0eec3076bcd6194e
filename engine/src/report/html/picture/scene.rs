//! What the picture draws of each band (a host, or hosts folded with identical results):
//! its header, its VMs' PVRDMA adapters, its switches with the PVRDMA vmknic, its RDMA
//! devices with their uplinks, as lines of labelled text. Positions are `draw.rs`'s.
use super::super::{adapters::verdict_words, fold_names, hosts::host_mark};
use crate::diagnose::{CheckId, HostDiagnosis, HostTopology, RdmaPath, Status, Verdict};

/// Why a host was not diagnosed: lines of this many characters, at most this many lines.
const DOWN_LINE_CHARS: usize = 118;
const DOWN_LINES: usize = 3;

/// `text` in lines of at most `width` characters, broken at spaces, at most `lines` of
/// them (the last one shortened, marked with `…`).
fn wrap(text: &str, width: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    if out.len() > lines {
        let rest = out.split_off(lines - 1).join(" ");
        out.push(super::super::escape::shorten(&rest, width));
    }
    out
}

/// Adapter rows a one-host band draws one by one; more are folded into node sets.
const ROWS_ONE_BY_ONE: usize = 6;
/// Rows a band draws at most; the adapter table has them all.
pub(super) const MAX_ROWS: usize = 12;

/// A piece of a line and the class that colours it (`""`: plain).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Span {
    pub text: String,
    pub class: &'static str,
}

pub(super) type Line = Vec<Span>;

fn span(text: impl Into<String>, class: &'static str) -> Span {
    Span {
        text: text.into(),
        class,
    }
}

/// One band.
pub(super) struct Band<'a> {
    pub hosts: Vec<&'a HostDiagnosis>,
    /// The folded host set.
    pub title: String,
    /// What a path's label calls the band: the host, or `900 hosts (ok)`.
    pub short: String,
    pub head: Line,
    /// A host that could not be diagnosed: why, instead of its parts.
    pub down: Option<Vec<Line>>,
    pub rows: Vec<VmRow>,
    /// Rows not drawn (the adapter table has them).
    pub rows_left_out: usize,
    pub switches: Vec<Part>,
    pub devices: Vec<Part>,
    /// The hosts of the band differ in devices or switches: what is drawn is the first's.
    pub differs: bool,
    /// The host checks that fail there (and across hosts, involving it), by id: why its
    /// adapters fall back.
    pub failing: Vec<String>,
}

/// A row of adapters: one VM's adapter, or alike ones folded.
pub(super) struct VmRow {
    pub vms: Vec<String>,
    pub adapter: u32,
    pub verdict: Verdict,
    pub predicted: Option<Verdict>,
    /// The switch its port is on, when known.
    pub switch: Option<String>,
}

impl VmRow {
    pub fn label(&self) -> String {
        match self.vms.as_slice() {
            [one] => one.clone(),
            many => format!(
                "{} VMs: {}",
                super::super::thousands(many.len() as u64),
                fold_names(many)
            ),
        }
    }

    pub fn verdict_line(&self) -> Line {
        let (mark, word) = verdict_words(self.verdict);
        let class = verdict_class(self.verdict);
        let mut line = vec![
            span(format!("adapter {} · ", self.adapter), ""),
            span(format!("{mark} {word}"), class),
        ];
        if let (Verdict::Unknown, Some(p)) = (self.verdict, self.predicted) {
            line.push(span(format!(" (predicted {})", verdict_words(p).1), "predicted"));
        }
        line
    }

    /// The wire's classes: the verdict, and `predicted` when it is a prediction.
    pub fn wire_class(&self) -> String {
        match (self.verdict, self.predicted) {
            (Verdict::Unknown, Some(p)) => format!("{} predicted", verdict_words(p).1),
            (v, _) => verdict_words(v).1.to_string(),
        }
    }
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Hca => "ok",
        Verdict::TcpFallback => "fail",
        Verdict::Unknown => "unknown",
    }
}

/// A switch or an RDMA device, as lines; `key` names it for the wires.
pub(super) struct Part {
    pub key: String,
    pub lines: Vec<Line>,
    /// Drawn as failing (outline).
    pub bad: bool,
    /// Drawn as not known for sure (dashed outline).
    pub unsure: bool,
    /// A device: its switch, whether it carries traffic, whether PVRDMA uses it.
    pub switch: Option<String>,
    pub active: bool,
}

/// The band of a group of hosts (the first stands for all).
pub(super) fn band<'a>(group: &[&'a HostDiagnosis], fold: bool) -> Band<'a> {
    let first = group[0];
    let names: Vec<&str> = group.iter().map(|h| h.host.as_str()).collect();
    let title = fold_names(&names);
    let status = crate::diagnose::status_name(first.status);
    // A folded set can be long: its count and state lead, the set itself comes last.
    let short = match group.len() {
        1 => title.clone(),
        n => format!("{} hosts ({status})", super::super::thousands(n as u64)),
    };
    let lead = match group.len() {
        1 => title.clone(),
        n => format!("{} hosts", super::super::thousands(n as u64)),
    };
    let mut head = vec![
        span(lead, "head"),
        span("  ", ""),
        span(
            format!("{} {status}", host_mark(first.status)),
            status_class(first.status),
        ),
    ];
    if let Some(v) = &first.esxi_version {
        head.push(span(format!("  ·  ESXi {v}"), "small"));
    }
    if first.configuration_only {
        head.push(span("  ·  configuration only (vSphere API, no SSH)", "predicted"));
    }
    let down = (first.checks.is_empty() && first.vms.is_empty())
        .then_some(first.error.as_ref())
        .flatten()
        .map(|e| {
            let text = format!(
                "✗ {}: {}",
                crate::report::human::kind_label(e.kind),
                e.shown_under_host()
            );
            wrap(&text, DOWN_LINE_CHARS, DOWN_LINES)
                .into_iter()
                .map(|l| vec![span(l, "fail")])
                .collect::<Vec<Line>>()
        });
    let (rows, rows_left_out) = rows(group, fold);
    let switches = switches(first, &rows, group.len() > 1);
    let devices = devices(first);
    let differs = group.iter().any(|h| h.topology != first.topology);
    let failing = first
        .checks
        .iter()
        .filter(|c| c.status == Status::Fail)
        .map(|c| c.id.to_string())
        .chain(first.fleet_failures.iter().map(|id| format!("{id} (across hosts)")))
        .collect();
    Band {
        hosts: group.to_vec(),
        title,
        short,
        head,
        down,
        rows,
        rows_left_out,
        switches,
        devices,
        differs,
        failing,
    }
}

fn status_class(status: crate::diagnose::HostStatus) -> &'static str {
    use crate::diagnose::HostStatus as S;
    match status {
        S::Ok => "ok",
        S::Problems | S::Unreachable | S::Error => "fail",
        S::Incomplete | S::Interrupted => "unknown",
    }
}

/// The band's adapter rows: one by one for a host with few, else folded as the text
/// report's table folds them (by what the picture draws of a row).
fn rows(group: &[&HostDiagnosis], fold: bool) -> (Vec<VmRow>, usize) {
    let all: Vec<VmRow> = group
        .iter()
        .flat_map(|h| {
            h.vms.iter().flat_map(|vm| {
                vm.adapters.iter().map(|a| VmRow {
                    vms: vec![vm.name.clone()],
                    adapter: a.index,
                    verdict: a.verdict,
                    predicted: a.predicted,
                    switch: a.port.as_ref().and_then(|p| p.vswitch.clone()),
                })
            })
        })
        .collect();
    let fold = fold && (group.len() > 1 || all.len() > ROWS_ONE_BY_ONE);
    let hosts: Vec<&str> = group
        .iter()
        .flat_map(|h| {
            h.vms
                .iter()
                .flat_map(move |vm| vm.adapters.iter().map(move |_| h.host.as_str()))
        })
        .collect();
    let indexed: Vec<(usize, &VmRow)> = all.iter().enumerate().collect();
    let folded = crate::report::human::fold_rows(
        &indexed,
        fold,
        |(i, r)| (r.vms[0].as_str(), hosts[*i]),
        |(_, a), (_, b)| {
            a.adapter == b.adapter && a.verdict == b.verdict && a.predicted == b.predicted && a.switch == b.switch
        },
    );
    let mut rows: Vec<VmRow> = folded
        .into_iter()
        .map(|f| VmRow {
            vms: f.vms,
            adapter: f.row.1.adapter,
            verdict: f.row.1.verdict,
            predicted: f.row.1.predicted,
            switch: f.row.1.switch.clone(),
        })
        .collect();
    let left_out = rows.len().saturating_sub(MAX_ROWS);
    rows.truncate(MAX_ROWS);
    (rows, left_out)
}

/// The switches: each vDS holding an RDMA uplink, then any other switch an adapter's
/// port or the PVRDMA vmknic is on (a standard vSwitch: no HCA there).
fn switches(h: &HostDiagnosis, rows: &[VmRow], several: bool) -> Vec<Part> {
    let t: &HostTopology = &h.topology;
    let mut out: Vec<Part> = Vec::new();
    for s in t.devices.iter().filter_map(|d| d.switch.as_ref()) {
        if out.iter().any(|p| p.key == s.name) {
            continue;
        }
        let mtu = s.mtu.map_or("MTU ?".to_string(), |m| format!("MTU {m}"));
        let mut lines = vec![vec![span(format!("vDS {}", s.name), "head")]];
        match s.uplinks.as_slice() {
            [one] => lines.push(vec![span(format!("{mtu} · uplink {one}"), "")]),
            // PVRDMA does not support teaming: the HCA must be the vDS's only uplink.
            many => {
                lines.push(vec![span(mtu, "")]);
                lines.push(vec![span(
                    format!("✗ {} uplinks: {}", many.len(), many.join(", ")),
                    "fail",
                )]);
            }
        }
        out.push(Part {
            key: s.name.clone(),
            lines,
            bad: s.uplinks.len() > 1,
            unsure: false,
            switch: None,
            active: true,
        });
    }
    let vmknic_switch = t.vmknic_switch.clone();
    let others = rows
        .iter()
        .filter_map(|r| r.switch.clone())
        .chain(vmknic_switch.clone());
    for name in others {
        if out.iter().any(|p| p.key == name) {
            continue;
        }
        // Without the device list, which switch holds an HCA is not known.
        let known = t.devices_unknown.is_none();
        let line = if known {
            span("✗ no RDMA uplink on this switch", "fail")
        } else {
            span("? RDMA uplinks not known", "unknown")
        };
        out.push(Part {
            key: name.clone(),
            lines: vec![vec![span(name, "head")], vec![line]],
            bad: known,
            unsure: !known,
            switch: None,
            active: false,
        });
    }
    vmknic_lines(h, &mut out, vmknic_switch.as_deref(), several);
    out
}

/// The PVRDMA vmknic under the switch it is on (else under the first): tagged or not.
/// `several`: the band folds hosts, each with its own address (the Hosts section lists them).
fn vmknic_lines(h: &HostDiagnosis, parts: &mut [Part], on: Option<&str>, several: bool) {
    let tagged = h.checks.iter().find(|c| c.id == CheckId::PvrdmaVmknicTagged);
    let line = match (&h.pvrdma_vmknic, tagged.map(|c| c.status)) {
        (Some(v), _) => {
            let address = match (several, v.ipv4.as_deref()) {
                (true, _) => "an address per host",
                (false, Some(a)) => a,
                (false, None) => "no IPv4 address",
            };
            let mtu = v.mtu.map(|m| format!(" · MTU {m}")).unwrap_or_default();
            vec![
                vec![span(format!("PVRDMA vmknic {}", v.name), "")],
                vec![span(format!("{address}{mtu}"), "")],
            ]
        }
        (None, Some(Status::Fail)) => vec![vec![span("✗ no vmknic tagged for PVRDMA", "fail")]],
        (None, Some(Status::Unknown)) => vec![vec![span("? PVRDMA vmknic not known", "unknown")]],
        _ => return,
    };
    let at = on
        .and_then(|name| parts.iter().position(|p| p.key == name))
        .unwrap_or(0);
    if let Some(part) = parts.get_mut(at) {
        part.lines.extend(line);
    }
}

/// The RDMA devices with their uplinks; what is not known says so.
fn devices(h: &HostDiagnosis) -> Vec<Part> {
    let t = &h.topology;
    if let Some(why) = &t.devices_unknown {
        return vec![Part {
            key: String::new(),
            lines: vec![
                vec![span("? RDMA devices not known", "unknown")],
                vec![span(super::super::escape::shorten(why, 60), "small")],
            ],
            bad: false,
            unsure: true,
            switch: None,
            active: false,
        }];
    }
    if t.devices.is_empty() {
        if h.checks.is_empty() {
            return Vec::new();
        }
        return vec![Part {
            key: String::new(),
            lines: vec![
                vec![span("✗ no RDMA device", "fail")],
                vec![span("no HCA: traffic to other hosts over TCP", "small")],
            ],
            bad: true,
            unsure: false,
            switch: None,
            active: false,
        }];
    }
    t.devices.iter().map(|d| device(d, t.devices.len() > 1)).collect()
}

fn device(d: &RdmaPath, several: bool) -> Part {
    let state = if d.active {
        span(format!("✓ {}", d.state), "ok")
    } else {
        span(format!("✗ {}", d.state), "fail")
    };
    let mut lines = vec![vec![span(d.device.clone(), "head"), span("  ", ""), state]];
    let mut unsure = false;
    match &d.uplink {
        None => lines.push(vec![span("✗ no paired uplink", "fail")]),
        Some(u) => {
            let link = match u.link.as_deref() {
                Some(l) if l.eq_ignore_ascii_case("up") => span(format!("link {l}"), "ok"),
                Some(l) => span(format!("link {l}"), "fail"),
                None => span("link ?", "unknown"),
            };
            let speed = u.speed_mbps.map(speed_text).unwrap_or_default();
            lines.push(vec![span(format!("{} · ", u.name), ""), link, span(speed, "")]);
            match u.mtu {
                Some(m) => lines.push(vec![span(format!("MTU {m}"), "")]),
                None => {
                    unsure = true;
                    let why = if u.unknown_why.as_deref() == Some(crate::diagnose::API_GIVES_NO_NIC_MTU) {
                        "(not in the vSphere API)"
                    } else {
                        "(not known)"
                    };
                    lines.push(vec![span("MTU ?", "unknown"), span(format!(" {why}"), "small")]);
                }
            }
        }
    }
    if several && d.in_use {
        lines.push(vec![span("the device PVRDMA uses", "small")]);
    }
    let switch = d.switch.as_ref().map(|s| s.name.clone());
    if switch.is_none() {
        lines.push(vec![span("✗ its uplink is on no vDS", "fail")]);
    }
    Part {
        key: d.device.clone(),
        lines,
        bad: !d.active || d.uplink.is_none() || switch.is_none(),
        unsure,
        switch,
        active: d.active,
    }
}

/// `100 Gbps`, `25 Gbps`, `1000 Mbps`.
fn speed_text(mbps: u64) -> String {
    if mbps >= 1000 && mbps.is_multiple_of(1000) {
        format!(" · {} Gbps", mbps / 1000)
    } else {
        format!(" · {mbps} Mbps")
    }
}

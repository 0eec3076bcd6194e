//! The path picture: an inline SVG of the fleet, folded as the text report folds it. Each
//! band is a host or a set of hosts with identical results: the VMs' PVRDMA adapters
//! (with their verdicts), the switches their ports are on (with the PVRDMA vmknic), the
//! RDMA devices with their uplinks (state, link, speed, MTU), wired to the RDMA network.
//! Paths between adapters of different hosts are drawn between bands, coloured and
//! labelled by transport class (`rdma`, `tcp`, `blocked`, `unknown`), a path predicted
//! from the configuration dashed and labelled so; pairs on one host (`memcpy`) are a
//! bracket on the band's adapters. At fleet scale problem paths are drawn and healthy ones
//! counted. Everything drawn is text in the page (read with scripts off, found by Ctrl-F,
//! printed), and the SVG has a title and a description for a screen reader.
use super::{count, escape, thousands, Page};
use crate::diagnose::HostStatus;
use std::collections::HashMap;
use std::fmt::Write;

mod draw;
mod paths;
mod scene;

/// A fleet this small is drawn host by host, whatever the folding: every path between
/// two hosts then has its own line.
const ONE_BY_ONE: usize = 8;
/// Bands drawn at most (hosts with problems first); the tables list every host.
const MAX_BANDS: usize = 60;
/// Paths drawn at most: problem paths first, healthy ones only when they all fit.
const MAX_EDGES: usize = 40;

/// A path between two bands (`a == b`: between different hosts of one band).
pub(super) struct Edge {
    a: usize,
    b: usize,
    /// `rdma`, `tcp`, `blocked`, `unknown`.
    class: &'static str,
    predicted: bool,
    pairs: u64,
}

impl Edge {
    fn mark(&self) -> &'static str {
        match self.class {
            "rdma" => "✓",
            "tcp" => "✗",
            "blocked" => "⊘",
            _ => "?",
        }
    }

    fn label(&self) -> String {
        let predicted = if self.predicted { " (predicted)" } else { "" };
        format!(
            "{} {}{predicted} · {}",
            self.mark(),
            self.class,
            count(self.pairs, "adapter pair", "adapter pairs")
        )
    }

    fn healthy(&self) -> bool {
        self.class == "rdma"
    }
}

pub(super) fn section(out: &mut String, p: &Page) {
    out.push_str(
        "<section id=\"paths\" aria-labelledby=\"h-paths\">\n<h2 id=\"h-paths\">Paths between PVRDMA adapters</h2>\n",
    );
    legend(out);
    let chosen = choose_groups(p);
    let mut bands: Vec<scene::Band> = chosen.iter().map(|g| scene::band(g, p.fold)).collect();
    let mut band_of: HashMap<&str, usize> = HashMap::new();
    for (i, g) in chosen.iter().enumerate() {
        for h in g.iter() {
            band_of.insert(h.host.as_str(), i);
        }
    }
    let (pairs, memcpy) = paths::band_pairs(p.d, &band_of, bands.len());
    for (band, n) in bands.iter_mut().zip(&memcpy) {
        if *n > 0 {
            band.head.push(scene_span(
                format!("  ·  ↻ memcpy {} (same host)", count(*n, "pair", "pairs")),
                "memcpy",
            ));
        }
    }
    let mut all_edges: Vec<Edge> = Vec::new();
    for (&(a, b), c) in &pairs {
        for (class, predicted, n) in [
            ("blocked", false, c.blocked),
            ("tcp", false, c.tcp),
            ("tcp", true, c.predicted_tcp),
            ("unknown", false, c.unknown),
            ("rdma", false, c.rdma),
            ("rdma", true, c.predicted_rdma),
        ] {
            if n > 0 {
                all_edges.push(Edge {
                    a,
                    b,
                    class,
                    predicted,
                    pairs: n,
                });
            }
        }
    }
    let (edges, left_out) = choose_edges(all_edges);
    let placed = draw::place(&bands);
    // A folded band's set comes last in its header, after what must not be cut.
    for band in bands.iter_mut().filter(|b| b.hosts.len() > 1) {
        band.head.push(scene_span(format!("  ·  {}", band.title), "small"));
    }
    let names: Vec<String> = bands.iter().map(|b| b.short.clone()).collect();
    let mut body = String::new();
    draw::bus(&mut body, &placed);
    for ((band, at), n) in bands.iter().zip(&placed).zip(&memcpy) {
        draw::band(&mut body, band, at);
        if *n > 0 {
            draw::memcpy(&mut body, at, *n);
        }
    }
    let (width, height) = draw::edges(&mut body, &edges, &placed, &names);
    let width = width.max(draw::X_BUS + 40);
    let _ = write!(
        out,
        "<figure class=\"picture\">\n<svg viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" role=\"img\" \
         aria-labelledby=\"picture-title picture-desc\">\n<title id=\"picture-title\">{}</title>\n<desc id=\"picture-desc\">{}</desc>\n{body}</svg>\n",
        escape::text(&title(p)),
        escape::text(&description(&bands, &edges)),
    );
    caption(out, p, chosen.len(), &left_out);
    out.push_str("</figure>\n</section>\n");
}

fn scene_span(text: String, class: &'static str) -> scene::Span {
    scene::Span { text, class }
}

/// The groups to draw: every one, or past [`MAX_BANDS`] those with problems first, in
/// report order.
fn choose_groups<'a>(p: &Page<'a>) -> Vec<Vec<&'a crate::diagnose::HostDiagnosis>> {
    let groups: Vec<_> = if p.d.hosts.len() <= ONE_BY_ONE {
        crate::report::human::group_hosts(&p.d.hosts, false)
    } else {
        p.groups.iter().filter(|g| !g.is_empty()).cloned().collect()
    };
    if groups.len() <= MAX_BANDS {
        return groups;
    }
    let mut keep: Vec<bool> = groups.iter().map(|g| g[0].status != HostStatus::Ok).collect();
    let mut room = MAX_BANDS.saturating_sub(keep.iter().filter(|k| **k).count());
    for k in keep.iter_mut() {
        if !*k && room > 0 {
            *k = true;
            room -= 1;
        }
    }
    let mut chosen: Vec<_> = groups
        .into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(g, _)| g)
        .collect();
    chosen.truncate(MAX_BANDS);
    chosen
}

/// What is drawn and what only counted: problem paths first; healthy ones only when all
/// of them fit beside the problems.
struct LeftOut {
    problems: usize,
    healthy_pairs: u64,
    predicted_healthy_pairs: u64,
}

fn choose_edges(all: Vec<Edge>) -> (Vec<Edge>, LeftOut) {
    let (healthy, problems): (Vec<Edge>, Vec<Edge>) = all.into_iter().partition(Edge::healthy);
    let mut left = LeftOut {
        problems: problems.len().saturating_sub(MAX_EDGES),
        healthy_pairs: 0,
        predicted_healthy_pairs: 0,
    };
    let mut edges: Vec<Edge> = problems.into_iter().take(MAX_EDGES).collect();
    if edges.len() + healthy.len() <= MAX_EDGES {
        edges.extend(healthy);
    } else {
        for e in healthy {
            if e.predicted {
                left.predicted_healthy_pairs += e.pairs;
            } else {
                left.healthy_pairs += e.pairs;
            }
        }
    }
    (edges, left)
}

fn title(p: &Page) -> String {
    let hosts: Vec<&str> = p.d.hosts.iter().map(|h| h.host.as_str()).collect();
    format!("PVRDMA paths of {}", escape::shorten(&super::fold_names(&hosts), 120))
}

/// The picture in words, for a screen reader: each band, then each path.
fn description(bands: &[scene::Band], edges: &[Edge]) -> String {
    // The spans without the spacing that lays them out.
    let line_text = |l: &scene::Line| {
        l.iter()
            .map(|s| s.text.trim())
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut parts: Vec<String> = Vec::new();
    for b in bands.iter().take(50) {
        let mut s = line_text(&b.head);
        if let Some(down) = &b.down {
            let lines: Vec<String> = down.iter().map(line_text).collect();
            s.push_str(&format!(": {}", lines.join(" ")));
        }
        for part in b.switches.iter().chain(&b.devices) {
            let lines: Vec<String> = part.lines.iter().map(line_text).collect();
            s.push_str(&format!("; {}", lines.join(", ")));
        }
        for r in &b.rows {
            s.push_str(&format!("; {} {}", r.label(), line_text(&r.verdict_line())));
        }
        parts.push(s);
    }
    if bands.len() > 50 {
        parts.push(format!("and {} more host sets", bands.len() - 50));
    }
    for e in edges.iter().take(60) {
        let between = if e.a == e.b {
            format!("among {}", bands[e.a].title)
        } else {
            format!("between {} and {}", bands[e.a].title, bands[e.b].title)
        };
        parts.push(format!("path {} {between}", e.label()));
    }
    if edges.len() > 60 {
        parts.push(format!("and {} more paths", edges.len() - 60));
    }
    let mut text = parts.join(". ");
    text.push('.');
    text
}

/// Under the picture: what it does not draw.
fn caption(out: &mut String, p: &Page, bands: usize, left: &LeftOut) {
    let mut notes: Vec<String> = Vec::new();
    let groups = if p.d.hosts.len() <= ONE_BY_ONE {
        p.d.hosts.len()
    } else {
        p.groups.len()
    };
    if bands < groups {
        notes.push(format!(
            "{} of {} host sets are drawn (those with problems first); the tables below list every host",
            bands, groups
        ));
    } else if p.d.hosts.len() > bands {
        notes.push(format!(
            "{} drawn as {}: hosts with identical results share one, as in the text report",
            count(p.d.hosts.len() as u64, "host", "hosts"),
            count(bands as u64, "band", "bands")
        ));
    }
    if left.problems > 0 {
        notes.push(format!(
            "{} more problem paths are not drawn: see Transport",
            thousands(left.problems as u64)
        ));
    }
    if left.healthy_pairs > 0 {
        notes.push(format!(
            "healthy paths are counted, not drawn: {} through the HCA (rdma)",
            count(left.healthy_pairs, "adapter pair", "adapter pairs")
        ));
    }
    if left.predicted_healthy_pairs > 0 {
        notes.push(format!(
            "{} predicted rdma from the configuration, not drawn",
            count(left.predicted_healthy_pairs, "adapter pair", "adapter pairs")
        ));
    }
    if p.d.transport.totals.total() == 0 {
        notes.push("no two adapters of different VMs: no path to draw".to_string());
    }
    if notes.is_empty() {
        return;
    }
    let mut text = notes.join("; ");
    if let Some(c) = text.get(..1) {
        text = format!("{}{}", c.to_uppercase(), text.get(1..).unwrap_or(""));
    }
    let _ = writeln!(out, "<figcaption>{}.</figcaption>", escape::text(&text));
}

/// The legend, in words beside a sample of each line.
fn legend(out: &mut String) {
    let items: [(&str, &str, &str); 7] = [
        (
            "edge rdma",
            "✓ rdma",
            "both adapters on the HCA: RDMA between the hosts",
        ),
        ("edge tcp", "✗ tcp", "an end falls back to TCP"),
        (
            "edge blocked",
            "⊘ blocked",
            "HCA at both ends, but a failing check across hosts breaks the path",
        ),
        ("edge memcpy", "↻ memcpy", "VMs on the same host: memory copy"),
        ("edge unknown", "? unknown", "an adapter's verdict is unknown"),
        (
            "edge rdma predicted",
            "predicted",
            "dashed: what the configuration predicts (read without SSH), not observed",
        ),
        (
            "wire down",
            "✗ down",
            "a device, link or part that fails (red outline); ? and a dashed outline: not known",
        ),
    ];
    out.push_str("<ul class=\"legend\" aria-label=\"Legend\">");
    for (class, name, meaning) in items {
        let _ = write!(
            out,
            "<li><svg width=\"36\" height=\"12\" aria-hidden=\"true\"><path class=\"{class}\" d=\"M2 6H34\"/></svg>\
             <strong>{name}</strong> {meaning}</li>"
        );
    }
    out.push_str(
        "<li><strong>MTU ?</strong> what the host or the vSphere API does not tell (an uplink's own MTU)</li></ul>\n",
    );
}

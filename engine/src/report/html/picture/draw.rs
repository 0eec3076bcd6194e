//! Positions and SVG. Bands stack top to bottom, each with three columns (adapters,
//! switches, RDMA devices) wired left to right, each device wired to the bus on the
//! right (the RDMA network). Paths between bands leave the bus on lanes to its right,
//! one lane per overlapping span, each with its label in a column of labels beyond the
//! lanes, pushed down so that no two overlap. Coordinates are whole pixels, so the same
//! diagnosis always gives the same text.
use super::scene::{Band, Line, Part, Span};
use super::Edge;
use crate::report::html::escape;
use std::fmt::Write;

const X_BAND: i64 = 16;
const X_VM: i64 = 44;
const W_VM: i64 = 292;
const X_SWITCH: i64 = 376;
const W_SWITCH: i64 = 236;
const X_DEVICE: i64 = 652;
const W_DEVICE: i64 = 240;
pub(super) const X_BUS: i64 = 940;
const W_BAND: i64 = X_BUS - X_BAND - 24;
const TOP: i64 = 44;
const HEAD: i64 = 32;
const LINE: i64 = 17;
const ROW_H: i64 = 40;
const GAP: i64 = 10;
const BAND_GAP: i64 = 18;
const LANE: i64 = 22;
const LABEL_W: i64 = 270;
const LABEL_H: i64 = 36;
/// Characters of 13-pixel text a pixel width holds, about.
const PX_PER_CHAR: i64 = 7;

/// Where a band's parts went.
pub(super) struct Placed {
    pub y: i64,
    pub h: i64,
    rows: Vec<(i64, i64)>,
    switches: Vec<(i64, i64)>,
    devices: Vec<(i64, i64)>,
    /// Where paths leave the band on the bus.
    pub anchor: i64,
}

fn part_h(p: &Part) -> i64 {
    12 + LINE * p.lines.len() as i64
}

/// Stacks boxes of heights `hs` from `top`; their (y, h) and the bottom.
fn stack(top: i64, hs: impl Iterator<Item = i64>) -> (Vec<(i64, i64)>, i64) {
    let mut y = top;
    let mut out = Vec::new();
    for h in hs {
        out.push((y, h));
        y += h + GAP;
    }
    (out, y - GAP)
}

/// Lays the bands out from the top.
pub(super) fn place(bands: &[Band]) -> Vec<Placed> {
    let mut y = TOP;
    let mut out = Vec::with_capacity(bands.len());
    for b in bands {
        let top = y + HEAD + 12;
        let (rows, r_end) = stack(top, b.rows.iter().map(|_| ROW_H));
        let (switches, s_end) = stack(top, b.switches.iter().map(part_h));
        let (devices, d_end) = stack(top, b.devices.iter().map(part_h));
        let down = b.down.as_ref().map_or(0, |l| LINE * l.len() as i64);
        let mut bottom = [r_end, s_end, d_end, top + 22, top + down]
            .into_iter()
            .max()
            .unwrap_or(top);
        if b.rows_left_out > 0 {
            bottom += 20;
        }
        if b.differs {
            bottom += 20;
        }
        if !b.failing.is_empty() && b.down.is_none() {
            bottom += 20;
        }
        let h = bottom + 12 - y;
        let used = devices
            .iter()
            .zip(&b.devices)
            .find(|(_, d)| d.active)
            .or_else(|| devices.iter().zip(&b.devices).next())
            .map(|((dy, dh), _)| dy + dh / 2);
        let anchor = if b.down.is_some() {
            y + h / 2
        } else {
            used.unwrap_or(y + h / 2)
        };
        out.push(Placed {
            y,
            h,
            rows,
            switches,
            devices,
            anchor,
        });
        y += h + BAND_GAP;
    }
    out
}

/// A line of spans as `<text>` with `<tspan>`s, shortened to `max` characters.
fn text(out: &mut String, x: i64, y: i64, line: &Line, max: usize) {
    out.push_str(&format!("<text x=\"{x}\" y=\"{y}\">"));
    let mut left = max;
    for Span { text, class } in line {
        if left == 0 {
            break;
        }
        let shown = escape::shorten(text, left);
        left = left.saturating_sub(shown.chars().count());
        if class.is_empty() {
            escape::push(out, &shown);
        } else {
            let _ = write!(out, "<tspan class=\"{class}\">{}</tspan>", escape::text(&shown));
        }
    }
    out.push_str("</text>");
}

fn chars(width: i64) -> usize {
    usize::try_from((width - 16) / PX_PER_CHAR).unwrap_or(1).max(1)
}

/// A wire between two boxes: a curve from `(x1, y1)` to `(x2, y2)`.
fn wire(out: &mut String, (x1, y1): (i64, i64), (x2, y2): (i64, i64), class: &str) {
    let xm = (x1 + x2) / 2;
    let _ = write!(
        out,
        "<path class=\"wire {class}\" d=\"M{x1} {y1}C{xm} {y1} {xm} {y2} {x2} {y2}\"/>"
    );
}

/// One band: frame, header, parts, wires.
pub(super) fn band(out: &mut String, b: &Band, at: &Placed) {
    let Some(first) = b.hosts.first() else { return };
    let status = crate::diagnose::status_name(first.status);
    let names: Vec<&str> = b.hosts.iter().map(|h| h.host.as_str()).collect();
    let _ = write!(
        out,
        "<g class=\"host\"><title>{}</title><rect class=\"band {status}\" x=\"{X_BAND}\" y=\"{}\" width=\"{W_BAND}\" height=\"{}\" rx=\"8\"/>\
         <rect class=\"band-head\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"7\"/>",
        escape::text(&escape::shorten(&names.join(", "), 2000)),
        at.y,
        at.h,
        X_BAND + 1,
        at.y + 1,
        W_BAND - 2,
        HEAD - 2
    );
    text(out, X_BAND + 12, at.y + 21, &b.head, chars(W_BAND));
    if let Some(down) = &b.down {
        for (n, line) in down.iter().enumerate() {
            text(out, X_VM, at.y + HEAD + 24 + LINE * n as i64, line, chars(W_BAND - 40));
        }
        out.push_str("</g>\n");
        return;
    }
    adapter_rows(out, b, at);
    parts(out, &b.switches, &at.switches, X_SWITCH, W_SWITCH);
    parts(out, &b.devices, &at.devices, X_DEVICE, W_DEVICE);
    device_wires(out, b, at);
    notes(out, b, at, &first.host);
    out.push_str("</g>\n");
}

/// The adapter rows, each wired to the switch its port is on (else the first).
fn adapter_rows(out: &mut String, b: &Band, at: &Placed) {
    for (row, (y, h)) in b.rows.iter().zip(&at.rows) {
        let _ = write!(
            out,
            "<g><title>{}</title><rect class=\"box vm\" x=\"{X_VM}\" y=\"{y}\" width=\"{W_VM}\" height=\"{h}\" rx=\"5\"/>",
            escape::text(&escape::shorten(&row.vms.join(", "), 2000))
        );
        let label = vec![Span {
            text: row.label(),
            class: "",
        }];
        text(out, X_VM + 8, y + 16, &label, chars(W_VM));
        text(out, X_VM + 8, y + 33, &row.verdict_line(), chars(W_VM));
        out.push_str("</g>");
        let target = row
            .switch
            .as_ref()
            .and_then(|s| b.switches.iter().position(|p| &p.key == s))
            .or_else(|| (!b.switches.is_empty()).then_some(0));
        if let Some((sy, sh)) = target.and_then(|i| at.switches.get(i)) {
            wire(
                out,
                (X_VM + W_VM, y + h / 2),
                (X_SWITCH, sy + sh / 2),
                &row.wire_class(),
            );
        }
    }
}

/// Each device wired to its vDS and to the bus: green when it carries traffic.
fn device_wires(out: &mut String, b: &Band, at: &Placed) {
    for (d, (y, h)) in b.devices.iter().zip(&at.devices) {
        let mid = y + h / 2;
        let class = if d.active { "hca" } else { "down" };
        let switch = d
            .switch
            .as_ref()
            .and_then(|s| b.switches.iter().position(|p| &p.key == s));
        if let Some((sy, sh)) = switch.and_then(|i| at.switches.get(i)) {
            wire(out, (X_SWITCH + W_SWITCH, sy + sh / 2), (X_DEVICE, mid), class);
        }
        if !d.key.is_empty() {
            let _ = write!(
                out,
                "<path class=\"wire {class}\" d=\"M{} {mid}H{X_BUS}\"/>",
                X_DEVICE + W_DEVICE
            );
        }
    }
}

/// At the foot of a band: what it does not draw.
fn notes(out: &mut String, b: &Band, at: &Placed, first: &str) {
    let mut note_y = at.y + at.h - 14;
    if !b.failing.is_empty() {
        let line = vec![Span {
            text: format!("✗ failing: {}", b.failing.join(", ")),
            class: "fail",
        }];
        text(out, X_VM, note_y, &line, chars(W_BAND - 40));
        note_y -= 20;
    }
    if b.differs {
        let line = vec![Span {
            text: format!("These hosts differ in their devices or switches: drawn is {first}'s (each host: --no-fold)"),
            class: "small",
        }];
        text(out, X_VM, note_y, &line, chars(W_BAND - 40));
        note_y -= 20;
    }
    if b.rows_left_out > 0 {
        let line = vec![Span {
            text: format!("… and {} more adapter rows: see the adapter table", b.rows_left_out),
            class: "small",
        }];
        text(out, X_VM, note_y, &line, chars(W_VM + 200));
    }
}

fn parts(out: &mut String, parts: &[Part], at: &[(i64, i64)], x: i64, w: i64) {
    for (p, (y, h)) in parts.iter().zip(at) {
        let mut class = String::from("box");
        if p.bad {
            class.push_str(" bad");
        }
        if p.unsure {
            class.push_str(" unsure");
        }
        let _ = write!(
            out,
            "<rect class=\"{class}\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"5\"/>"
        );
        for (n, line) in p.lines.iter().enumerate() {
            text(out, x + 8, y + 18 + LINE * n as i64, line, chars(w));
        }
    }
}

/// The bus from the first band to the last, with its name.
pub(super) fn bus(out: &mut String, placed: &[Placed]) {
    let (Some(first), Some(last)) = (placed.first(), placed.last()) else {
        return;
    };
    let _ = writeln!(
        out,
        "<text class=\"small\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">RDMA network (the HCAs' uplinks)</text>\
         <line class=\"bus\" x1=\"{X_BUS}\" y1=\"{}\" x2=\"{X_BUS}\" y2=\"{}\"/>",
        X_BUS,
        TOP - 14,
        first.y + HEAD,
        last.y + last.h - 8
    );
}

/// The paths: each on a lane right of the bus, its label in the column beyond the lanes.
/// Returns the width and height the picture needs.
pub(super) fn edges(out: &mut String, edges: &[Edge], placed: &[Placed], names: &[String]) -> (i64, i64) {
    // Where each edge leaves its bands: spread around each band's anchor.
    let mut slots: Vec<i64> = vec![0; placed.len()];
    let mut ends: Vec<(i64, i64)> = Vec::with_capacity(edges.len());
    for e in edges {
        let mut end = |band: usize| {
            let s = slots[band];
            slots[band] += 1;
            let offset = if s % 2 == 0 { s / 2 * 7 } else { -(s / 2 + 1) * 7 };
            let p = &placed[band];
            (p.anchor + offset).clamp(p.y + HEAD, p.y + p.h - 6)
        };
        let (ya, yb) = if e.a == e.b {
            let y = end(e.a);
            (y - 9, y + 9)
        } else {
            (end(e.a), end(e.b))
        };
        ends.push((ya.min(yb), ya.max(yb)));
    }
    let lanes = assign_lanes(&ends);
    let lane_count = lanes.iter().copied().max().map_or(0, |m| m + 1);
    let label_x = X_BUS + 28 + LANE * lane_count as i64 + 12;
    let mut next_free = TOP;
    let mut bottom = placed.last().map_or(TOP, |p| p.y + p.h);
    // Labels in the order of their paths' middles, so that leaders do not cross.
    let mut order: Vec<usize> = (0..edges.len()).collect();
    order.sort_by_key(|&i| (ends[i].0 + ends[i].1, i));
    for i in order {
        let (e, (y1, y2), lane) = (&edges[i], &ends[i], lanes[i]);
        let lx = X_BUS + 28 + LANE * lane as i64;
        let mid = (y1 + y2) / 2;
        let ly = (mid - LABEL_H / 2).max(next_free);
        next_free = ly + LABEL_H + 6;
        bottom = bottom.max(ly + LABEL_H);
        let class = if e.predicted {
            format!("{} predicted", e.class)
        } else {
            e.class.to_string()
        };
        let _ = write!(
            out,
            "<g class=\"label {cls}\"><path class=\"edge {class}\" d=\"M{X_BUS} {y1}H{lx}V{y2}H{X_BUS}\"/>\
             <path class=\"leader\" d=\"M{lx} {mid}L{label_x} {}\"/><rect class=\"label-bg\" x=\"{label_x}\" y=\"{ly}\" width=\"{LABEL_W}\" height=\"{LABEL_H}\" rx=\"4\"/>",
            ly + LABEL_H / 2,
            cls = e.class,
        );
        let head = vec![Span {
            text: e.label(),
            class: "",
        }];
        text(out, label_x + 8, ly + 15, &head, chars(LABEL_W));
        let between = if e.a == e.b {
            format!("among the {}", names[e.a])
        } else {
            format!(
                "{} ⇄ {}",
                escape::shorten(&names[e.a], 18),
                escape::shorten(&names[e.b], 18)
            )
        };
        let sub = vec![Span {
            text: between,
            class: "small",
        }];
        text(out, label_x + 8, ly + 30, &sub, chars(LABEL_W));
        out.push_str("</g>\n");
    }
    (label_x + LABEL_W + 12, bottom + 16)
}

/// The lowest lane whose last span ends above each span's start (spans sorted by start
/// keep the lanes few).
fn assign_lanes(spans: &[(i64, i64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| (spans[i].0, spans[i].1));
    let mut lane_end: Vec<i64> = Vec::new();
    let mut lanes = vec![0; spans.len()];
    for i in order {
        let (start, end) = spans[i];
        let lane = match lane_end.iter().position(|&e| e + 4 < start) {
            Some(l) => l,
            None => {
                lane_end.push(i64::MIN);
                lane_end.len() - 1
            }
        };
        lane_end[lane] = end;
        lanes[i] = lane;
    }
    lanes
}

/// The memcpy pairs of a band: a bracket joining its adapter rows on their left.
pub(super) fn memcpy(out: &mut String, at: &Placed, pairs: u64) {
    let (Some((y1, h1)), Some((y2, h2))) = (at.rows.first(), at.rows.last()) else {
        return;
    };
    let (a, b) = (y1 + h1 / 2, y2 + h2 / 2);
    let (a, b) = if a == b { (a - 8, b + 8) } else { (a, b) };
    let _ = write!(
        out,
        "<g class=\"label memcpy\"><title>memcpy: {} between VMs of the same host</title>\
         <path class=\"edge memcpy\" d=\"M{X_VM} {a}H{}V{b}H{X_VM}\"/></g>",
        super::super::count(pairs, "adapter pair", "adapter pairs"),
        X_BAND + 12
    );
}

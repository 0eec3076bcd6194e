//! The table of PVRDMA adapters and the lines around it.
use super::text::*;
use super::*;

/// One table row before folding: what makes rows equal, and the names to fold.
pub(super) struct Row {
    vm: String,
    host: String,
    adapter: u32,
    verdict: Verdict,
    reason: String,
}

pub(super) fn adapter_table(out: &mut String, d: &Diagnosis, paint: &Paint, options: &HumanOptions, width: usize) {
    let rows = adapter_rows(d, options);
    if rows.is_empty() {
        no_adapters_line(out, d, options, width);
        return;
    }
    let folded = fold_rows(&rows, options.fold);
    let header = ["VM", "Host", "Adapter", "Verdict", "Reason"].map(str::to_string);
    let mut cells: Vec<[String; COLUMNS]> = vec![header];
    // The VM and Host cells are lists of names: they wrap between names, never inside one.
    let mut lists: Vec<NameLists> = Vec::new();
    for (vms, hosts, row) in &folded {
        let names = NameLists {
            vms: pvrdma_nodeset::fold_list(vms).iter().map(|n| clean(n)).collect(),
            count: (vms.len() > 1).then(|| format!("({} VMs)", vms.len())),
            hosts: pvrdma_nodeset::fold_list(hosts).iter().map(|n| clean_set(n)).collect(),
        };
        let vm_cell = match &names.count {
            Some(count) => format!("{} {count}", names.vms.join(",")),
            None => names.vms.join(","),
        };
        let host_cell = names.hosts.join(",");
        lists.push(names);
        cells.push([
            vm_cell,
            host_cell,
            row.adapter.to_string(),
            match row.verdict {
                Verdict::Hca => "hca",
                Verdict::TcpFallback => "tcp-fallback",
                Verdict::Unknown => "unknown",
            }
            .to_string(),
            row.reason.clone(),
        ]);
    }
    let widths = column_widths(&cells, width);
    let mut builder = tabled::builder::Builder::default();
    for (n, row) in cells.iter().enumerate() {
        let names = n.checked_sub(1).and_then(|i| lists.get(i));
        let mut wrapped: Vec<String> = row
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(column, (cell, w))| {
                let lines = match (column, names) {
                    (0, Some(names)) => wrap_names(&names.vms, names.count.as_deref(), w),
                    (1, Some(names)) => wrap_names(&names.hosts, None, w),
                    _ => cell.split('\n').flat_map(|paragraph| wrap(paragraph, w, w)).collect(),
                };
                lines.join("\n")
            })
            .collect();
        // Colour goes on after wrapping, so the widths above are the ones drawn.
        if let (Some(verdict), Some(row)) = (wrapped.get_mut(3), n.checked_sub(1).and_then(|i| folded.get(i))) {
            *verdict = match row.2.verdict {
                Verdict::Hca => paint.green(verdict),
                Verdict::TcpFallback => paint.red(verdict),
                Verdict::Unknown => paint.yellow(verdict),
            };
        }
        builder.push_record(wrapped);
    }
    let mut table = builder.build();
    table.with(Style::rounded());
    let _ = writeln!(out, "{table}\n");
}

/// One row per adapter shown (with `--only-problems`, those not plainly on the HCA): its
/// verdict, and why in words (where an adapter on the HCA has it, else its reasons).
fn adapter_rows(d: &Diagnosis, options: &HumanOptions) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    for host in &d.hosts {
        for vm in &host.vms {
            for a in &vm.adapters {
                if options.only_problems && a.verdict == Verdict::Hca && a.reasons.is_empty() {
                    continue;
                }
                let reason = match a.verdict {
                    Verdict::Hca if a.reasons.is_empty() => {
                        let via = a.port.as_ref().and_then(|p| match (&p.vswitch, &p.uplink) {
                            (Some(s), Some(u)) => Some(format!(" via {} / {}", host_text(s), host_text(u))),
                            _ => None,
                        });
                        format!("physical HCA in use{}", via.unwrap_or_default())
                    }
                    _ => a
                        .reasons
                        .iter()
                        .map(|r| format!("• {}", clean(r)))
                        .collect::<Vec<_>>()
                        .join("\n"),
                };
                rows.push(Row {
                    vm: host_text(&vm.name),
                    host: host.host.clone(),
                    adapter: a.index,
                    verdict: a.verdict,
                    reason,
                });
            }
        }
    }
    rows
}

/// A folded row: its VMs, its hosts, and the row they share.
type FoldedRow<'r> = (Vec<String>, Vec<String>, &'r Row);

/// With `fold`, rows that differ only in VM and host fold into one, both columns as node
/// sets (first-seen order); else every row stands alone.
fn fold_rows(rows: &[Row], fold: bool) -> Vec<FoldedRow<'_>> {
    let mut folded: Vec<FoldedRow<'_>> = Vec::new();
    for row in rows {
        let same = |r: &Row| r.adapter == row.adapter && r.verdict == row.verdict && r.reason == row.reason;
        match folded.iter_mut().find(|(_, _, r)| fold && same(r)) {
            Some((vms, hosts, _)) => {
                vms.push(row.vm.clone());
                if !hosts.contains(&row.host) {
                    hosts.push(row.host.clone());
                }
            }
            None => folded.push((vec![row.vm.clone()], vec![row.host.clone()], row)),
        }
    }
    folded
}

/// The names in a folded row's VM and Host cells: each a node set of its own or a name
/// that cannot be folded, escaped; and the VM count after them when there are several.
struct NameLists {
    vms: Vec<String>,
    count: Option<String>,
    hosts: Vec<String>,
}

/// The adapter table's columns.
const COLUMNS: usize = 5;

/// What the rounded frame takes besides the cells: a bar left of every column, one at the
/// end, and a space of padding either side of each cell.
const FRAME: usize = 1 + 3 * COLUMNS;

/// How wide each column may be so the table fits `width`: each column as wide as its
/// widest line, then the widest column narrowed (to the next widest, and so on) until the
/// whole fits. The cells are then wrapped to these widths by [`wrap`], which breaks at
/// spaces and never starts a line with one.
pub(super) fn column_widths(cells: &[[String; COLUMNS]], width: usize) -> [usize; COLUMNS] {
    let mut widths = [1usize; COLUMNS];
    for row in cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            let widest = cell.split('\n').map(UnicodeWidthStr::width).max().unwrap_or(0);
            *w = (*w).max(widest);
        }
    }
    let room = width.saturating_sub(FRAME).max(COLUMNS);
    loop {
        let total: usize = widths.iter().sum();
        if total <= room {
            break;
        }
        let Some((widest, &max)) = widths.iter().enumerate().max_by_key(|(i, w)| (**w, usize::MAX - i)) else {
            break;
        };
        if max <= 1 {
            break;
        }
        let next = widths
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != widest)
            .map(|(_, w)| *w)
            .max()
            .unwrap_or(1);
        let excess = total - room;
        let target = max.saturating_sub(excess).max(next.min(max - 1)).max(1);
        if let Some(w) = widths.get_mut(widest) {
            *w = target;
        }
    }
    widths
}

/// No adapter rows: say why, and never reassure when nothing was diagnosed.
pub(super) fn no_adapters_line(out: &mut String, d: &Diagnosis, options: &HumanOptions, width: usize) {
    let s = &d.summary;
    let text = if s.diagnosed == 0 {
        let hosts = s.hosts.max(1);
        if hosts == 1 {
            "Nothing was diagnosed: the host could not be reached and read (see above).".to_string()
        } else {
            format!("Nothing was diagnosed: none of the {hosts} hosts could be reached and read (see above).")
        }
    } else if options.only_problems && s.adapters > 0 {
        "No PVRDMA adapter with a problem.".to_string()
    } else if s.hosts_without_adapter_list > 0 {
        format!(
            "No PVRDMA adapters could be listed: the listing failed on {}, see above.",
            plural(s.hosts_without_adapter_list, "host", "hosts")
        )
    } else if s.diagnosed < s.hosts {
        format!(
            "No PVRDMA adapters found on running VMs of the {} diagnosed; {} not diagnosed (see above).",
            plural(s.diagnosed, "host", "hosts"),
            plural(s.hosts - s.diagnosed, "host was", "hosts were")
        )
    } else {
        "No PVRDMA adapters found on running VMs.".to_string()
    };
    emit(out, "", "", 0, &text, width, |t| t.to_string());
    out.push('\n');
}

pub(super) fn transport_lines(out: &mut String, d: &Diagnosis, width: usize) {
    let t = &d.transport.totals;
    if t.total() == 0 {
        return;
    }
    // Each class in plain words the first time it appears; the lines under it use the
    // short names.
    let classes = [
        (t.rdma, "rdma", "through the HCA"),
        (
            t.blocked,
            "blocked",
            "HCA at both ends, but a failing check across hosts breaks the path",
        ),
        (t.tcp, "tcp", "an end falls back to TCP"),
        (t.memcpy, "memcpy", "same host"),
        (t.unknown, "unknown", "an adapter's verdict is unknown"),
    ];
    let parts: Vec<String> = classes
        .iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|(n, label, meaning)| format!("{n} {label} ({meaning})"))
        .collect();
    let pairs = t.total();
    emit(
        out,
        "",
        "",
        2,
        &format!(
            "Transport between PVRDMA adapters of different VMs ({}): {}",
            plural(
                usize::try_from(pairs).unwrap_or(usize::MAX),
                "adapter pair",
                "adapter pairs"
            ),
            parts.join(", ")
        ),
        width,
        |t| t.to_string(),
    );
    let exceptions = &d.transport.exceptions;
    for e in exceptions.iter().take(10) {
        let p = &e.pairs;
        let counts: Vec<String> = [
            (p.blocked, "blocked"),
            (p.tcp, "tcp"),
            (p.unknown, "unknown"),
            (p.rdma, "rdma"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, label)| format!("{n} {label}"))
        .collect();
        let text = format!(
            "{} VM {} adapter {} → {}: {}: {}",
            clean(&e.adapter.host),
            host_text(&e.adapter.vm),
            e.adapter.adapter,
            clean(&e.peer_host),
            counts.join(", "),
            clean(&e.reasons.join("; "))
        );
        emit(out, "  ", "  ", 4, &text, width, |t| t.to_string());
    }
    if exceptions.len() > 10 {
        let text = format!(
            "… and {} more adapters with pairs that are not plain rdma (see --format json)",
            exceptions.len() - 10
        );
        emit(out, "  ", "  ", 4, &text, width, |t| t.to_string());
    }
    out.push('\n');
}

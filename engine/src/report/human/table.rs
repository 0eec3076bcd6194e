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
                            (Some(s), Some(u)) => Some(format!(" via {} / {}", clean(s), clean(u))),
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
                    vm: vm.name.clone(),
                    host: host.host.clone(),
                    adapter: a.index,
                    verdict: a.verdict,
                    reason,
                });
            }
        }
    }
    if rows.is_empty() {
        no_adapters_line(out, d, options, width);
        return;
    }
    // Rows that differ only in VM and host fold into one, both columns as node sets.
    let mut folded: Vec<(Vec<String>, Vec<String>, &Row)> = Vec::new();
    for row in &rows {
        let same = |r: &Row| r.adapter == row.adapter && r.verdict == row.verdict && r.reason == row.reason;
        match folded.iter_mut().find(|(_, _, r)| options.fold && same(r)) {
            Some((vms, hosts, _)) => {
                vms.push(row.vm.clone());
                if !hosts.contains(&row.host) {
                    hosts.push(row.host.clone());
                }
            }
            None => folded.push((vec![row.vm.clone()], vec![row.host.clone()], row)),
        }
    }
    let mut builder = tabled::builder::Builder::default();
    builder.push_record(["VM", "Host", "Adapter", "Verdict", "Reason"]);
    for (vms, hosts, row) in &folded {
        let verdict = match row.verdict {
            Verdict::Hca => paint.green("hca"),
            Verdict::TcpFallback => paint.red("tcp-fallback"),
            Verdict::Unknown => paint.yellow("unknown"),
        };
        let vm_cell = if vms.len() > 1 {
            format!("{} ({} VMs)", clean(&crate::nodeset::fold(vms)), vms.len())
        } else {
            clean(&crate::nodeset::fold(vms))
        };
        builder.push_record([
            vm_cell,
            clean_set(&crate::nodeset::fold(hosts)),
            row.adapter.to_string(),
            verdict,
            row.reason.clone(),
        ]);
    }
    let mut table = builder.build();
    table
        .with(Style::rounded())
        .with(Width::wrap(width).priority(Priority::max(true)).keep_words(true));
    let _ = writeln!(out, "{table}\n");
}

/// No adapter rows: say why, and never reassure when nothing was diagnosed.
pub(super) fn no_adapters_line(out: &mut String, d: &Diagnosis, options: &HumanOptions, width: usize) {
    let s = &d.summary;
    let text = if s.diagnosed == 0 {
        let not_reached = s.hosts.saturating_sub(s.diagnosed);
        format!(
            "Nothing was diagnosed: none of the {} could be reached and read (see above).",
            plural(not_reached.max(s.hosts), "host", "hosts")
        )
    } else if options.only_problems && s.adapters > 0 {
        "No PVRDMA adapter with a problem.".to_string()
    } else if s.hosts_without_adapter_list > 0 {
        format!(
            "No PVRDMA adapters could be listed: the listing failed on {} host(s), see above.",
            s.hosts_without_adapter_list
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
    let parts: Vec<String> = [
        (t.rdma, "rdma"),
        (t.blocked, "blocked"),
        (t.tcp, "tcp"),
        (t.memcpy, "memcpy (same host)"),
        (t.unknown, "unknown"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, label)| format!("{n} {label}"))
    .collect();
    emit(
        out,
        "",
        "",
        2,
        &format!("Transport between adapters of different VMs: {}", parts.join(", ")),
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
            "{}/{}#{} → {}: {}: {}",
            clean(&e.adapter.host),
            clean(&e.adapter.vm),
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

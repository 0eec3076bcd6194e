//! The compact human view of the probe pairs.
use crate::diagnose::probe::*;
use std::collections::BTreeMap;

/// The compact human view of the problem pairs: a pair probed both ways with the same
/// result is one `↔` line, skipped pairs are grouped by reason, at most `LIMIT` lines.
pub fn human_lines(probes: &[Probe]) -> Vec<String> {
    const LIMIT: usize = 12;
    let mut lines = Vec::new();
    let mut done = vec![false; probes.len()];
    for (i, p) in probes.iter().enumerate() {
        let lossy = p.status == ProbeStatus::Ok && p.losses.is_some_and(|l| l.received < l.sent);
        if lossy {
            lines.push(format!(
                "loss: {} → {}: {}",
                end(&p.from, &p.from_vmknic),
                end(&p.to, &p.to_ip),
                p.detail
            ));
            continue;
        }
        if done.get(i).copied().unwrap_or(true) || matches!(p.status, ProbeStatus::Ok | ProbeStatus::Skipped) {
            continue;
        }
        let back = probes
            .iter()
            .enumerate()
            .find(|(j, q)| *j != i && q.from == p.to && q.to == p.from && q.status == p.status);
        let line = match back {
            Some((j, _)) => {
                if let Some(d) = done.get_mut(j) {
                    *d = true;
                }
                format!(
                    "{}: {} ↔ {}: {}",
                    p.status.label(),
                    end(&p.from, &p.from_vmknic),
                    end(&p.to, &p.to_ip),
                    p.detail
                )
            }
            None => format!(
                "{}: {} → {}: {}",
                p.status.label(),
                end(&p.from, &p.from_vmknic),
                end(&p.to, &p.to_ip),
                p.detail
            ),
        };
        lines.push(line);
    }
    let mut skipped: BTreeMap<&str, usize> = BTreeMap::new();
    for p in probes.iter().filter(|p| p.status == ProbeStatus::Skipped) {
        *skipped.entry(p.detail.as_str()).or_default() += 1;
    }
    for (why, n) in skipped {
        lines.push(format!("skipped: {n} pair{}: {why}", if n == 1 { "" } else { "s" }));
    }
    if lines.len() > LIMIT {
        let more = lines.len() - LIMIT;
        lines.truncate(LIMIT);
        lines.push(format!("… and {more} more (see --format json)"));
    }
    lines
}

pub(super) fn end(host: &str, what: &Option<String>) -> String {
    match what {
        Some(w) => format!("{host} {w}"),
        None => host.to_string(),
    }
}

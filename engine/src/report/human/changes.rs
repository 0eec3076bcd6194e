//! The baseline comparison's lines at the top of the human report.
use crate::diagnose::{ChangeKind, Changes};

/// The lines the human report opens with.
pub fn human_lines(changes: &Changes) -> Vec<String> {
    if changes.list.is_empty() {
        return vec![format!("No change since {} (baseline)", changes.since)];
    }
    let n = changes.list.len();
    let mut lines = vec![format!(
        "Changed since {} (baseline): {n} change{}",
        changes.since,
        if n == 1 { "" } else { "s" }
    )];
    let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".to_string());
    for c in &changes.list {
        let subject = match (c.kind, &c.host) {
            (ChangeKind::Probe, Some(h)) => format!("{h} → {}: probe", c.id),
            (ChangeKind::Host, Some(h)) => format!("{h}: host"),
            (kind, Some(h)) => format!("{h}: {} {}", kind.label(), c.id),
            (kind, None) => format!("across hosts: {} {}", kind.label(), c.id),
        };
        lines.push(format!("  {subject}: {} → {}", shown(&c.from), shown(&c.to)));
    }
    lines
}

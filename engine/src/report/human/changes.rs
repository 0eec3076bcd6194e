//! The baseline comparison's lines at the top of the human report, and `watch`'s
//! timestamped change lines.
use crate::diagnose::{Change, ChangeKind, Changes};

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
    for c in &changes.list {
        lines.push(format!("  {}: {}", subject(c), transition(c)));
    }
    lines
}

/// What a change is about: `esx01: check firewall-pvrdma`, `esx01: host`.
fn subject(c: &Change) -> String {
    match (c.kind, &c.host) {
        (ChangeKind::Probe, Some(h)) => format!("{h} → {}: probe", c.id),
        (ChangeKind::Host, Some(h)) => format!("{h}: host"),
        // `<VM>#<index>` is the JSON's key; a person reads the VM and the adapter.
        (ChangeKind::Adapter, Some(h)) => match c.id.rsplit_once('#') {
            Some((vm, index)) => format!("{h}: VM {vm} adapter {index}"),
            None => format!("{h}: adapter {}", c.id),
        },
        (kind, Some(h)) => format!("{h}: {} {}", kind.label(), c.id),
        (ChangeKind::Vm, None) => format!("VM {}", c.id),
        (kind, None) => format!("across hosts: {} {}", kind.label(), c.id),
    }
}

/// `pass → fail`, `(absent)` for a side that lacks it.
fn transition(c: &Change) -> String {
    let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".to_string());
    format!("{} → {}", shown(&c.from), shown(&c.to))
}

/// `watch`'s lines for one round: `<time> <subject>: <from> → <to>: <reason>`, one per
/// change, wrapped to `width`, the fix under it (`run: <command>` whole on its line, then
/// `advice: ...`; a command already shown this round is not repeated). A host's status
/// change that comes with changes of its checks or adapters is told on the line of the
/// first of them (`(host ok → problems)`): it follows from them; alone (a host that became
/// unreachable) it has its own line.
pub fn watch_lines(changes: &[Change], time: &str, width: usize) -> String {
    let mut out = String::new();
    let mut told: Vec<usize> = Vec::new();
    let mut commands: Vec<&str> = Vec::new();
    let mut advice_told: Vec<&str> = Vec::new();
    let pad = " ".repeat(time.chars().count() + 3);
    for (i, c) in changes.iter().enumerate() {
        if told.contains(&i) {
            continue;
        }
        let mut text = format!("{}: {}", subject(c), transition(c));
        if c.kind != ChangeKind::Host {
            let status = changes
                .iter()
                .enumerate()
                .find(|(j, o)| o.kind == ChangeKind::Host && o.host.is_some() && o.host == c.host && !told.contains(j));
            if let Some((j, o)) = status {
                text.push_str(&format!(" (host {})", transition(o)));
                told.push(j);
            }
        } else if changes
            .iter()
            .skip(i + 1)
            .any(|o| o.kind != ChangeKind::Host && o.host == c.host)
        {
            // Told with the host's first other change below.
            continue;
        }
        if let Some(reason) = &c.reason {
            text.push_str(&format!(": {reason}"));
        }
        out.push_str(&timestamped(time, &text, width));
        let Some(remedy) = &c.remediation else { continue };
        if let Some(command) = remedy.command.as_deref().filter(|c| !commands.contains(c)) {
            commands.push(command);
            let label = format!("{pad}run: ");
            super::text::emit_command(&mut out, &label, &label, pad.len() + 2, command, width, |t| {
                t.to_string()
            });
        }
        if let Some(advice) = remedy.advice.as_deref().filter(|a| !advice_told.contains(a)) {
            advice_told.push(advice);
            let label = format!("{pad}advice: ");
            super::text::emit(
                &mut out,
                &label,
                &label,
                pad.len() + 2,
                &super::text::clean(advice),
                width,
                |t| t.to_string(),
            );
        }
    }
    out
}

/// `<time> <text>`, wrapped to `width` under the text (`watch`'s own lines).
pub fn timestamped(time: &str, text: &str, width: usize) -> String {
    let mut out = String::new();
    let lead = format!("{time} ");
    super::text::emit(
        &mut out,
        &lead,
        &lead,
        lead.len() + 2,
        &super::text::clean(text),
        width,
        |t| t.to_string(),
    );
    out
}

//! The human report: per host a ✓/!/✗/? checklist with the fix under each failure, then one
//! table of PVRDMA adapters (VM, host, adapter, verdict, reason), then one summary line.
use crate::diagnose::{Check, Diagnosis, HostDiagnosis, HostStatus, Status, Transport, Verdict};
use std::fmt::Write;
use tabled::settings::{object::Columns, Modify, Style, Width};

struct Paint {
    on: bool,
}

impl Paint {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    fn green(&self, t: &str) -> String {
        self.paint("32", t)
    }
    fn yellow(&self, t: &str) -> String {
        self.paint("33", t)
    }
    fn red(&self, t: &str) -> String {
        self.paint("31", t)
    }
    fn dim(&self, t: &str) -> String {
        self.paint("2", t)
    }
    fn bold(&self, t: &str) -> String {
        self.paint("1", t)
    }
}

pub fn render(d: &Diagnosis, color: bool) -> String {
    let paint = Paint { on: color };
    let mut out = String::new();
    for host in &d.hosts {
        host_section(&mut out, host, &paint);
        out.push('\n');
    }
    if !d.fleet_checks.is_empty() {
        let _ = writeln!(out, "{}", paint.bold("across hosts"));
        let width = d.fleet_checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
        for check in &d.fleet_checks {
            check_line(&mut out, check, width, &paint);
        }
        out.push('\n');
    }
    adapter_table(&mut out, d, &paint);
    transport_lines(&mut out, d);
    let line = &d.summary.line;
    let _ = writeln!(
        out,
        "{}",
        match d.exit_code() {
            0 => paint.green(line),
            1 => paint.red(line),
            _ => paint.yellow(line),
        }
    );
    out
}

fn status_label(status: HostStatus, paint: &Paint) -> String {
    match status {
        HostStatus::Ok => paint.green("ok"),
        HostStatus::Problems => paint.red("problems"),
        HostStatus::Incomplete => paint.yellow("incomplete"),
        HostStatus::Unreachable => paint.red("unreachable"),
        HostStatus::Error => paint.red("error"),
    }
}

/// Text that came from a host (names, error messages, vsish output) with its control
/// characters made visible: a hostile or broken host must not be able to send escape
/// sequences to the admin's terminal. Newlines stay, table cells use them.
fn clean(text: &str) -> String {
    text.chars()
        .flat_map(|c| -> Box<dyn Iterator<Item = char>> {
            if c.is_control() && c != '\n' {
                Box::new(c.escape_default())
            } else {
                Box::new(std::iter::once(c))
            }
        })
        .collect()
}

fn host_section(out: &mut String, host: &HostDiagnosis, paint: &Paint) {
    let version = host
        .esxi_version
        .as_deref()
        .map(|v| format!(" · ESXi {}", clean(v)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{} · {}{version}",
        paint.bold(&clean(&host.host)),
        status_label(host.status, paint)
    );
    if let Some(error) = &host.error {
        let _ = writeln!(
            out,
            "  {} {}: {}",
            paint.red("✗"),
            kind_label(error.kind),
            clean(&error.message)
        );
    }
    // What broke off comes first: it is why the checks below may be unknown.
    for cut in &host.incomplete_outputs {
        let label = crate::catalogue::spec(&cut.command).map_or(cut.command.as_str(), |s| s.label());
        let _ = writeln!(
            out,
            "  {} incomplete: `{}` {}",
            paint.yellow("!"),
            clean(label),
            clean(&cut.reason)
        );
    }
    let width = host.checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
    for check in &host.checks {
        check_line(out, check, width, paint);
    }
    if let Some(e) = &host.vms_error {
        let _ = writeln!(out, "  {} {}", paint.dim("?"), clean(e));
    }
    if let Some(e) = &host.adapters_error {
        let _ = writeln!(out, "  {} {}", paint.dim("?"), clean(e));
    }
}

fn kind_label(kind: crate::collect::ErrorKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn check_line(out: &mut String, c: &Check, width: usize, paint: &Paint) {
    let mark = match c.status {
        Status::Pass => paint.green("✓"),
        Status::Warn => paint.yellow("!"),
        Status::Fail => paint.red("✗"),
        Status::Unknown => paint.dim("?"),
    };
    let _ = writeln!(out, "  {mark} {:<width$}  {}", c.id, clean(&c.summary));
    let indent = " ".repeat(width + 6);
    if let Some(remedy) = &c.remedy {
        if c.status != Status::Pass {
            let _ = writeln!(out, "{indent}fix: {}", paint.bold(&clean(remedy)));
        }
    }
    // An unknown check's summary already names the command that is missing.
    if matches!(c.status, Status::Fail | Status::Warn) && !c.evidence.is_empty() {
        let from: Vec<String> = c
            .evidence
            .iter()
            .map(|e| format!("{} ({})", e.command, clean(&e.field)))
            .collect();
        let _ = writeln!(out, "{indent}{}", paint.dim(&format!("from: {}", from.join(", "))));
    }
}

fn adapter_table(out: &mut String, d: &Diagnosis, paint: &Paint) {
    let mut rows: Vec<[String; 5]> = Vec::new();
    for host in &d.hosts {
        for vm in &host.vms {
            for a in &vm.adapters {
                let verdict = match a.verdict {
                    Verdict::Hca => paint.green("hca"),
                    Verdict::TcpFallback => paint.red("tcp-fallback"),
                    Verdict::Unknown => paint.yellow("unknown"),
                };
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
                rows.push([clean(&vm.name), clean(&host.host), a.index.to_string(), verdict, reason]);
            }
        }
    }
    let unlisted = d.summary.hosts_without_adapter_list;
    if rows.is_empty() {
        let _ = match unlisted {
            0 => writeln!(out, "No PVRDMA adapters found on running VMs.\n"),
            n => writeln!(
                out,
                "No PVRDMA adapters could be listed: the listing failed on {n} host(s), see above.\n"
            ),
        };
        return;
    }
    let mut builder = tabled::builder::Builder::default();
    builder.push_record(["VM", "Host", "Adapter", "Verdict", "Reason"]);
    for row in rows {
        builder.push_record(row);
    }
    let mut table = builder.build();
    table
        .with(Style::rounded())
        .with(Modify::new(Columns::one(4)).with(Width::wrap(72).keep_words(true)))
        .with(Modify::new(Columns::one(0)).with(Width::wrap(40)));
    let _ = writeln!(out, "{table}\n");
}

fn transport_lines(out: &mut String, d: &Diagnosis) {
    if d.pairs.is_empty() {
        return;
    }
    let count = |t: Transport| d.pairs.iter().filter(|p| p.transport == t).count();
    let parts: Vec<String> = [
        (Transport::Rdma, "rdma"),
        (Transport::Tcp, "tcp"),
        (Transport::Memcpy, "memcpy (same host)"),
        (Transport::Unknown, "unknown"),
    ]
    .iter()
    .map(|(t, label)| (count(*t), label))
    .filter(|(n, _)| *n > 0)
    .map(|(n, label)| format!("{n} {label}"))
    .collect();
    let _ = writeln!(out, "Transport between adapters of different VMs: {}", parts.join(", "));
    let tcp: Vec<_> = d.pairs.iter().filter(|p| p.transport == Transport::Tcp).collect();
    for p in tcp.iter().take(10) {
        let _ = writeln!(
            out,
            "  tcp: {}/{}#{} ↔ {}/{}#{}",
            clean(&p.a.host),
            clean(&p.a.vm),
            p.a.adapter,
            clean(&p.b.host),
            clean(&p.b.vm),
            p.b.adapter
        );
    }
    if tcp.len() > 10 {
        let _ = writeln!(out, "  … and {} more tcp pairs (see --format json)", tcp.len() - 10);
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::{ErrorKind, Failure};
    use crate::diagnose::{Summary, Vm};

    #[test]
    fn text_from_a_host_cannot_reach_the_terminal_as_escape_sequences() {
        let hostile = "evil\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J";
        let host = HostDiagnosis {
            host: "esx01".to_string(),
            status: HostStatus::Error,
            error: Some(Failure::new(
                ErrorKind::KeyExchange,
                format!("no common algorithm; server offers {hostile}"),
            )),
            esxi_version: None,
            checks: Vec::new(),
            vms: vec![Vm {
                name: hostile.to_string(),
                world_id: Some(1),
                config_file: None,
                adapters: Vec::new(),
            }],
            adapters_error: Some(hostile.to_string()),
            vms_error: None,
            incomplete_outputs: Vec::new(),
            pvrdma_vmknic: None,
        };
        let d = Diagnosis {
            hosts: vec![host],
            fleet_checks: Vec::new(),
            pairs: Vec::new(),
            summary: Summary::default(),
        };
        let text = render(&d, false);
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
        assert!(text.contains("evil\\u{1b}]52"), "the bytes stay visible: {text}");
        // Our own colours still work.
        assert!(render(&d, true).contains("\x1b[31m"));
    }
}

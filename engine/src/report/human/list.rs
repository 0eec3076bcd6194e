//! `--list-checks` for a person: what the tool runs on a host, why, and the check ids,
//! wrapped to the terminal. A batched query (one command line that repeats a query over
//! the VMs, adapters or uplinks found by an earlier command) gets one readable line (the
//! query and what it runs over); `-v` adds its exact command line, one shell function per
//! line (wrapped to the terminal), so an admin can audit every byte sent as root.
//! `--format json` has every command line whole, on one line.
use super::text::*;
use super::*;
use crate::catalogue::CATALOGUE;
use crate::diagnose::CHECKS;

/// The path probe's entry of `--list-checks`. The probe is planned and sent by the front
/// end, which fills this in; the engine only lays it out.
#[derive(Debug, Clone)]
pub struct ProbeListing {
    pub heading: String,
    pub id: &'static str,
    pub commands: [String; 2],
    pub why: String,
    pub check_id: &'static str,
    pub check_title: &'static str,
}

/// The `--list-checks` text at `width` columns, with the path probe's entry; `exact`:
/// every batch's exact command line too.
pub fn list_checks(width: usize, exact: bool, probe: &ProbeListing) -> String {
    let width = width.max(MIN_WIDTH);
    let mut out = String::new();
    let intro = if exact {
        "Read-only commands sent to each host: id (the output's file name in bundles and \
         captures), what runs, why. Each batched query's exact command line follows it, one \
         shell function per line, wrapped to the terminal (a continuation is indented two \
         more columns); `--list-checks --format json` has every command line whole, on one \
         line."
    } else {
        "Read-only commands sent to each host: id (the output's file name in bundles and \
         captures), what runs, why. `--list-checks -v` adds the exact command line of each \
         batched query, `--list-checks --format json` every command line whole."
    };
    emit(&mut out, "", "", 0, intro, width, |t| t.to_string());
    for spec in CATALOGUE {
        out.push('\n');
        emit(&mut out, "", "", 0, spec.id, width, |t| t.to_string());
        if spec.is_batch() {
            emit(&mut out, "  runs: ", "  runs: ", 8, spec.label(), width, |t| {
                t.to_string()
            });
            emit(
                &mut out,
                "        ",
                "        ",
                8,
                "as one command line whose queries run concurrently on the host, each answer \
                 between `==> KEY <==` and `<== KEY exit N ==>`",
                width,
                |t| t.to_string(),
            );
        } else {
            emit_command(&mut out, "  runs: ", "  runs: ", 8, spec.command, width, |t| {
                t.to_string()
            });
        }
        emit(&mut out, "  why:  ", "  why:  ", 8, spec.why, width, |t| t.to_string());
        if crate::catalogue::is_grouped(spec) {
            emit(
                &mut out,
                "  sent: ",
                "  sent: ",
                8,
                &format!(
                    "with the other single-answer commands on one channel ({})",
                    crate::catalogue::GROUPED_COMMANDS
                ),
                width,
                |t| t.to_string(),
            );
        }
        if exact && spec.is_batch() {
            exact_line(&mut out, spec.command, width);
        }
    }
    if let Some(line) = crate::catalogue::grouped_command() {
        out.push('\n');
        emit(&mut out, "", "", 0, crate::catalogue::GROUPED_COMMANDS, width, |t| {
            t.to_string()
        });
        let ids = crate::catalogue::grouped_ids().join(", ");
        emit(&mut out, "  runs: ", "  runs: ", 8, &ids, width, |t| t.to_string());
        emit(
            &mut out,
            "  why:  ",
            "  why:  ",
            8,
            crate::catalogue::GROUPED_WHY,
            width,
            |t| t.to_string(),
        );
        if exact {
            exact_line(&mut out, &line, width);
        }
    }
    out.push('\n');
    checks_section(&mut out, "Checks (stable ids):", CHECKS, width);
    out.push('\n');
    emit(&mut out, "", "", 0, &probe.heading, width, |t| t.to_string());
    out.push('\n');
    let _ = writeln!(out, "{}", probe.id);
    // Templates (`<vmk>`, `<peer ip>`), not lines to copy: wrapped like prose.
    for command in &probe.commands {
        emit(&mut out, "  runs: ", "  runs: ", 8, command, width, |t| t.to_string());
    }
    emit(&mut out, "  why:  ", "  why:  ", 8, &probe.why, width, |t| {
        t.to_string()
    });
    out.push('\n');
    checks_section(
        &mut out,
        "Probe check (stable id):",
        &[(probe.check_id, probe.check_title)],
        width,
    );
    out
}

/// A command line shown whole, one shell function per line.
fn exact_line(out: &mut String, command: &str, width: usize) {
    let _ = writeln!(out, "  exact command line:");
    for line in script_lines(command) {
        emit(out, "    ", "    ", 6, &line, width, |t| t.to_string());
    }
}

/// A heading and one line per check id (its summary wrapped beside it, or under it when
/// the terminal is narrow).
fn checks_section(out: &mut String, heading: &str, checks: &[(&str, &str)], width: usize) {
    let _ = writeln!(out, "{heading}\n");
    let id_width = checks.iter().map(|(id, _)| id.len()).max().unwrap_or(0);
    let indent = if id_width + 4 + 30 <= width { id_width + 4 } else { 6 };
    for (id, what) in checks {
        let prefix = format!("  {id:<id_width$}  ");
        emit(out, &prefix, &prefix, indent, what, width, |t| t.to_string());
    }
}

/// A batch's command line cut after each shell function (`q() { ...; };`), so each
/// function reads on its own line; joined by single spaces they give the line back.
pub(super) fn script_lines(command: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut rest = command;
    while let Some(at) = rest.find("; }; ") {
        let (line, after) = rest.split_at(at + "; };".len());
        lines.push(line.to_string());
        rest = after.strip_prefix(' ').unwrap_or(after);
    }
    if !rest.is_empty() {
        lines.push(rest.to_string());
    }
    lines
}

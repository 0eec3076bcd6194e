//! The catalogue's single-answer commands on one channel: one unit of the schedule, its
//! framed output split back into one output per command as it arrives.
use super::*;

/// Keeps a copy of a group's output in the host's sink, under the group's id, each time
/// one more of its answers has ended: a run stopped while the group still runs (its
/// future dropped with whatever it had read) keeps the answers that were whole (see
/// [`settle_partial_group`]). Copied at most once per answer, never per packet.
pub(super) struct Mirror<'a> {
    pub(super) sink: &'a Sink,
    /// How far the output has been searched for an answer's end.
    pub(super) scanned: usize,
}

impl Mirror<'_> {
    pub(super) fn after(&mut self, id: &str, command: &str, stdout: &[u8]) {
        // A frame `N:end KEY exit ...` may straddle two packets: look back a little.
        let from = self.scanned.saturating_sub(8);
        self.scanned = stdout.len();
        let fresh = stdout.get(from..).unwrap_or_default();
        if !fresh.windows(5).any(|w| w == b":end ") {
            return;
        }
        let Some(end) = stdout.iter().rposition(|&b| b == b'\n') else {
            return;
        };
        if let Ok(mut m) = self.sink.lock() {
            let entry = m.entry(id.to_string()).or_insert_with(|| RawOutput::new(id, command));
            entry.stdout = String::from_utf8_lossy(stdout.get(..=end).unwrap_or_default()).into_owned();
        }
    }
}

/// A group still running when its host was stopped (the run's --timeout, Ctrl-C): the
/// commands whose answers had arrived whole become outputs of their own; the others stay
/// missing, for the reason the host was stopped.
pub(crate) fn settle_partial_group(outputs: &mut BTreeMap<String, RawOutput>) {
    let Some(group) = outputs.remove(GROUP_ID) else {
        return;
    };
    let keys = catalogue::group_keys(&group.command).unwrap_or_default();
    let answers = pvrdma_engine::capture::frames::answers(&keys, group.stdout.as_bytes(), Some("stopped"));
    for (id, answer) in keys.into_iter().zip(answers) {
        let Some(code) = answer.exit.filter(|_| answer.unfinished.is_none()) else {
            continue;
        };
        let mut out = RawOutput::new(id.as_str(), catalogue::spec(&id).map_or("", |s| s.command));
        out.stdout = answer.text;
        out.exit_status = Some(code);
        out.outcome = Some(Outcome::Exited { code });
        outputs.insert(id, out);
    }
}

/// How the schedule and `-v` name the group unit; never an output of its own.
pub(super) const GROUP_ID: &str = "grouped_commands";

/// The catalogue's grouped commands ([`catalogue::is_grouped`]) as one unit of the
/// schedule: one channel, one command line ([`catalogue::group_command`]), split back
/// into one output per command as it arrives ([`split_group`]). `None` when fewer than
/// two commands are grouped.
pub(super) fn group_unit() -> Option<&'static CommandSpec> {
    static GROUP: std::sync::OnceLock<Option<CommandSpec>> = std::sync::OnceLock::new();
    GROUP
        .get_or_init(|| {
            let ids: Vec<&str> = CATALOGUE.iter().filter(|s| catalogue::is_grouped(s)).map(|s| s.id).collect();
            let line = catalogue::group_command(&ids).filter(|_| ids.len() >= 2)?;
            Some(CommandSpec {
                id: GROUP_ID,
                // Built once per process from the catalogue, and kept for its lifetime.
                command: Box::leak(line.into_boxed_str()),
                why: "the catalogue's single-answer commands that no other command is built from, run at once on one channel",
                framing: Framing::Whole,
                quick: false,
            })
        })
        .as_ref()
}

/// The outputs of a group's commands, one per command, from the group's framed output:
/// an answer that arrived whole is that command's output with its own exit status; one
/// that did not is cut off, for the reason the group ended (its timeout, a lost
/// connection) or its own (killed, cut at the per-query cap, damaged). Each command's
/// stderr is in its answer (`2>&1`, as in every batch); what the group's own shell printed
/// on stderr (nothing when it ran) goes with the first command, once.
pub(super) fn split_group(job: &HostJob, mut group: RawOutput) -> Vec<(String, RawOutput)> {
    let keys = catalogue::group_keys(&group.command).unwrap_or_default();
    let mut shell_stderr = Some(std::mem::take(&mut group.stderr));
    let outcome = group.outcome.clone().unwrap_or(Outcome::NoExitStatus);
    let problem = outcome.problem();
    let answers = pvrdma_engine::capture::frames::answers(&keys, group.stdout.as_bytes(), problem.as_deref());
    keys.into_iter()
        .zip(answers)
        .map(|(id, answer)| {
            let command = catalogue::spec(&id).map_or("", |s| s.command);
            let mut out = RawOutput::new(id.as_str(), command);
            out.stdout = answer.text;
            out.stderr = shell_stderr.take().unwrap_or_default();
            out.duration_ms = group.duration_ms;
            out.exit_status = answer.exit;
            let own = match (answer.exit, answer.unfinished) {
                (Some(code), None) => Outcome::Exited { code },
                _ if answer.cut => Outcome::Truncated {
                    cap: Cap::PerCommand,
                    limit_bytes: catalogue::SECTION_CAP as u64,
                },
                (_, Some(reason)) if problem.is_none() => {
                    out.failure = Some(Failure::new(
                        ErrorKind::CommandFailed,
                        format!("{}: `{id}` {reason}", job.target.label),
                    ));
                    Outcome::NoExitStatus
                }
                _ => outcome.clone(),
            };
            out.timeout_hit = matches!(own, Outcome::TimedOut { .. });
            out.truncated = matches!(own, Outcome::Truncated { .. });
            if out.failure.is_none() {
                out.failure = failure_for(job, &id, &own);
            }
            // `-v`: each grouped command as if it had had its own channel.
            tracing::info!(
                "{}: `{}` {} in {} ms ({} bytes out, {} bytes err; grouped with the other single-answer commands)",
                job.label,
                command,
                own.problem().unwrap_or_else(|| match out.exit_status {
                    Some(code) => format!("exit {code}"),
                    None => "no exit status".to_string(),
                }),
                out.duration_ms,
                out.stdout.len(),
                out.stderr.len(),
            );
            out.outcome = Some(own);
            (id, out)
        })
        .collect()
}

//! The catalogue's single-answer commands on one channel: one unit of the schedule, its
//! framed output split back into one output per command as each answer arrives.
use super::*;
use pvrdma_engine::capture::frames::{KeyAnswer, Reader};

pub(super) use catalogue::GROUPED_COMMANDS as GROUP_ID;

/// The catalogue's grouped commands ([`catalogue::is_grouped`]) as one unit of the
/// schedule: one channel, one command line ([`catalogue::group_command`]), split back
/// into one output per command as it arrives ([`GroupAnswers`]). `None` when fewer than
/// two commands are grouped.
pub(super) fn group_unit() -> Option<&'static CommandSpec> {
    static GROUP: std::sync::OnceLock<Option<CommandSpec>> = std::sync::OnceLock::new();
    GROUP
        .get_or_init(|| {
            let line = catalogue::grouped_command()?;
            Some(CommandSpec {
                id: GROUP_ID,
                // Built once per process from the catalogue, and kept for its lifetime.
                command: Box::leak(line.into_boxed_str()),
                why: catalogue::GROUPED_WHY,
                framing: Framing::Whole,
                quick: false,
            })
        })
        .as_ref()
}

/// What the schedule runs: the catalogue with its grouped commands as one unit, the
/// others as they are; built once per process.
pub(super) fn schedule_units() -> &'static [CommandSpec] {
    static UNITS: std::sync::OnceLock<Vec<CommandSpec>> = std::sync::OnceLock::new();
    UNITS.get_or_init(|| match group_unit() {
        Some(group) => CATALOGUE
            .iter()
            .filter(|s| !catalogue::is_grouped(s))
            .copied()
            .chain(std::iter::once(*group))
            .collect(),
        None => CATALOGUE.to_vec(),
    })
}

/// The answers of one run of the group, each handed to the host's sink as its command's
/// own output the moment it has arrived whole: a run stopped while the group still runs
/// (its future dropped with the bytes it had read) keeps them, and each gets its own
/// duration. Each line of the stream is read once, however the host splits its writes.
pub(super) struct GroupAnswers<'a> {
    job: &'a HostJob,
    sink: &'a Sink,
    keys: Vec<String>,
    started: Instant,
    handed: Vec<bool>,
    reader: Option<Reader>,
}

impl<'a> GroupAnswers<'a> {
    pub(super) fn new(job: &'a HostJob, sink: &'a Sink) -> Option<Self> {
        group_unit()?;
        let keys: Vec<String> = catalogue::grouped_ids().into_iter().map(str::to_string).collect();
        Some(GroupAnswers {
            job,
            sink,
            handed: vec![false; keys.len()],
            reader: Some(Reader::new(keys.len())),
            keys,
            started: Instant::now(),
        })
    }

    /// After each message of the group's channel, with everything it printed so far.
    pub(super) fn after(&mut self, raw: &[u8]) {
        let Some(reader) = self.reader.as_mut() else { return };
        let ended = reader.read(&self.keys, raw);
        let whole: Vec<(usize, KeyAnswer)> = ended
            .into_iter()
            .filter_map(|n| reader.whole(raw, n).map(|answer| (n, answer)))
            .collect();
        for (n, answer) in whole {
            if let Some(code) = answer.exit {
                self.hand_over(n, answer.text, Outcome::Exited { code }, None);
            }
        }
    }

    /// The group's channel ended (or timed out, was cut, lost its connection, never
    /// opened): each answer not handed over yet, whole or not, for how the group ended
    /// (`outcome`, `failure`) or for its own reason (cut at the per-answer cap, damaged).
    /// What the group's own shell printed on stderr (nothing when it ran) goes with the
    /// first command, once.
    pub(super) fn finish(&mut self, raw: &[u8], outcome: &Outcome, failure: Option<&Failure>, stderr: &str) {
        let problem = outcome.problem();
        let reader = self.reader.take().unwrap_or_else(|| Reader::new(self.keys.len()));
        let answers = reader.answers(&self.keys, raw, problem.as_deref());
        for (n, answer) in answers.into_iter().enumerate() {
            let KeyAnswer {
                text,
                exit,
                unfinished,
                cut,
            } = answer;
            let id = self.keys.get(n).cloned().unwrap_or_default();
            let label = &self.job.target.label;
            let (own, failure) = match (exit, unfinished) {
                (Some(code), None) => (Outcome::Exited { code }, None),
                _ if cut => (
                    Outcome::Truncated {
                        cap: Cap::PerCommand,
                        limit_bytes: catalogue::SECTION_CAP as u64,
                    },
                    Some(Failure::of_host(
                        ErrorKind::CommandFailed,
                        label,
                        format!(
                            "`{id}` printed more than {} KiB, the most each of the single-answer commands sharing a channel may print; the host stopped reading it",
                            catalogue::SECTION_CAP / 1024
                        ),
                    )),
                ),
                // Its own trouble (damaged) while the group ended cleanly.
                (_, Some(reason)) if problem.is_none() => (
                    Outcome::NoExitStatus,
                    Some(Failure::of_host(ErrorKind::CommandFailed, label, format!("`{id}` {reason}"))),
                ),
                // The group's: its kind and advice, told of this command.
                _ => (
                    outcome.clone(),
                    failure.map(|f| f.replaced(&format!("`{GROUP_ID}`"), &format!("`{id}`"))),
                ),
            };
            self.hand_over(n, text, own, failure);
        }
        if let (false, Some(first), Ok(mut m)) = (stderr.is_empty(), self.keys.first(), self.sink.lock()) {
            if let Some(out) = m.get_mut(first) {
                out.stderr.push_str(stderr);
            }
        }
    }

    /// Puts answer `n` in the sink as its command's output, once.
    fn hand_over(&mut self, n: usize, text: String, own: Outcome, failure: Option<Failure>) {
        match self.handed.get_mut(n) {
            Some(handed) if !*handed => *handed = true,
            _ => return,
        }
        let id = self.keys.get(n).cloned().unwrap_or_default();
        let command = catalogue::spec(&id).map_or("", |s| s.command);
        let mut out = RawOutput::new(id.as_str(), command);
        out.stdout = text;
        out.duration_ms = elapsed_ms(self.started);
        out.exit_status = match own {
            Outcome::Exited { code } => Some(code),
            _ => None,
        };
        out.timeout_hit = matches!(own, Outcome::TimedOut { .. });
        out.truncated = matches!(own, Outcome::Truncated { .. });
        out.failure = failure;
        // `-v`: each grouped command as if it had had its own channel.
        tracing::info!(
            "{}: `{}` {} in {} ms ({} bytes out; sent in {})",
            self.job.label,
            command,
            how_it_ended(&own, out.exit_status),
            out.duration_ms,
            out.stdout.len(),
            GROUP_ID,
        );
        out.outcome = Some(own);
        if let Ok(mut m) = self.sink.lock() {
            m.insert(id, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(home: &std::path::Path) -> HostJob {
        let config = pvrdma_ssh_config::SshConfig::empty(pvrdma_ssh_config::LocalContext::current(home));
        let spec = crate::hosts::parse_host_spec("esx01").expect("a host");
        let flags = crate::ssh::plan::Flags::default();
        let planner = crate::ssh::plan::Planner {
            config: &config,
            home,
            flags: &flags,
        };
        let route = planner.route(&spec).expect("a route");
        HostJob {
            label: "esx01".into(),
            jumps: route.jumps,
            target: route.target,
            credentials: Credentials::default(),
            connect_timeout: ConnectLimit {
                limit: Duration::from_secs(10),
                option: "--connect-timeout",
                from_ssh_config: false,
            },
            command_timeout: Duration::from_secs(60),
            host_output_budget: 1 << 20,
            run_budget: RunBudget::new(1 << 20),
            channels: DEFAULT_CHANNELS,
        }
    }

    fn keys() -> Vec<String> {
        catalogue::group_keys(group_unit().expect("a group").command).expect("its keys")
    }

    #[test]
    fn answers_reach_the_sink_whole_as_they_arrive_and_the_rest_for_how_the_group_ended() {
        let home = tempfile::tempdir().expect("tempdir");
        let job = job(home.path());
        let sink = Sink::default();
        let mut group = GroupAnswers::new(&job, &sink).expect("a group");
        let keys = keys();
        // The second answer ends first, with a byte that is not UTF-8 in it (a shell in
        // the C locale counts bytes).
        let mut raw = format!("0:started 2\n2:begin {k}\n2|caf", k = keys[1]).into_bytes();
        raw.push(0xe9);
        raw.extend_from_slice(format!("\n2:end {k} exit 0 lines 1 bytes 5\n", k = keys[1]).as_bytes());
        // Split inside its end line: nothing whole yet, then the rest arrives.
        group.after(raw.get(..raw.len() - 10).expect("a prefix"));
        assert!(sink.lock().expect("sink").is_empty());
        group.after(&raw);
        {
            let m = sink.lock().expect("sink");
            let second = m.get(&keys[1]).expect("handed over whole");
            assert_eq!((second.stdout.as_str(), second.exit_status), ("caf\u{fffd}\n", Some(0)));
            assert_eq!(m.len(), 1);
        }
        // The channel never got further: every other command times out as the group did,
        // named in its own words.
        let outcome = Outcome::TimedOut {
            timeout_secs: 60,
            timeout_ms: None,
            after_ms: 60_000,
        };
        let failure = Failure::new(
            ErrorKind::Timeout,
            format!("esx01: `{GROUP_ID}` did not finish within --command-timeout 60s"),
        );
        group.finish(&raw, &outcome, Some(&failure), "sh: warning\n");
        let m = sink.lock().expect("sink");
        assert_eq!(m.len(), keys.len());
        let first = m.get(&keys[0]).expect("the first");
        let f = first.failure.as_ref().expect("a failure");
        assert_eq!(f.kind, ErrorKind::Timeout);
        assert!(f.message.contains(&format!("`{}`", keys[0])), "{}", f.message);
        assert!(first.timeout_hit);
        assert_eq!(first.stderr, "sh: warning\n");
        assert_eq!(m.get(&keys[1]).map(|o| o.exit_status), Some(Some(0)), "kept as it was");
    }
    /// A channel the single-answer commands share, cut at its cap by one answer's flood
    /// (a single long line, which the host's framing cannot split): every answer not yet
    /// whole, a 99-byte one too, says it was cut with that channel, not at a per-command
    /// cap; the cap a channel of one command hits is still called the command's.
    #[test]
    fn an_answer_cut_with_its_shared_channel_names_the_channel_cap_that_cut_it() {
        let home = tempfile::tempdir().expect("tempdir");
        let job = job(home.path());
        let budget = Budget::new(64 << 20, RunBudget::new(64 << 20));
        let keys = keys();
        let small = "x".repeat(99);
        let head = format!(
            "0:started 2\n2:begin {k}\n2|{small}\n1:begin {f}\n1|",
            k = keys[1],
            f = keys[0]
        );
        let flood = vec![b'y'; OUTPUT_CAP];
        for shared in [true, false] {
            let mut rx = Received::new(&budget, 64 << 20, shared);
            rx.append(head.as_bytes(), false);
            rx.append(&flood, false);
            let outcome = rx.outcome(&job, Instant::now());
            let cap = if shared { Cap::SharedChannel } else { Cap::PerCommand };
            assert_eq!(
                outcome,
                Outcome::Truncated {
                    cap,
                    limit_bytes: OUTPUT_CAP as u64
                }
            );
            if !shared {
                assert_eq!(
                    outcome.problem().as_deref(),
                    Some("output cut at the 16 MiB per-command cap")
                );
                continue;
            }
            let sink = Sink::default();
            let mut group = GroupAnswers::new(&job, &sink).expect("a group");
            let failure = failure_for(&job, GROUP_ID, &outcome);
            group.finish(&rx.stdout, &outcome, failure.as_ref(), "");
            let m = sink.lock().expect("sink");
            let cut = m.get(&keys[1]).expect("the 99-byte answer");
            assert_eq!(cut.stdout.trim_end(), small, "what arrived is kept");
            assert_eq!(cut.outcome, Some(outcome.clone()));
            let message = &cut.failure.as_ref().expect("a failure").message;
            assert!(
                message.contains(&format!("`{}`", keys[1]))
                    && message.contains("cut with the channel it shared with the other single-answer commands")
                    && message.contains("16 MiB"),
                "{message}"
            );
            assert!(!message.contains("per-command"), "{message}");
        }
    }
}

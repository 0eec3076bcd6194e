//! `pvrdma-doctor watch`: the same diagnosis again and again, every `--interval`, so a
//! fallback that starts between two runs (DRS moved a VM, an uplink went down, a ruleset
//! was turned off) shows the minute it appears.
//!
//! The first round prints the full report; every later round prints only what differs
//! from the round before, as the `--baseline` comparison sees it (host status, check
//! status, adapter verdict, probe status): one timestamped line per change, or with
//! `--format json` one JSON event per line (JSON Lines, for log shippers). Rounds never
//! overlap: the next starts `--interval` after the previous one started, or at once (and
//! says so) when a round took longer. Only the previous round's report is kept, so memory
//! stays flat however long it runs.
//!
//! Ends with `--count N` rounds or `--until-change` (like `watch -g`) with the exit code of
//! the last report (0, 1, 3), on Ctrl-C with 130 once the current round is reported
//! (hosts a Ctrl-C cut short are then not compared), or on SIGTERM (what `kill` and
//! `systemctl stop` send) with 0 once the current round has finished and is reported: a
//! service asked to stop stopped cleanly, so a systemd unit needs no `SuccessExitStatus`.
use super::WatchSetup;
use crate::live::LiveRun;
use crate::source::rounds::{Following, Round, Rounds, Unread};
use crate::source::Move;
use anyhow::Context;
use pvrdma_engine::baseline::Baseline;
use pvrdma_engine::diagnose::{self, Change, ChangeKind, Diagnosis, HostStatus};
use pvrdma_engine::report::{self, Format};
use serde_json::json;
use std::time::{Duration, Instant, SystemTime};

/// How a watch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Count,
    UntilChange,
    Interrupted,
    /// SIGTERM: asked to stop (`kill`, `systemctl stop`).
    Terminated,
}

impl Stop {
    fn word(self) -> &'static str {
        match self {
            Stop::Count => "count",
            Stop::UntilChange => "until-change",
            Stop::Interrupted => "interrupted",
            Stop::Terminated => "terminated",
        }
    }
}

/// Which stop signal is pending, if any, without waiting.
fn pending(waiter: &tokio::runtime::Runtime, signals: &mut Signals) -> Option<Stop> {
    waiter.block_on(async {
        tokio::select! {
            biased;
            _ = signals.interrupt.recv() => Some(Stop::Interrupted),
            _ = signals.terminate.recv() => Some(Stop::Terminated),
            () = std::future::ready(()) => None,
        }
    })
}

/// The watch's own listeners for Ctrl-C and SIGTERM.
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    /// From here on SIGTERM no longer kills the process mid-round: it ends the watch
    /// after the round, like Ctrl-C (without cutting it short).
    fn listen(waiter: &tokio::runtime::Runtime) -> anyhow::Result<Signals> {
        use tokio::signal::unix::{signal, SignalKind};
        let _entered = waiter.enter();
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt()).context("cannot listen for Ctrl-C")?,
            terminate: signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?,
        })
    }
}

/// Runs the watch; returns the exit code. With `--vcenter`, its one session is logged out
/// however the watch ends.
pub(crate) fn run(setup: WatchSetup) -> anyhow::Result<u8> {
    let vcenter = match Following::start(&setup.source) {
        Ok(vcenter) => vcenter,
        Err(e) => return super::vcenter_failure(e, None),
    };
    // Sleeps between rounds. Its Ctrl-C listener lives as long as the watch, so a Ctrl-C
    // is never lost, whenever it comes: a round hears it itself and stops early, but one
    // that comes while no round listens (between rounds, or heard first by the simulated
    // hosts' runtime) is still pending here when the round ends.
    let waiter = crate::live::runtime()?;
    // No session is open before the first round reads vCenter: nothing to log out yet.
    let baseline = super::load_baseline(setup.baseline.as_deref())?;
    let mut rounds = Rounds::start(&setup.source, &setup.live, vcenter)?;
    let result = Watch::new(&setup, &waiter, baseline).and_then(|mut w| w.rounds(&mut rounds));
    rounds.close(&waiter);
    result
}

/// A watch under way: what it prints, the report it compares with, its signals.
struct Watch<'a> {
    setup: &'a WatchSetup,
    waiter: &'a tokio::runtime::Runtime,
    format: Format,
    width: usize,
    signals: Signals,
    /// The last report: the next round compares with it.
    previous: Option<Baseline>,
    round: u64,
}

/// What one round's source read gave the watch to go on with.
enum Next {
    /// Collect and report.
    Go { moves: Vec<Move> },
    /// The watch ends here, with this exit code.
    End(u8),
}

impl<'a> Watch<'a> {
    fn new(
        setup: &'a WatchSetup,
        waiter: &'a tokio::runtime::Runtime,
        baseline: Option<Baseline>,
    ) -> anyhow::Result<Self> {
        Ok(Watch {
            setup,
            waiter,
            format: if setup.json { Format::Json } else { Format::Human },
            width: setup.human.width,
            signals: Signals::listen(waiter)?,
            previous: baseline,
            round: 0,
        })
    }

    /// The rounds, until a stop.
    fn rounds(&mut self, rounds: &mut Rounds) -> anyhow::Result<u8> {
        loop {
            self.round += 1;
            let started = Instant::now();
            let moves = match self.read(rounds)? {
                Next::Go { moves } => moves,
                Next::End(code) => return Ok(code),
            };
            let collected = rounds.collect(started, self.waiter, &mut self.signals.interrupt)?;
            let Some(run) = collected else {
                let code = pvrdma_engine::exit::INTERRUPTED;
                return self.finish(Stop::Interrupted, self.round.saturating_sub(1), code);
            };
            let (code, changed) = match self.report(rounds, &run, &moves, started)? {
                Ok(reported) => reported,
                Err(code) => return Ok(code),
            };
            if let Some(stop) = self.stop(&run, changed) {
                return self.finish(stop, self.round, code);
            }
            // Only the last report is kept (in `previous`), not the outputs it came from.
            drop(run);
            rounds.quiet();
            if let Some(stop) = self.wait(started)? {
                return self.finish(stop, self.round, code);
            }
        }
    }

    /// Reads the round's source; on the first round says what vCenter skipped, and ends
    /// the watch when vCenter gives nothing to watch or cannot be read at all.
    fn read(&mut self, rounds: &mut Rounds) -> anyhow::Result<Next> {
        let first = self.round == 1;
        let read = match rounds.read(self.waiter, &mut self.signals.interrupt) {
            Ok(Some(round)) => round,
            Ok(None) => {
                let code = pvrdma_engine::exit::INTERRUPTED;
                return self
                    .finish(Stop::Interrupted, self.round.saturating_sub(1), code)
                    .map(Next::End);
            }
            Err(e) => return super::vcenter_failure(e, None).map(Next::End),
        };
        let Round { reading, unread } = read;
        if let (true, Some(reading)) = (first, &reading) {
            let skipped = reading.lines();
            for line in &skipped {
                eprint!("{}", crate::terminal::stderr_message("pvrdma-doctor: ", line));
            }
            // Nothing to watch from the start: said as a one-shot run says it, never a
            // watch of zero hosts that passes.
            if reading.hosts().is_empty() {
                return Ok(Next::End(super::no_host_to_diagnose(&reading.vcenter, &skipped, None)));
            }
        }
        match unread {
            Some(Unread::Configuration(e)) if first => return Err(e),
            // vCenter unreadable for a round: the hosts of the last inventory are watched
            // (a DRS move may go unseen meanwhile), or the configuration last read is
            // judged again (never over SSH); the watch says so.
            Some(unread) => self.unread(&unread)?,
            None => {}
        }
        let moves = reading.and_then(|r| r.moves).unwrap_or_default();
        Ok(Next::Go { moves })
    }

    /// Says what could not be read from vCenter this round and what the watch goes on
    /// with. A refused certificate ends with the option that pins it, whole on a line of
    /// its own however narrow the output: wrapped like prose, a thumbprint would paste
    /// back with the indent inside. With `--format json`, a `vcenter-unread` event.
    fn unread(&self, unread: &Unread) -> anyhow::Result<()> {
        let (what, head, error) = match unread {
            Unread::Inventory(e) => (
                "inventory",
                "vCenter could not be read; watching the hosts of its last inventory",
                e,
            ),
            Unread::Configuration(e) => (
                "configuration",
                "the hosts' configuration could not be read from vCenter; judging the last one read",
                e,
            ),
        };
        let time = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        let pinned = crate::vcenter::pin_apart(error);
        if self.format == Format::Json {
            let mut fields = json!({"what": what, "message": format!("{head}: {error:#}")});
            if let Some((_, pin)) = pinned {
                fields["pin"] = json!(pin);
            }
            return event("vcenter-unread", &time, self.round, fields);
        }
        let text = match &pinned {
            Some((prose, _)) => format!("{head}: {prose}"),
            None => format!("{head}: {error:#}"),
        };
        let mut out = report::timestamped(&time, &text, self.width);
        if let Some((_, pin)) = pinned {
            out.push_str(&format!("    {pin}\n"));
        }
        write(&out)
    }

    /// Diagnoses the round and prints it (the first in full, later ones as changes).
    /// Returns its exit code and how many changes it printed, or `Err(code)` when
    /// stdout's reader is gone.
    fn report(
        &mut self,
        rounds: &Rounds,
        run: &LiveRun,
        moves: &[Move],
        started: Instant,
    ) -> anyhow::Result<Result<(u8, usize), u8>> {
        let (format, width, round) = (self.format, self.width, self.round);
        let selection = diagnose::Selection::of_vms(rounds.vms());
        let mut diagnosis = diagnose::diagnose_selected(&run.captures, &selection);
        let comparison = self.previous.as_ref().map(|b| {
            let mut c = pvrdma_engine::baseline::compare(b, &diagnosis);
            if run.interrupted {
                c.list = collected_only(std::mem::take(&mut c.list), &diagnosis);
            }
            c
        });
        let changed = comparison.as_ref().map_or(0, |c| c.list.len()) + moves.len();
        let code = diagnosis.exit_code();
        let time = humantime::format_rfc3339_seconds(run.finished).to_string();
        let printed = if round == 1 {
            // Against --baseline, the first report carries the comparison.
            diagnosis.changes = comparison;
            print_report(format, &self.setup.human, &diagnosis, &time).and_then(|()| {
                if format == Format::Human && !run.interrupted {
                    write(&watching_line(&time, rounds, self.setup, width))
                } else {
                    Ok(())
                }
            })
        } else {
            let list = comparison.map(|c| c.list).unwrap_or_default();
            print_moves(format, moves, &time, round, width)
                .and_then(|()| print_changes(format, &list, &time, round, width))
                .and_then(|()| match format {
                    // A heartbeat for log shippers: silence would not tell a stopped watch.
                    Format::Json => event(
                        "round",
                        &time,
                        round,
                        json!({"took_seconds": seconds(started.elapsed()),
                                             "changes": changed, "exit_code": code}),
                    ),
                    _ => Ok(()),
                })
        };
        if let Err(e) = printed {
            // Whoever read stdout is gone (`| head`): nobody is left to tell.
            return match e.downcast_ref::<std::io::Error>() {
                Some(io) if io.kind() == std::io::ErrorKind::BrokenPipe => Ok(Err(code)),
                _ => Err(e),
            };
        }
        // Only the last report is kept: the next round compares with it.
        self.previous = Some(Baseline::of(&diagnosis, run.finished));
        Ok(Ok((code, changed)))
    }

    /// Whether the watch stops after this round: Ctrl-C or SIGTERM, `--until-change`,
    /// `--count`.
    fn stop(&mut self, run: &LiveRun, changed: usize) -> Option<Stop> {
        let signalled = pending(self.waiter, &mut self.signals);
        if run.interrupted {
            Some(Stop::Interrupted)
        } else if signalled.is_some() {
            signalled
        } else if self.setup.until_change && changed > 0 {
            Some(Stop::UntilChange)
        } else if self.setup.count.is_some_and(|n| self.round >= n) {
            Some(Stop::Count)
        } else {
            None
        }
    }

    /// Waits until the next round is due (`--interval` after this one started), or says
    /// it is already late; a signal meanwhile stops the watch.
    fn wait(&mut self, started: Instant) -> anyhow::Result<Option<Stop>> {
        let interval = self.setup.interval;
        let next = started + interval;
        let now = Instant::now();
        if now >= next {
            overrun(self.format, self.round, now - started, interval, self.width).or_else(closed_is_fine)?;
            return Ok(None);
        }
        let signals = &mut self.signals;
        Ok(self.waiter.block_on(async {
            tokio::select! {
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(next)) => None,
                _ = signals.interrupt.recv() => Some(Stop::Interrupted),
                _ = signals.terminate.recv() => Some(Stop::Terminated),
            }
        }))
    }

    fn finish(&self, stop: Stop, round: u64, code: u8) -> anyhow::Result<u8> {
        finish(self.format, stop, round, code, self.width)
    }
}

/// A round cut short by Ctrl-C: hosts it did not finish are not compared (they did not
/// change, they were not looked at), nor are the checks across hosts.
fn collected_only(list: Vec<Change>, d: &Diagnosis) -> Vec<Change> {
    let cut: Vec<&str> = d
        .hosts
        .iter()
        .filter(|h| h.status == HostStatus::Interrupted)
        .map(|h| h.host.as_str())
        .collect();
    list.into_iter()
        .filter(|c| match &c.host {
            Some(h) => !cut.contains(&h.as_str()),
            None => c.kind == ChangeKind::Probe,
        })
        .collect()
}

/// The first round: the full report (JSON: one `report` event on one line).
fn print_report(format: Format, human: &report::HumanOptions, d: &Diagnosis, time: &str) -> anyhow::Result<()> {
    match format {
        Format::Json => event("report", time, 1, json!({"report": report::json::to_value(d)})),
        _ => write(
            &report::render_with(
                d,
                Format::Human,
                &report::RenderOptions {
                    human: human.clone(),
                    ..report::RenderOptions::default()
                },
            )
            .text,
        ),
    }
}

/// `<time> watching 3 hosts every 5m; ...`: after the first report, what comes next.
fn watching_line(time: &str, rounds: &Rounds, args: &WatchSetup, width: usize) -> String {
    let until = if args.until_change {
        "until the first change".to_string()
    } else if let Some(n) = args.count {
        format!("for {n} rounds")
    } else {
        "until Ctrl-C".to_string()
    };
    let text = format!(
        "watching {} every {} {until}; changes follow, one line each",
        match (rounds.hosts(), rounds.simulated()) {
            (1, false) => "1 host".to_string(),
            (n, false) => format!("{n} hosts"),
            (1, true) => "1 simulated host".to_string(),
            (n, true) => format!("{n} simulated hosts"),
        },
        humantime::format_duration(args.interval)
    );
    format!("\n{}", report::timestamped(time, &text, width))
}

fn print_changes(format: Format, list: &[Change], time: &str, round: u64, width: usize) -> anyhow::Result<()> {
    match format {
        Format::Json => {
            for c in list {
                event(
                    "change",
                    time,
                    round,
                    json!({"host": c.host,
                             "kind": c.kind, "id": c.id, "from": c.from, "to": c.to,
                             "reason": c.reason,
                             "remedy": c.remediation.as_ref().map(pvrdma_engine::diagnose::Remedy::text),
                             "remediation": c.remediation}),
                )?;
            }
            Ok(())
        }
        _ => write(&report::watch_lines(list, time, width)),
    }
}

/// What vCenter says moved since the last round, before the changes it explains.
fn print_moves(format: Format, moves: &[Move], time: &str, round: u64, width: usize) -> anyhow::Result<()> {
    for m in moves {
        match format {
            Format::Json => {
                let (kind, fields) = m.event();
                event(kind, time, round, fields)?;
            }
            _ => write(&report::timestamped(time, &m.line(), width))?,
        }
    }
    Ok(())
}

/// A round that took longer than the interval: the next one starts now.
fn overrun(format: Format, round: u64, took: Duration, interval: Duration, width: usize) -> anyhow::Result<()> {
    let time = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    match format {
        Format::Json => event(
            "overrun",
            &time,
            round,
            json!({"took_seconds": seconds(took), "interval_seconds": seconds(interval)}),
        ),
        _ => write(&report::timestamped(
            &time,
            &format!(
                "round {round} took {}, longer than --interval {}; the next round starts now",
                humantime::format_duration(if took < Duration::from_secs(10) {
                    Duration::from_millis(took.as_millis().try_into().unwrap_or(u64::MAX))
                } else {
                    Duration::from_secs(took.as_secs())
                }),
                humantime::format_duration(interval)
            ),
            width,
        )),
    }
}

/// The last word: JSON gets a `stop` event; after Ctrl-C the shell's 130 wins; after
/// SIGTERM 0, the watch having stopped as asked.
fn finish(format: Format, stop: Stop, round: u64, code: u8, width: usize) -> anyhow::Result<u8> {
    let code = match stop {
        Stop::Interrupted => pvrdma_engine::exit::INTERRUPTED,
        Stop::Terminated => pvrdma_engine::exit::HEALTHY,
        Stop::Count | Stop::UntilChange => code,
    };
    let time = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    match format {
        Format::Json => event("stop", &time, round, json!({"reason": stop.word(), "exit_code": code}))?,
        _ if stop == Stop::Interrupted => {
            eprintln!("pvrdma-doctor: interrupted after round {round}");
        }
        // The watch's own timestamped line on stdout, where its log goes.
        _ if stop == Stop::Terminated => write(&report::timestamped(
            &time,
            &format!("stopped by SIGTERM after round {round}"),
            width,
        ))
        .or_else(closed_is_fine)?,
        _ => {}
    }
    Ok(code)
}

/// Writes to stdout; unlike the one-shot report, a closed pipe is an error here, so the
/// watch ends when its reader does.
fn write(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush())?;
    Ok(())
}

/// An overrun notice nobody can read is no reason to stop a watch... until the next
/// round's write finds the pipe closed.
fn closed_is_fine(e: anyhow::Error) -> anyhow::Result<()> {
    match e.downcast_ref::<std::io::Error>() {
        Some(io) if io.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        _ => Err(e),
    }
}

/// One JSON Lines event: `event`, `time`, `round` first, then its own fields.
fn event(kind: &str, time: &str, round: u64, fields: serde_json::Value) -> anyhow::Result<()> {
    #[derive(serde::Serialize)]
    struct Event<'a> {
        event: &'a str,
        time: &'a str,
        round: u64,
        #[serde(flatten)]
        fields: serde_json::Value,
    }
    let mut line = serde_json::to_string(&Event {
        event: kind,
        time,
        round,
        fields,
    })?;
    line.push('\n');
    write(&line)
}

fn seconds(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round() / 1000.0
}

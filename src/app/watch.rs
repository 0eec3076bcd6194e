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
use crate::live::{collect_live, LiveOptions, LiveRun};
use crate::vcenter::{Follower, Move};
use anyhow::Context;
use pvrdma_engine::baseline::Baseline;
use pvrdma_engine::capture::HostCapture;
use pvrdma_engine::diagnose::{self, Change, ChangeKind, Diagnosis, HostStatus};
use pvrdma_engine::report::{self, Format};
use serde_json::json;
use std::time::{Duration, Instant, SystemTime};

/// Where each round's captures come from.
enum Source {
    Live(LiveOptions),
    /// The demo's simulated hosts, kept running across rounds; the scenario directory, if
    /// any, is read again before each round.
    Demo {
        fleet: crate::demo::SimFleet,
        live: LiveOptions,
        scenario: Option<std::path::PathBuf>,
    },
}

impl Source {
    fn new(setup: &WatchSetup) -> anyhow::Result<Source> {
        let mut live = setup.live.options.clone();
        if let Some(demo) = &setup.demo {
            let fleet = crate::demo::start_fleet(demo, live.probe.is_some())?;
            eprintln!(
                "pvrdma-doctor: watch --demo: {} simulated ESXi hosts ({}) on 127.0.0.1, no real host is contacted{}",
                fleet.host_names().len(),
                pvrdma_nodeset::fold(&fleet.host_names()),
                match &demo.scenario {
                    Some(dir) => format!(
                        "; {} is read again every round: edit a host's files there to break or mend it",
                        dir.display()
                    ),
                    None => "; --scenario DIR serves a folder you can edit while it runs".to_string(),
                }
            );
            let hosts = std::mem::take(&mut live.targets);
            let mut live = fleet.live_options(live);
            if !hosts.is_empty() {
                live.targets = hosts;
            }
            return Ok(Source::Demo {
                fleet,
                live,
                scenario: demo.scenario.clone(),
            });
        }
        anyhow::ensure!(
            !live.targets.is_empty() || live.hosts_file.is_some() || setup.live.vcenter.is_some(),
            "no hosts to watch. Try `pvrdma-doctor watch esx01 esx02 --interval 5m`, or `pvrdma-doctor watch --demo`"
        );
        // Hosts from stdin are read once: every round watches the same hosts (a hosts
        // file is read again each round, so editing it changes what is watched).
        let from_stdin = live.hosts_file.as_deref() == Some(std::path::Path::new("-"));
        if from_stdin || live.targets.iter().any(|h| h == "-") {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text)
                .context("cannot read the hosts from stdin")?;
            live.targets.retain(|h| h != "-");
            live.targets.extend(crate::hosts::specs_from_text(&text));
            live.target_positions.clear();
        }
        if from_stdin {
            live.hosts_file = None;
        }
        let live = super::start_live(super::LiveSetup {
            options: live,
            ask_password: setup.live.ask_password,
            vcenter: None,
        })?;
        Ok(Source::Live(live))
    }

    fn live(&mut self) -> &mut LiveOptions {
        match self {
            Source::Live(live) | Source::Demo { live, .. } => live,
        }
    }

    /// `warned`: the hosts already said to be left out of the simulation (said once).
    fn collect(&self, warned: &mut Vec<String>) -> anyhow::Result<LiveRun> {
        match self {
            Source::Live(live) => collect_live(live),
            Source::Demo {
                fleet, live, scenario, ..
            } => {
                if let Some(dir) = scenario {
                    match fleet.reload(dir) {
                        Ok(mut left_out) => {
                            left_out.retain(|h| !warned.contains(h));
                            if !left_out.is_empty() {
                                eprintln!(
                                    "pvrdma-doctor: {} not served as the scenario now says: the simulated hosts and their open ports are those of the scenario at start",
                                    pvrdma_nodeset::fold(&left_out)
                                );
                                warned.extend(left_out);
                            }
                        }
                        Err(e) => eprintln!(
                            "pvrdma-doctor: cannot read the scenario again ({e:#}); the hosts keep their previous answers"
                        ),
                    }
                }
                let run = collect_live(live);
                fleet.forget_commands();
                run
            }
        }
    }

    /// How many hosts a round covers, for the "watching" line.
    fn hosts(&self) -> usize {
        match self {
            Source::Live(live) | Source::Demo { live, .. } => live.targets.len(),
        }
    }
}

/// A `--no-ssh` round as a run: the hosts judged from the vSphere API (`captures`).
fn api_run(captures: Vec<HostCapture>, started: Instant) -> LiveRun {
    let now = SystemTime::now();
    LiveRun::from_api(captures, now.checked_sub(started.elapsed()).unwrap_or(now), now)
}

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

/// Runs the watch; returns the exit code. With `--vcenter`, its one session is logged out
/// however the watch ends.
pub(crate) fn run(setup: WatchSetup) -> anyhow::Result<u8> {
    let mut follower = match setup.live.vcenter.clone().map(Follower::new).transpose() {
        Ok(follower) => follower,
        Err(e) => return super::vcenter_failure(e, None),
    };
    // Sleeps between rounds. Its Ctrl-C listener lives as long as the watch, so a Ctrl-C
    // is never lost, whenever it comes: a round hears it itself and stops early, but one
    // that comes while no round listens (between rounds, or heard first by the simulated
    // hosts' runtime) is still pending here when the round ends.
    let waiter = crate::live::runtime()?;
    let result = rounds(&setup, follower.as_mut(), &waiter);
    if let Some(f) = &mut follower {
        waiter.block_on(f.close());
    }
    result
}

/// The rounds, until a stop.
fn rounds(
    setup: &WatchSetup,
    mut follower: Option<&mut Follower>,
    waiter: &tokio::runtime::Runtime,
) -> anyhow::Result<u8> {
    let args = setup;
    let format = if setup.json { Format::Json } else { Format::Human };
    let width = setup.human.width;
    let baseline = super::load_baseline(setup.baseline.as_deref())?;
    let mut source = Source::new(setup)?;
    // SIGTERM is listened for the same way: from here on it no longer kills the process
    // mid-round, it ends the watch after the round like Ctrl-C (without cutting it short).
    let mut signals = {
        use tokio::signal::unix::{signal, SignalKind};
        let _entered = waiter.enter();
        Signals {
            interrupt: signal(SignalKind::interrupt()).context("cannot listen for Ctrl-C")?,
            terminate: signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?,
        }
    };
    let mut previous: Option<Baseline> = baseline;
    let mut round: u64 = 0;
    let mut warned: Vec<String> = Vec::new();
    let mut scope: Option<Vec<String>> = None;
    let mut last_api: Vec<HostCapture> = Vec::new();
    loop {
        round += 1;
        let started = Instant::now();
        let mut moves = Vec::new();
        let mut from_api: Option<anyhow::Result<Vec<HostCapture>>> = None;
        if let Some(f) = follower.as_deref_mut() {
            let no_ssh = f.no_ssh();
            let read = waiter.block_on(async {
                tokio::select! {
                    r = async {
                        let reading = f.read().await?;
                        // --no-ssh: the configuration in the same session, this round.
                        let configuration = if no_ssh { Some(f.configuration(&reading).await) } else { None };
                        Ok((reading, configuration))
                    } => Some(r),
                    _ = signals.interrupt.recv() => None,
                }
            });
            match read {
                None => {
                    return finish(
                        format,
                        Stop::Interrupted,
                        round.saturating_sub(1),
                        pvrdma_engine::exit::INTERRUPTED,
                        width,
                    )
                }
                Some(Ok((reading, configuration))) => {
                    from_api = configuration;
                    if round == 1 {
                        for line in &reading.skipped {
                            eprint!("{}", crate::terminal::stderr_message("pvrdma-doctor: ", line));
                        }
                        // Nothing to watch from the start: said as a one-shot run says it,
                        // never a watch of zero hosts that passes.
                        if let (true, Some(vcenter)) = (reading.hosts.is_empty(), &setup.live.vcenter) {
                            return Ok(super::no_host_to_diagnose(vcenter, &reading.skipped, None));
                        }
                    }
                    source.live().targets = reading.hosts;
                    source.live().target_positions.clear();
                    scope = reading.vms;
                    moves = reading.moves;
                }
                Some(Err(e)) if round == 1 => return super::vcenter_failure(e, None),
                // vCenter unreadable for a round: the hosts of the last inventory are
                // watched, and the line says so (a DRS move may go unseen meanwhile).
                Some(Err(e)) => write(&report::timestamped(
                    &humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
                    &format!("vCenter could not be read ({e:#}); watching the hosts of its last inventory"),
                    width,
                ))?,
            }
        }
        let run = if follower.as_ref().is_some_and(|f| f.no_ssh()) {
            let captures = match from_api {
                Some(Ok(captures)) => {
                    last_api.clone_from(&captures);
                    captures
                }
                Some(Err(e)) if round == 1 => return Err(e),
                // vCenter could not be read this round: the configuration last read is
                // judged again (never over SSH), and the line says so.
                Some(Err(e)) => {
                    write(&report::timestamped(
                        &humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
                        &format!("the hosts' configuration could not be read from vCenter ({e:#}); judging the last one read"),
                        width,
                    ))?;
                    last_api.clone()
                }
                None => last_api.clone(),
            };
            api_run(captures, started)
        } else if follower.is_some() && source.live().targets.is_empty() {
            // Every host left the selection (into maintenance, out of the cluster): the
            // round has nothing to collect, and the watch goes on until they come back.
            api_run(Vec::new(), started)
        } else {
            let mut run = source.collect(&mut warned)?;
            // Hosts whose SSH refused are judged from vCenter, as a one-shot run does.
            if let (Some(f), false) = (follower.as_deref_mut(), run.interrupted) {
                let completed = waiter.block_on(async {
                    tokio::select! {
                        () = f.complete_refused(&mut run.captures) => true,
                        _ = signals.interrupt.recv() => false,
                    }
                });
                if !completed {
                    let code = pvrdma_engine::exit::INTERRUPTED;
                    return finish(format, Stop::Interrupted, round.saturating_sub(1), code, width);
                }
            }
            run
        };
        let selection = diagnose::Selection::of_vms(scope.as_deref());
        let mut diagnosis = diagnose::diagnose_selected(&run.captures, &selection);
        let comparison = previous.as_ref().map(|b| {
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
            print_report(format, &setup.human, &diagnosis, &time).and_then(|()| {
                if format == Format::Human && !run.interrupted {
                    write(&watching_line(&time, &source, args, width))
                } else {
                    Ok(())
                }
            })
        } else {
            let list = comparison.map(|c| c.list).unwrap_or_default();
            print_moves(format, &moves, &time, round, width)
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
                Some(io) if io.kind() == std::io::ErrorKind::BrokenPipe => Ok(code),
                _ => Err(e),
            };
        }
        // Only the last report is kept: the next round compares with it.
        previous = Some(Baseline::of(&diagnosis, run.finished));
        drop(diagnosis);
        drop(run.captures);
        let signalled = pending(waiter, &mut signals);
        let stop = if run.interrupted {
            Some(Stop::Interrupted)
        } else if signalled.is_some() {
            signalled
        } else if args.until_change && changed > 0 {
            Some(Stop::UntilChange)
        } else if args.count.is_some_and(|n| round >= n) {
            Some(Stop::Count)
        } else {
            None
        };
        if let Some(stop) = stop {
            return finish(format, stop, round, code, width);
        }
        // The progress bar is for the first, full report; later rounds stay quiet.
        source.live().progress = false;
        let next = started + args.interval;
        let now = Instant::now();
        if now >= next {
            overrun(format, round, now - started, args.interval, width).or_else(closed_is_fine)?;
            continue;
        }
        let signalled = waiter.block_on(async {
            tokio::select! {
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(next)) => None,
                _ = signals.interrupt.recv() => Some(Stop::Interrupted),
                _ = signals.terminate.recv() => Some(Stop::Terminated),
            }
        });
        if let Some(stop) = signalled {
            return finish(format, stop, round, code, width);
        }
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
fn watching_line(time: &str, source: &Source, args: &WatchSetup, width: usize) -> String {
    let until = if args.until_change {
        "until the first change".to_string()
    } else if let Some(n) = args.count {
        format!("for {n} rounds")
    } else {
        "until Ctrl-C".to_string()
    };
    let text = format!(
        "watching {} every {} {until}; changes follow, one line each",
        match (source.hosts(), matches!(source, Source::Demo { .. })) {
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

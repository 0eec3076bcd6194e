//! Pipeline stage *collect*, live: runs the catalogue on one host over one SSH connection.
//!
//! The catalogue runs as a dependency graph ([`schedule`]) on up to `MaxSessions`
//! concurrent channels of that connection. A server that refuses a channel open (a lower
//! `MaxSessions`) does not lose the command: the window shrinks and it is retried, at the
//! end alone. Each command has its own timeout; whatever arrived before it fired is kept,
//! and a timeout on one command never stops the others.
use super::schedule::{self, Ran};
use crate::ssh::client::{self, Connection};
use crate::ssh::endpoint::{Credentials, Endpoint};
use pvrdma_engine::capture::{Cap, CaptureSource, ErrorKind, Failure, HostCapture, Outcome, RawOutput};
use pvrdma_engine::catalogue::{self, CommandSpec, Framing, CATALOGUE};
use russh::ChannelMsg;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pvrdma_engine::capture::OUTPUT_CAP;

mod budget;
mod group;
mod login;
use budget::Budget;
pub use budget::{ProcessBudget, RunBudget};
use group::{group_unit, GroupAnswers, GROUP_ID};
pub(crate) use login::{login, ConnectLimit};

/// Channels open at once per host: under OpenSSH's default MaxSessions (10, per
/// connection). sshd frees a session a moment after the channel's close, so at the limit
/// a new channel is refused and retried: with 10, one host (40 VMs, host_bench) saw 4
/// refusals and its port list, refused, started a second later (2.19 s against 2.16).
pub(crate) const DEFAULT_CHANNELS: usize = 8;

/// Attempts for a command whose channel open the server keeps refusing.
const OPEN_RETRIES: usize = 5;

/// Where a host is in its collection, for the progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Connecting,
    Collecting,
    Done,
}

/// Everything needed to collect one host.
#[derive(Debug, Clone)]
pub struct HostJob {
    /// How the report names the host (`esx01`).
    pub(crate) label: String,
    pub(crate) jumps: Vec<Endpoint>,
    pub target: Endpoint,
    pub(crate) credentials: Credentials,
    pub(crate) connect_timeout: ConnectLimit,
    pub(crate) command_timeout: Duration,
    /// Most output bytes kept for this host, all commands together (`--host-output-budget`).
    pub(crate) host_output_budget: usize,
    /// What is left of the whole run's output budget, shared by every host's job.
    pub(crate) run_budget: Arc<RunBudget>,
    pub(crate) channels: usize,
}

impl From<crate::ssh::error::SshError> for Failure {
    fn from(e: crate::ssh::error::SshError) -> Self {
        use crate::ssh::error::SshErrorKind as K;
        let kind = match e.kind {
            K::Dns => ErrorKind::Dns,
            K::Unreachable => ErrorKind::Unreachable,
            K::KeyExchange => ErrorKind::KeyExchange,
            K::Auth => ErrorKind::Auth,
            K::HostKeyUnknown => ErrorKind::HostKeyUnknown,
            K::HostKeyChanged => ErrorKind::HostKeyChanged,
            K::Config => ErrorKind::Config,
            K::Timeout => ErrorKind::Timeout,
            K::Internal => ErrorKind::Internal,
        };
        Failure {
            detail: e.detail,
            ..Failure::new(kind, e.message)
        }
    }
}

/// Outputs of one host as they complete, so an interrupted run still reports them.
pub(crate) type Sink = Arc<Mutex<BTreeMap<String, RawOutput>>>;

/// Connects and runs the whole catalogue; never fails: failures are in the capture. Each
/// finished output is also copied into `sink` as soon as it arrives. Hands the connection
/// back open (when there is one) for a later phase on the same login (the `--probe` path
/// probe); the caller closes it.
pub(crate) async fn collect_host_open(
    job: &HostJob,
    on_stage: &(dyn Fn(Stage) + Send + Sync),
    sink: &Sink,
) -> (HostCapture, Option<Connection>) {
    on_stage(Stage::Connecting);
    tracing::debug!(
        "{}: connecting to {}:{} as {} (via {} jump host(s))",
        job.label,
        job.target.hostname,
        job.target.port,
        job.target.user,
        job.jumps.len()
    );
    let started = Instant::now();
    let conn = match login(job, "").await {
        Ok(c) => c,
        Err(failure) => return (HostCapture::failed(&job.label, CaptureSource::Live, failure), None),
    };
    tracing::info!(
        "{}: logged in as {} in {} ms",
        job.label,
        job.target.user,
        started.elapsed().as_millis()
    );
    on_stage(Stage::Collecting);
    let mut capture = run_catalogue(job, &conn, sink).await;
    // Only now, with no await left, do the outputs leave the sink: an interrupted run
    // still finds them there. The connection stays open for a `--probe` phase; the
    // caller closes it.
    take_outputs(sink, &mut capture);
    on_stage(Stage::Done);
    (capture, Some(conn))
}

/// Runs one command line outside the catalogue (a `--probe` vmkping) on an open
/// connection, with the same timeout, output cap and channel handling as the catalogue;
/// a refused channel open is retried a few times. `id` names it in messages.
pub(crate) async fn run_line(job: &HostJob, conn: &Connection, id: &str, command: &str) -> Result<RawOutput, Failure> {
    // A probe line prints a few hundred bytes; it still counts against the run's budget.
    let budget = Budget::new(job.host_output_budget, job.run_budget.clone());
    let mut last = String::new();
    for attempt in 0..OPEN_RETRIES {
        match run_one_line(job, conn, id, command, &budget, None).await {
            Run::Done(out) => return Ok(out),
            Run::Lost(f) => return Err(f),
            Run::OpenRefused(why) => {
                last = why;
                tokio::time::sleep(Duration::from_millis(100 * (attempt as u64 + 1))).await;
            }
        }
    }
    Err(Failure::of_host(
        ErrorKind::CommandFailed,
        &job.target.label,
        format!(
            "the server refused a session channel for `{id}` {OPEN_RETRIES} times ({last}); check MaxSessions in the host's sshd_config"
        ),
    ))
}

/// Moves the outputs collected into `sink` into the capture. Outputs live in one place
/// only: a flooding fleet's outputs are the bulk of the client's memory.
fn take_outputs(sink: &Sink, capture: &mut HostCapture) {
    if let Ok(mut m) = sink.lock() {
        capture.outputs.append(&mut m);
    }
}

/// Runs the catalogue on an open connection, as the dependency graph of [`schedule`] with
/// up to `job.channels` channels at once (the grouped commands as one unit: see
/// [`group::schedule_units`]). Finished outputs are moved into `sink` as each one arrives
/// (see [`take_outputs`]); the capture returned holds what is missing and the host's error.
async fn run_catalogue(job: &HostJob, conn: &Connection, sink: &Sink) -> HostCapture {
    let mut capture = HostCapture::new(&job.label, CaptureSource::Live);
    let budget = Budget::new(job.host_output_budget, job.run_budget.clone());
    let budget = &budget;
    let on_done = |id: &str, out: RawOutput| {
        // The group's answers went to the sink one by one (see `GroupAnswers`); the group
        // itself is no output.
        if id == GROUP_ID {
            return;
        }
        if let Ok(mut m) = sink.lock() {
            m.insert(id.to_string(), out);
        }
    };
    let finished = schedule::run(
        group::schedule_units(),
        job.channels,
        &job.target.label,
        |spec, line| async move {
            let mut answers = (spec.id == GROUP_ID).then(|| GroupAnswers::new(job, sink)).flatten();
            match run_one_line(job, conn, spec.id, &line, budget, answers.as_mut()).await {
                Run::Done(out) => Ran::Done(out),
                Run::OpenRefused(why) => Ran::Refused(why),
                Run::Lost(f) => Ran::Lost(f),
            }
        },
        &on_done,
    )
    .await;
    capture.missing = finished.missing;
    // A group that could not run (its channel refused again and again, the connection
    // lost before it opened): each of its commands not answered is missing for that reason.
    if let Some(group) = group_unit() {
        if let Some(f) = capture.missing.remove(group.id) {
            let answered: Vec<String> = sink.lock().map(|m| m.keys().cloned().collect()).unwrap_or_default();
            for id in catalogue::grouped_ids() {
                if !answered.iter().any(|a| a == id) {
                    capture.missing.insert(id.to_string(), f.replaced(group.id, id));
                }
            }
        }
    }
    let (not_esxi, none_ran) = match sink.lock() {
        Ok(m) => (not_esxi(job, &m), m.is_empty()),
        Err(_) => (None, true),
    };
    if let Some(f) = not_esxi {
        capture.error = Some(f);
    } else if none_ran {
        capture.error = Some(Failure::of_host(
            ErrorKind::CommandFailed,
            &job.target.label,
            "logged in but no command could be run; see the per-command errors",
        ));
    }
    capture
}

/// `esxcli: not found` on every esxcli command: the login worked on something that is not
/// an ESXi host (or its PATH lacks esxcli).
fn not_esxi(job: &HostJob, outputs: &BTreeMap<String, RawOutput>) -> Option<Failure> {
    let all_missing = pvrdma_engine::capture::esxcli_missing(outputs);
    all_missing.then(|| {
        Failure::of_host(
            ErrorKind::NotEsxi,
            &job.target.label,
            "`esxcli` is not found on this host, so it is not an ESXi host (or its shell PATH lacks esxcli); check that the name points at an ESXi host",
        )
    })
}

enum Run {
    Done(RawOutput),
    OpenRefused(String),
    Lost(Failure),
}

/// One command's streams as they arrive, and how the channel ended.
struct Received<'a> {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    budget: &'a Budget,
    host_budget: usize,
    /// The channel carries several commands' answers (the group).
    shared: bool,
    /// The limit that cut the output, if one did.
    cut: Option<Cap>,
    exit_status: Option<u32>,
    signal: Option<String>,
    /// The server sent its channel close: everything it had was delivered.
    closed: bool,
    timed_out: bool,
    /// The connection broke (or exec failed) before the channel closed.
    lost: Option<String>,
    /// The server refused to run the command on this channel.
    refused: Option<String>,
}

impl<'a> Received<'a> {
    fn new(budget: &'a Budget, host_budget: usize, shared: bool) -> Self {
        Received {
            shared,
            stdout: Vec::new(),
            stderr: Vec::new(),
            budget,
            host_budget,
            cut: None,
            exit_status: None,
            signal: None,
            closed: false,
            timed_out: false,
            lost: None,
            refused: None,
        }
    }

    /// Appends within the channel's cap and the budgets; marks which one cut it: the
    /// channel's cap is the command's own, unless the channel is shared.
    fn append(&mut self, data: &[u8], stderr: bool) {
        let used = self.stdout.len() + self.stderr.len();
        let room = OUTPUT_CAP.saturating_sub(used);
        let want = data.len().min(room);
        let (granted, short) = self.budget.take(want);
        if granted < data.len() {
            let channel = if self.shared {
                Cap::SharedChannel
            } else {
                Cap::PerCommand
            };
            self.cut = Some(short.unwrap_or(channel));
        }
        let buf = if stderr { &mut self.stderr } else { &mut self.stdout };
        grow(buf, granted);
        buf.extend_from_slice(data.get(..granted).unwrap_or(&[]));
    }

    /// Handles one channel message; `false` once nothing more will come.
    fn on_message(&mut self, msg: Option<ChannelMsg>) -> bool {
        match msg {
            Some(ChannelMsg::Data { data }) => self.append(&data, false),
            Some(ChannelMsg::ExtendedData { data, ext: 1 }) => self.append(&data, true),
            Some(ChannelMsg::ExitStatus { exit_status }) => self.exit_status = Some(exit_status),
            Some(ChannelMsg::ExitSignal { signal_name, .. }) => {
                let name = format!("{signal_name:?}");
                self.append(format!("\n[killed by signal {name}]\n").as_bytes(), true);
                self.signal = Some(name);
            }
            // exec refused: nothing will run on this channel, do not wait for it.
            Some(ChannelMsg::Failure) => {
                self.refused = Some("the server refused to run it".to_string());
                return false;
            }
            Some(ChannelMsg::Close) => {
                self.closed = true;
                return false;
            }
            // The channel's messages stopped without the server's close: the connection
            // (or the server's session process) is gone.
            None => {
                self.lost = Some("the channel ended without the server closing it".to_string());
                return false;
            }
            Some(_) => {}
        }
        self.cut.is_none()
    }

    /// How the command ended, most telling event first: a timeout or a cut explains
    /// missing data even when the connection broke afterwards.
    fn outcome(&self, job: &HostJob, started: Instant) -> Outcome {
        let after_ms = elapsed_ms(started);
        if self.timed_out {
            return Outcome::TimedOut {
                timeout_secs: job.command_timeout.as_secs(),
                timeout_ms: Some(u64::try_from(job.command_timeout.as_millis()).unwrap_or(u64::MAX)),
                after_ms,
            };
        }
        if let Some(cap) = self.cut {
            let limit_bytes = match cap {
                Cap::PerCommand | Cap::SharedChannel => OUTPUT_CAP,
                Cap::HostBudget => self.host_budget,
                Cap::RunBudget | Cap::ProcessBudget => self.budget.run.limit(cap),
            } as u64;
            return Outcome::Truncated { cap, limit_bytes };
        }
        if let Some(reason) = &self.refused {
            return Outcome::NeverRan { reason: reason.clone() };
        }
        if let Some(detail) = &self.lost {
            // An exit status without the close still leaves data possibly undelivered.
            return Outcome::ConnectionLost {
                after_ms,
                detail: detail.clone(),
            };
        }
        if let Some(signal) = &self.signal {
            return Outcome::Signalled { signal: signal.clone() };
        }
        match (self.exit_status, self.closed) {
            (Some(code), true) => Outcome::Exited { code },
            _ => Outcome::NoExitStatus,
        }
    }
}

/// Makes room for `more` bytes growing by half, never past the per-command cap: doubling
/// would leave up to half of every flooded buffer unused, and with many hosts flooding
/// that slack, not the output kept, would set peak memory. Starts at 1 KiB: most outputs
/// are smaller, and a larger first buffer per command was a tenth of a fleet's peak RSS.
fn grow(buf: &mut Vec<u8>, more: usize) {
    let need = buf.len() + more;
    if need <= buf.capacity() {
        return;
    }
    let target = (buf.capacity() + buf.capacity() / 2).max(need).max(1024);
    buf.reserve_exact(target.min(OUTPUT_CAP.max(need)) - buf.len());
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Tells the server we are done with a channel whose command may still run (timeout, cap):
/// a TERM signal request (RFC 4254 §6.9; OpenSSH delivers it to non-pty command sessions),
/// EOF on its stdin, then the close, which makes sshd close the command's pipes. Bounded:
/// a frozen server must not stall the host.
async fn abandon(channel: &russh::Channel<russh::client::Msg>, still_running: bool) {
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        if still_running {
            let _ = channel.signal(russh::Sig::TERM).await;
            let _ = channel.eof().await;
        }
        let _ = channel.close().await;
    })
    .await;
}

/// A user-facing failure for an output that is not a clean exit, naming host, command and
/// event; `None` for a clean exit.
fn failure_for(job: &HostJob, id: &str, outcome: &Outcome) -> Option<Failure> {
    let problem = outcome.problem()?;
    let (kind, advice) = match outcome {
        Outcome::TimedOut { .. } => (
            ErrorKind::Timeout,
            "; the output so far is kept but not trusted. Check the host's load or raise --command-timeout",
        ),
        Outcome::Truncated {
            cap: Cap::HostBudget, ..
        } => (
            ErrorKind::CommandFailed,
            "; raise --host-output-budget if this host really prints that much",
        ),
        Outcome::Truncated {
            cap: Cap::RunBudget, ..
        } => (
            ErrorKind::CommandFailed,
            "; raise --total-output-budget, or diagnose fewer hosts per run",
        ),
        Outcome::Truncated {
            cap: Cap::ProcessBudget,
            ..
        } => (
            ErrorKind::CommandFailed,
            "; the exporter's output budget is shared by every probe in flight: raise limits.output_budget, or lower limits.max_concurrent_hosts",
        ),
        Outcome::Truncated { .. } => (ErrorKind::CommandFailed, ""),
        Outcome::ConnectionLost { .. } => (
            ErrorKind::Unreachable,
            "; check the host and the network, then run again",
        ),
        _ => (ErrorKind::CommandFailed, ""),
    };
    Some(Failure::of_host(
        kind,
        &job.target.label,
        format!("`{id}` {problem}{advice}"),
    ))
}

/// Runs one command line on its own channel, bounded by the command timeout from the
/// channel's opening on. A group's answers go to `group` as they arrive whole.
async fn run_one_line(
    job: &HostJob,
    conn: &Connection,
    id: &str,
    command: &str,
    budget: &Budget,
    mut group: Option<&mut GroupAnswers<'_>>,
) -> Run {
    let started = Instant::now();
    // The deadline covers opening the channel too: a server that accepts the connection
    // but never answers the open must cost one command timeout, not hang the host.
    let deadline = tokio::time::sleep(job.command_timeout);
    tokio::pin!(deadline);
    let opened = tokio::select! {
        r = conn.handle.channel_open_session() => Some(r),
        _ = &mut deadline => None,
    };
    let mut channel = match opened {
        Some(Ok(c)) => c,
        Some(Err(russh::Error::ChannelOpenFailure(why))) => return Run::OpenRefused(format!("{why:?}")),
        Some(Err(e)) => {
            return Run::Lost(Failure::of_host(
                ErrorKind::Unreachable,
                &job.target.label,
                format!("the connection was lost before `{id}` could run ({e})"),
            ))
        }
        None => return Run::Done(never_opened(job, id, command, started, group)),
    };
    let mut rx = Received::new(budget, job.host_output_budget, group.is_some());
    if let Err(e) = channel.exec(true, command).await {
        rx.lost = Some(format!("could not start it: {e}"));
    } else {
        // Read until the channel closes, not until ExitStatus: servers may send the status
        // before the last data.
        loop {
            tokio::select! {
                msg = channel.wait() => {
                    let more = rx.on_message(msg);
                    if let Some(g) = group.as_deref_mut() {
                        g.after(&rx.stdout);
                    }
                    if !more { break }
                },
                _ = &mut deadline => {
                    rx.timed_out = true;
                    break;
                }
            }
        }
    }
    // Closing frees the server's session slot even when the command still runs (timeout,
    // cap), and tells sshd to close the command's pipes.
    let still_running = rx.timed_out || rx.cut.is_some();
    if rx.lost.is_none() && !rx.closed {
        abandon(&channel, still_running).await;
    }
    Run::Done(received_output(job, id, command, rx, group, started))
}

/// The output of a command whose session the server did not open within the command
/// timeout: it never ran.
fn never_opened(
    job: &HostJob,
    id: &str,
    command: &str,
    started: Instant,
    group: Option<&mut GroupAnswers<'_>>,
) -> RawOutput {
    let mut out = RawOutput::new(id, command);
    out.timeout_hit = true;
    out.duration_ms = elapsed_ms(started);
    let reason = format!(
        "the server did not open a session within --command-timeout {}",
        pvrdma_engine::duration::text(job.command_timeout)
    );
    out.failure = Some(Failure::of_host(
        ErrorKind::Timeout,
        &job.target.label,
        format!("`{id}` {reason}; check the host's load or raise --command-timeout"),
    ));
    let outcome = Outcome::NeverRan { reason };
    if let Some(g) = group {
        g.finish(&[], &outcome, out.failure.as_ref(), "");
    }
    out.outcome = Some(outcome);
    out
}

/// The output of a command from what its channel received, logged for `-v`. A batch's
/// answers are sorted back into sections; a group's go to their own commands.
fn received_output(
    job: &HostJob,
    id: &str,
    command: &str,
    rx: Received<'_>,
    group: Option<&mut GroupAnswers<'_>>,
    started: Instant,
) -> RawOutput {
    let outcome = rx.outcome(job, started);
    let mut out = RawOutput::new(id, command);
    out.stderr = bytes_to_text(rx.stderr);
    out.failure = failure_for(job, id, &outcome);
    let received = rx.stdout.len();
    // A concurrent batch's answers arrive as tagged lines in the order its queries wrote
    // them: sorted back into sections, each answer whole or listed as unfinished.
    match (
        pvrdma_engine::catalogue::batch_keys(command).filter(|(batch, _)| *batch == id),
        group,
    ) {
        (Some((_, keys)), _) => {
            let decoded = pvrdma_engine::capture::frames::decode(&keys, &rx.stdout, outcome.problem().as_deref());
            out.stdout = decoded.stdout;
            out.unfinished = decoded.unfinished;
        }
        // Each answer of a group becomes its command's output; the group is none.
        (None, Some(g)) => g.finish(&rx.stdout, &outcome, out.failure.as_ref(), &out.stderr),
        (None, None) => out.stdout = bytes_to_text(rx.stdout),
    }
    out.duration_ms = elapsed_ms(started);
    out.exit_status = rx.exit_status;
    out.timeout_hit = matches!(outcome, Outcome::TimedOut { .. });
    out.truncated = matches!(outcome, Outcome::Truncated { .. });
    // `-v`: every command with host, duration and how it ended (a group by its name: each
    // of its commands has its own line).
    tracing::info!(
        "{}: `{}` {} in {} ms ({} bytes out, {} bytes err{})",
        job.label,
        if id == GROUP_ID { GROUP_ID } else { command },
        how_it_ended(&outcome, out.exit_status),
        out.duration_ms,
        received,
        out.stderr.len(),
        match out.unfinished.len() {
            0 => String::new(),
            n => format!(", {n} answer(s) not whole"),
        },
    );
    out.outcome = Some(outcome);
    out
}

/// How a command ended, for its `-v` line: the problem, else its exit status.
fn how_it_ended(outcome: &Outcome, exit_status: Option<u32>) -> String {
    outcome.problem().unwrap_or_else(|| match exit_status {
        Some(code) => format!("exit {code}"),
        None => "no exit status".to_string(),
    })
}

/// Command output is text; a stray byte is kept visible rather than failing the command.
/// Valid UTF-8 (the norm) is taken over without a copy, which keeps peak memory at one
/// copy of the output.
fn bytes_to_text(mut bytes: Vec<u8>) -> String {
    // Kept until the report is written: hold exactly the output, not the growth slack.
    bytes.shrink_to_fit();
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

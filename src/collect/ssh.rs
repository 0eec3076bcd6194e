//! Pipeline stage *collect*, live: runs the catalogue on one host over one SSH connection.
//!
//! The catalogue runs on a few concurrent channels of that connection (fewer than
//! OpenSSH's default `MaxSessions` of 10). A server that refuses a channel open (a lower
//! `MaxSessions`) does not lose the command: it is retried once the other channels are
//! closed, one at a time. Each command has its own timeout; whatever arrived before it
//! fired is kept, and a timeout on one command never stops the others.
use super::{CaptureSource, ErrorKind, Failure, HostCapture, RawOutput};
use crate::catalogue::{CommandSpec, CATALOGUE};
use crate::ssh::client::{self, Connection, Credentials, Endpoint};
use russh::ChannelMsg;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

pub use crate::collect::OUTPUT_CAP;

/// Channels open at once per host: well under OpenSSH's default MaxSessions (10), so a
/// second admin session on the host still gets in.
pub const DEFAULT_CHANNELS: usize = 8;

/// Attempts for a command whose channel open the server keeps refusing.
const OPEN_RETRIES: usize = 5;

/// Where a host is in its collection, for the progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Connecting,
    Collecting,
    Done,
}

/// Everything needed to collect one host.
#[derive(Debug, Clone)]
pub struct HostJob {
    /// How the report names the host (`esx01`).
    pub label: String,
    pub jumps: Vec<Endpoint>,
    pub target: Endpoint,
    pub credentials: Credentials,
    pub connect_timeout: Duration,
    pub command_timeout: Duration,
    pub channels: usize,
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
            K::Internal => ErrorKind::Internal,
        };
        Failure::new(kind, e.message)
    }
}

/// Outputs of one host as they complete, so an interrupted run still reports them.
pub type Sink = Arc<Mutex<BTreeMap<String, RawOutput>>>;

/// Connects and runs the whole catalogue; never fails: failures are in the capture. Each
/// finished output is also copied into `sink` as soon as it arrives.
pub async fn collect_host(job: &HostJob, on_stage: &(dyn Fn(Stage) + Send + Sync), sink: &Sink) -> HostCapture {
    let (capture, conn) = collect_host_open(job, on_stage, sink).await;
    if let Some(conn) = conn {
        conn.close().await;
    }
    capture
}

/// [`collect_host`], but hands the connection back open (when there is one) for a later
/// phase on the same login (the `--probe` path probe); the caller closes it.
pub async fn collect_host_open(
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
    let connected = tokio::time::timeout(
        job.connect_timeout,
        client::connect(&job.jumps, &job.target, &job.credentials),
    )
    .await;
    let conn = match connected {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            return (
                HostCapture::failed(&job.label, CaptureSource::Live, Failure::from(e)),
                None,
            )
        }
        Err(_) => {
            let failure = HostCapture::failed(
                &job.label,
                CaptureSource::Live,
                Failure::new(
                    ErrorKind::Timeout,
                    format!(
                        "{}: no SSH login within --connect-timeout {}s (TCP connect, key exchange and authentication); check that the host is up and reachable, or raise --connect-timeout",
                        job.target.label,
                        job.connect_timeout.as_secs()
                    ),
                ),
            );
            return (failure, None);
        }
    };
    tracing::info!(
        "{}: logged in as {} in {} ms",
        job.label,
        job.target.user,
        started.elapsed().as_millis()
    );
    on_stage(Stage::Collecting);
    let capture = run_catalogue(job, &conn, CATALOGUE, sink).await;
    on_stage(Stage::Done);
    (capture, Some(conn))
}

/// Runs one command line outside the catalogue (a `--probe` vmkping) on an open
/// connection, with the same timeout, output cap and channel handling as the catalogue;
/// a refused channel open is retried a few times. `id` names it in messages.
pub async fn run_line(job: &HostJob, conn: &Connection, id: &str, command: &str) -> Result<RawOutput, Failure> {
    let mut last = String::new();
    for attempt in 0..OPEN_RETRIES {
        match run_one_line(job, conn, id, command).await {
            Outcome::Done(out) => return Ok(out),
            Outcome::Lost(f) => return Err(f),
            Outcome::OpenRefused(why) => {
                last = why;
                tokio::time::sleep(Duration::from_millis(100 * (attempt as u64 + 1))).await;
            }
        }
    }
    Err(Failure::new(
        ErrorKind::CommandFailed,
        format!(
            "{}: the server refused a session channel for `{id}` {OPEN_RETRIES} times ({last}); check MaxSessions in the host's sshd_config",
            job.target.label
        ),
    ))
}

/// Runs `specs` on an open connection.
pub async fn run_catalogue(job: &HostJob, conn: &Connection, specs: &[CommandSpec], sink: &Sink) -> HostCapture {
    let mut capture = HostCapture::new(&job.label, CaptureSource::Live);
    let slots = Arc::new(Semaphore::new(job.channels.max(1)));
    let mut refused: Vec<&CommandSpec> = Vec::new();
    // The server's session limit is learnt as we go: a refused open gives its slot up for
    // good (down to one), so the window settles at what the server allows.
    let window = Arc::new(AtomicUsize::new(job.channels.max(1)));
    let results = futures::future::join_all(specs.iter().map(|spec| {
        let slots = slots.clone();
        let window = window.clone();
        async move {
            let mut attempts = 0;
            loop {
                let permit = slots.acquire().await.ok();
                match run_one(job, conn, spec).await {
                    Outcome::OpenRefused(why) => {
                        attempts += 1;
                        let shrunk = window
                            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |w| (w > 1).then(|| w - 1))
                            .is_ok();
                        if let (true, Some(p)) = (shrunk, permit) {
                            p.forget();
                        }
                        if attempts >= OPEN_RETRIES {
                            return (spec, Outcome::OpenRefused(why));
                        }
                        tokio::time::sleep(Duration::from_millis(20 * attempts as u64)).await;
                    }
                    other => {
                        if let (Outcome::Done(out), Ok(mut m)) = (&other, sink.lock()) {
                            m.insert(spec.id.to_string(), out.clone());
                        }
                        return (spec, other);
                    }
                }
            }
        }
    }))
    .await;
    for (spec, r) in results {
        match r {
            Outcome::Done(out) => {
                capture.outputs.insert(spec.id.to_string(), out);
            }
            Outcome::OpenRefused(_) => refused.push(spec),
            Outcome::Lost(f) => {
                capture.missing.insert(spec.id.to_string(), f);
            }
        }
    }
    // Serial retries: all other channels are closed by now, so a server with a low
    // MaxSessions has room for one more.
    for spec in refused {
        let mut last = String::new();
        let mut done = false;
        for attempt in 0..OPEN_RETRIES {
            match run_one(job, conn, spec).await {
                Outcome::Done(out) => {
                    if let Ok(mut m) = sink.lock() {
                        m.insert(spec.id.to_string(), out.clone());
                    }
                    capture.outputs.insert(spec.id.to_string(), out);
                    done = true;
                    break;
                }
                Outcome::OpenRefused(why) => {
                    last = why;
                    tokio::time::sleep(Duration::from_millis(100 * (attempt as u64 + 1))).await;
                }
                Outcome::Lost(f) => {
                    capture.missing.insert(spec.id.to_string(), f);
                    done = true;
                    break;
                }
            }
        }
        if !done {
            capture.missing.insert(
                spec.id.to_string(),
                Failure::new(
                    ErrorKind::CommandFailed,
                    format!(
                        "{}: the server refused a session channel for `{}` {OPEN_RETRIES} times ({last}); check MaxSessions in the host's sshd_config",
                        job.target.label, spec.id
                    ),
                ),
            );
        }
    }
    if let Some(f) = not_esxi(job, &capture) {
        capture.error = Some(f);
    } else if capture.outputs.is_empty() {
        capture.error = Some(Failure::new(
            ErrorKind::CommandFailed,
            format!(
                "{}: logged in but no command could be run; see the per-command errors",
                job.target.label
            ),
        ));
    }
    capture
}

/// `esxcli: not found` on every esxcli command: the login worked on something that is not
/// an ESXi host (or its PATH lacks esxcli).
fn not_esxi(job: &HostJob, capture: &HostCapture) -> Option<Failure> {
    let all_missing = capture.esxcli_missing();
    all_missing.then(|| {
        Failure::new(
            ErrorKind::NotEsxi,
            format!(
                "{}: `esxcli` is not found on this host, so it is not an ESXi host (or its shell PATH lacks esxcli); check that the name points at an ESXi host",
                job.target.label
            ),
        )
    })
}

enum Outcome {
    Done(RawOutput),
    OpenRefused(String),
    Lost(Failure),
}

async fn run_one(job: &HostJob, conn: &Connection, spec: &CommandSpec) -> Outcome {
    run_one_line(job, conn, spec.id, spec.command).await
}

async fn run_one_line(job: &HostJob, conn: &Connection, id: &str, command: &str) -> Outcome {
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
        Some(Err(russh::Error::ChannelOpenFailure(why))) => return Outcome::OpenRefused(format!("{why:?}")),
        Some(Err(e)) => {
            return Outcome::Lost(Failure::new(
                ErrorKind::Unreachable,
                format!(
                    "{}: the connection was lost before `{}` could run ({e})",
                    job.target.label, id
                ),
            ))
        }
        None => {
            let mut out = RawOutput::new(id, command);
            out.timeout_hit = true;
            out.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            out.failure = Some(Failure::new(
                ErrorKind::Timeout,
                format!(
                    "{}: the server did not open a session for `{}` within --command-timeout {}s; check the host's load or raise --command-timeout",
                    job.target.label,
                    id,
                    job.command_timeout.as_secs()
                ),
            ));
            return Outcome::Done(out);
        }
    };
    let mut out = RawOutput::new(id, command);
    let mut stdout: Vec<u8> = Vec::new();
    let mut stderr: Vec<u8> = Vec::new();
    let mut lost = None;
    if let Err(e) = channel.exec(true, command).await {
        lost = Some(e.to_string());
    } else {
        // Read until the channel closes, not until ExitStatus: servers may send the status
        // before the last data.
        loop {
            tokio::select! {
                msg = channel.wait() => match msg {
                    Some(ChannelMsg::Data { data }) => {
                        append_capped(&mut stdout, &data, stderr.len(), &mut out.truncated)
                    }
                    Some(ChannelMsg::ExtendedData { data, ext: 1 }) => {
                        append_capped(&mut stderr, &data, stdout.len(), &mut out.truncated)
                    }
                    Some(ChannelMsg::ExitStatus { exit_status }) => out.exit_status = Some(exit_status),
                    Some(ChannelMsg::ExitSignal { signal_name, .. }) => {
                        stderr.extend_from_slice(format!("\n[killed by signal {signal_name:?}]\n").as_bytes());
                    }
                    // exec refused: nothing will run on this channel, do not wait for it.
                    Some(ChannelMsg::Failure) => {
                        lost = Some("the server refused to run it".to_string());
                        break;
                    }
                    Some(ChannelMsg::Close) | None => break,
                    Some(_) => {}
                },
                _ = &mut deadline => {
                    out.timeout_hit = true;
                    break;
                }
            }
            if out.truncated {
                break;
            }
        }
    }
    // Closing frees the server's session slot even when the command still runs (timeout,
    // cap); a stuck close must not stall the host.
    let _ = tokio::time::timeout(Duration::from_secs(2), channel.close()).await;
    out.stdout = String::from_utf8_lossy(&stdout).into_owned();
    out.stderr = String::from_utf8_lossy(&stderr).into_owned();
    out.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    if out.timeout_hit {
        out.failure = Some(Failure::new(
            ErrorKind::Timeout,
            format!(
                "{}: `{}` did not finish within --command-timeout {}s; the output so far is kept. Check the host's load or raise --command-timeout",
                job.target.label,
                id,
                job.command_timeout.as_secs()
            ),
        ));
    } else if let Some(e) = lost {
        out.failure = Some(Failure::new(
            ErrorKind::Unreachable,
            format!("{}: could not start `{}` ({e})", job.target.label, id),
        ));
    }
    // `-v`: every command with host, duration and how it ended.
    let ended = match (out.timeout_hit, out.exit_status) {
        (true, _) => "timed out".to_string(),
        (false, Some(code)) => format!("exit {code}"),
        (false, None) => "no exit status".to_string(),
    };
    tracing::info!(
        "{}: `{}` {ended} in {} ms ({} bytes out, {} bytes err{})",
        job.label,
        command,
        out.duration_ms,
        stdout.len(),
        stderr.len(),
        if out.truncated { ", truncated" } else { "" }
    );
    Outcome::Done(out)
}

fn append_capped(buf: &mut Vec<u8>, data: &[u8], other: usize, truncated: &mut bool) {
    let room = OUTPUT_CAP.saturating_sub(buf.len() + other);
    if data.len() > room {
        buf.extend_from_slice(data.get(..room).unwrap_or(&[]));
        *truncated = true;
    } else {
        buf.extend_from_slice(data);
    }
}

//! Pipeline stage *collect*, live: runs the catalogue on one host over one SSH connection.
//!
//! The catalogue runs as a dependency graph ([`schedule`]) on up to `MaxSessions`
//! concurrent channels of that connection. A server that refuses a channel open (a lower
//! `MaxSessions`) does not lose the command: the window shrinks and it is retried, at the
//! end alone. Each command has its own timeout; whatever arrived before it fired is kept,
//! and a timeout on one command never stops the others.
use super::schedule::{self, Ran};
use super::{CaptureSource, ErrorKind, Failure, HostCapture, RawOutput};
use crate::catalogue::{CommandSpec, CATALOGUE};
use crate::ssh::client::{self, Connection, Credentials, Endpoint};
use russh::ChannelMsg;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use crate::collect::OUTPUT_CAP;

/// Channels open at once per host: OpenSSH's default `MaxSessions`, which ESXi keeps.
/// The limit is per connection, so an admin's own SSH session is not affected; a server
/// with a lower limit refuses the extra opens and the window shrinks to what it allows.
pub const DEFAULT_CHANNELS: usize = 10;

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

/// Outputs of one host as they complete, so an interrupted run still reports them.
pub type Sink = Arc<Mutex<BTreeMap<String, RawOutput>>>;

/// Connects and runs the whole catalogue; never fails: failures are in the capture. Each
/// finished output is also copied into `sink` as soon as it arrives.
pub async fn collect_host(job: &HostJob, on_stage: &(dyn Fn(Stage) + Send + Sync), sink: &Sink) -> HostCapture {
    on_stage(Stage::Connecting);
    let connected = tokio::time::timeout(
        job.connect_timeout,
        client::connect(&job.jumps, &job.target, &job.credentials),
    )
    .await;
    let conn = match connected {
        Ok(Ok(c)) => c,
        Ok(Err(f)) => return HostCapture::failed(&job.label, CaptureSource::Live, f),
        Err(_) => {
            return HostCapture::failed(
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
            )
        }
    };
    on_stage(Stage::Collecting);
    let capture = run_catalogue(job, &conn, CATALOGUE, sink).await;
    conn.close().await;
    on_stage(Stage::Done);
    capture
}

/// Runs `specs` on an open connection, as the dependency graph of [`schedule`] with up
/// to `job.channels` channels at once.
pub async fn run_catalogue(job: &HostJob, conn: &Connection, specs: &[CommandSpec], sink: &Sink) -> HostCapture {
    let mut capture = HostCapture::new(&job.label, CaptureSource::Live);
    let on_done = |id: &str, out: &RawOutput| {
        if let Ok(mut m) = sink.lock() {
            m.insert(id.to_string(), out.clone());
        }
    };
    let finished = schedule::run(
        specs,
        job.channels,
        &job.target.label,
        |spec, line| run_one(job, conn, spec, line),
        &on_done,
    )
    .await;
    capture.outputs = finished.outputs;
    capture.missing = finished.missing;
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
    let esxcli: Vec<&RawOutput> = capture
        .outputs
        .values()
        .filter(|o| o.command.starts_with("esxcli "))
        .collect();
    let all_missing = !esxcli.is_empty()
        && esxcli.iter().all(|o| {
            let text = format!("{}{}", o.stdout, o.stderr);
            text.contains("esxcli: not found") || text.contains("esxcli: command not found")
        });
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

/// Runs one command line (`line`, built for `spec`) on its own channel.
async fn run_one(job: &HostJob, conn: &Connection, spec: &CommandSpec, line: String) -> Ran {
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
        Some(Err(russh::Error::ChannelOpenFailure(why))) => return Ran::Refused(format!("{why:?}")),
        Some(Err(e)) => {
            return Ran::Lost(Failure::new(
                ErrorKind::Unreachable,
                format!(
                    "{}: the connection was lost before `{}` could run ({e})",
                    job.target.label, spec.id
                ),
            ))
        }
        None => {
            let mut out = RawOutput::new(spec.id, line.as_str());
            out.timeout_hit = true;
            out.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            out.failure = Some(Failure::new(
                ErrorKind::Timeout,
                format!(
                    "{}: the server did not open a session for `{}` within --command-timeout {}s; check the host's load or raise --command-timeout",
                    job.target.label,
                    spec.id,
                    job.command_timeout.as_secs()
                ),
            ));
            return Ran::Done(out);
        }
    };
    let mut out = RawOutput::new(spec.id, line.as_str());
    let mut stdout: Vec<u8> = Vec::new();
    let mut stderr: Vec<u8> = Vec::new();
    let mut lost = None;
    if let Err(e) = channel.exec(true, line.as_str()).await {
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
                spec.id,
                job.command_timeout.as_secs()
            ),
        ));
    } else if let Some(e) = lost {
        out.failure = Some(Failure::new(
            ErrorKind::Unreachable,
            format!("{}: could not start `{}` ({e})", job.target.label, spec.id),
        ));
    }
    Ran::Done(out)
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

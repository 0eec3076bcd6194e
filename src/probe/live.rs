//! Pipeline stage *collect*, live, second phase: the `--probe` path probe (here, above
//! `collect`, because planning the probes needs the hosts' diagnoses).
//!
//! Runs after every host's catalogue, because a host can only ping its peers once their
//! PVRDMA vmknic addresses are known. Each host probes on the SSH connection its
//! collection used (kept open for this; see `live::run_all`), or reconnects when that
//! connection was not kept. A host's probes run concurrently on the channels of that one
//! connection, at most `HostJob::channels` at a time (below the server's MaxSessions), and
//! every finished output lands in the host's sink at once, so a run stopped by Ctrl-C or
//! `--timeout` still reports the probes that finished.
use crate::collect::ssh::{run_line, HostJob};
use crate::probe::{self, ProbeCapture, ProbeOptions, PROBE_ID};
use crate::ssh::client::Connection;
use pvrdma_engine::capture::{ErrorKind, Failure, HostCapture};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Where one host's probe results accumulate.
pub(crate) type ProbeSink = Arc<Mutex<ProbeCapture>>;

/// One host as the probe phase sees it.
pub(crate) struct ProbeHost {
    /// `None` for a host whose target spec did not even plan (bad config).
    pub(crate) job: Option<HostJob>,
    /// The collection's connection, when it was kept open.
    pub(crate) conn: Option<Connection>,
    pub(crate) sink: ProbeSink,
}

/// Plans the probes from the captures and fills each host's sink with its peers; returns
/// the command lines to run per host index (peer, line).
pub(crate) fn plan_lines(
    captures: &[HostCapture],
    opts: ProbeOptions,
    sinks: &[ProbeSink],
) -> Vec<Vec<(String, String)>> {
    let hosts: Vec<pvrdma_engine::diagnose::HostDiagnosis> =
        captures.iter().map(pvrdma_engine::diagnose::diagnose_host).collect();
    let names: Vec<String> = hosts.iter().map(|h| h.host.clone()).collect();
    let peers_of = probe::plan(&names, opts.sample);
    let ends: BTreeMap<&str, Result<pvrdma_engine::diagnose::probe::Endpoint, String>> = hosts
        .iter()
        .map(|h| (h.host.as_str(), pvrdma_engine::diagnose::probe::endpoint(h)))
        .collect();
    let mut lines = Vec::with_capacity(hosts.len());
    for (i, h) in hosts.iter().enumerate() {
        let peers = peers_of.get(&h.host).cloned().unwrap_or_default();
        if let Some(Ok(mut s)) = sinks.get(i).map(|s| s.lock()) {
            s.peers = peers.clone();
        }
        let mut todo = Vec::new();
        if let Some(Ok(from)) = ends.get(h.host.as_str()) {
            for peer in peers {
                if let Some(Ok(to)) = ends.get(peer.as_str()) {
                    todo.push((peer.clone(), probe::probe_command(from, to.ip)));
                }
            }
        }
        lines.push(todo);
    }
    lines
}

/// Runs every host's probe lines; `parallel` hosts at once.
pub(crate) async fn run(hosts: Vec<ProbeHost>, lines: Vec<Vec<(String, String)>>, parallel: usize) {
    let slots = Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for (host, todo) in hosts.into_iter().zip(lines) {
        let Some(job) = host.job else { continue };
        if todo.is_empty() {
            if let Some(conn) = host.conn {
                conn.close().await;
            }
            continue;
        }
        let slots = slots.clone();
        set.spawn(async move {
            let _permit = slots.acquire_owned().await.ok();
            run_host(&job, host.conn, &todo, &host.sink).await;
        });
    }
    while set.join_next().await.is_some() {}
}

async fn run_host(job: &HostJob, conn: Option<Connection>, todo: &[(String, String)], sink: &ProbeSink) {
    // A kept connection the server closed while other hosts were still collecting (an idle
    // timeout on the host) is replaced by a fresh login rather than failing every probe.
    let conn = match conn.filter(|c| !c.handle.is_closed()) {
        Some(c) => c,
        None => match reconnect(job).await {
            Ok(c) => c,
            Err(f) => {
                if let Ok(mut s) = sink.lock() {
                    for (peer, _) in todo {
                        s.missing.insert(peer.clone(), f.clone());
                    }
                }
                return;
            }
        },
    };
    let channels = Arc::new(tokio::sync::Semaphore::new(job.channels.max(1)));
    let conn_ref = &conn;
    futures::future::join_all(todo.iter().map(|(peer, line)| {
        let channels = channels.clone();
        async move {
            let _permit = channels.acquire().await.ok();
            let result = run_line(job, conn_ref, PROBE_ID, line).await;
            if let Ok(mut s) = sink.lock() {
                match result {
                    Ok(out) => {
                        s.outputs.insert(peer.clone(), out);
                    }
                    Err(f) => {
                        s.missing.insert(peer.clone(), f);
                    }
                }
            }
        }
    }))
    .await;
    conn.close().await;
}

/// A fresh login for a host whose collection connection was not kept open.
async fn reconnect(job: &HostJob) -> Result<Connection, Failure> {
    crate::collect::ssh::login(job, " for the path probe").await
}

/// The probe capture of a host once the phase ended (or was stopped): every planned peer
/// that could be probed but has no output gets `stopped` as its reason.
pub(crate) fn finish(sink: &ProbeSink, lines: &[(String, String)], stopped: Option<&Failure>) -> ProbeCapture {
    let mut capture = sink.lock().map(|s| s.clone()).unwrap_or_default();
    for (peer, _) in lines {
        if capture.outputs.contains_key(peer) || capture.missing.contains_key(peer) {
            continue;
        }
        let why = stopped.cloned().unwrap_or_else(|| {
            Failure::new(
                ErrorKind::Internal,
                "the probe task ended without a result; please report this bug",
            )
        });
        capture.missing.insert(peer.clone(), why);
    }
    capture
}

//! The fan-out: how many hosts run at once, collecting them all concurrently, then the probe phase.
use super::progress::Progress;
use super::*;
use pvrdma_engine::capture::RunStage;

/// Hosts collected at once unless `--parallel` says otherwise. A host costs the client one
/// TCP socket, 0.1 to 0.25 MiB of memory with its outputs and 3 to 4.5 ms of CPU
/// (measured: docs/benchmarks.md), and spends its time waiting for esxcli; so a fleet of a
/// few hundred hosts runs in one wave and finishes in about the time of its slowest host. Bounded at run
/// time by the open-file limit (see [`fanout_limit`]).
pub const DEFAULT_PARALLEL: usize = 512;

/// File descriptors kept free for everything that is not a host connection: stdio, the
/// async runtime, ssh_config / known_hosts / key files being read, the bundle being
/// written.
pub(super) const FD_RESERVE: libc::rlim_t = 64;

/// File descriptors one host holds at most at a time: its TCP socket (jump hosts are
/// reached through channels of the first hop, not sockets of their own) and a file being
/// read for it (known_hosts, a key).
pub(super) const FDS_PER_HOST: libc::rlim_t = 2;

/// How many hosts can really be collected at once: `requested`, bounded by the open-file
/// limit so a wide fan-out never fails hosts with "too many open files". The soft
/// `RLIMIT_NOFILE` is first raised to the hard limit (as the process is allowed to; many
/// systems start shells at a soft 1024 with a hard limit far above), which lets the
/// default fan-out run where it could not otherwise.
pub(crate) fn fanout_limit(requested: usize) -> usize {
    let soft = raise_nofile_limit();
    let room = soft.saturating_sub(FD_RESERVE) / FDS_PER_HOST;
    let room = usize::try_from(room).unwrap_or(usize::MAX);
    requested.min(room).max(1)
}

/// Raises the soft open-file limit to the hard one; returns the soft limit in force.
pub(super) fn raise_nofile_limit() -> libc::rlim_t {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed by pointer, which
    // lives for the whole call.
    #[allow(unsafe_code)]
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    if got != 0 {
        // Unknown: assume the common default rather than nothing.
        return 1024;
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: as above.
        #[allow(unsafe_code)]
        let set = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) };
        if set == 0 {
            lim.rlim_cur = lim.rlim_max;
        }
    }
    lim.rlim_cur
}

/// Collects every host at once (within the fan-out limit), under the run's deadline and
/// Ctrl-C, then probes the paths between them when asked.
pub(super) async fn run_all(
    jobs: Vec<Result<HostJob, Failure>>,
    labels: Vec<String>,
    opts: &LiveOptions,
) -> (Vec<HostCapture>, bool) {
    let progress = Arc::new(Progress::new(jobs.len(), opts.progress));
    let slots = Arc::new(tokio::sync::Semaphore::new(fanout_limit(opts.parallel)));
    let mut results: Vec<Option<HostCapture>> = jobs.iter().map(|_| None).collect();
    let sinks: Vec<Sink> = jobs.iter().map(|_| Sink::default()).collect();
    // Where each host is, so a run stopped by --timeout can say (None: waiting for a slot).
    let stages: Vec<StageCell> = jobs.iter().map(|_| Arc::default()).collect();
    // The probe phase needs each host's job again and, where kept, its open connection.
    let probing = opts.probe.is_some();
    let probe_jobs: Vec<Option<HostJob>> = jobs.iter().map(|j| j.as_ref().ok().cloned()).collect();
    let mut conns: Vec<Option<crate::ssh::client::Connection>> = jobs.iter().map(|_| None).collect();
    let kept = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Ctrl-C is caught from before the first host starts, so whatever the run has said
    // (with -v, each login and command) is said with the report of an interrupt assured.
    let interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt());
    let mut set = tokio::task::JoinSet::new();
    for (i, job) in jobs.into_iter().enumerate() {
        let job = match job {
            Ok(j) => j,
            Err(f) => {
                let label = labels.get(i).cloned().unwrap_or_default();
                if let Some(slot) = results.get_mut(i) {
                    *slot = Some(HostCapture::failed(label, CaptureSource::Live, f));
                }
                continue;
            }
        };
        let sink = sinks.get(i).cloned().unwrap_or_default();
        let keep_open = probing.then(|| kept.clone());
        let at = stages.get(i).cloned().unwrap_or_default();
        spawn_host(
            &mut set,
            (i, job),
            slots.clone(),
            progress.clone(),
            (sink, at),
            keep_open,
        );
    }
    let deadline = run_deadline(opts);
    tokio::pin!(deadline);
    let ctrl_c = interrupted_by(interrupt);
    tokio::pin!(ctrl_c);
    let stop = wait_for_hosts(&mut set, &mut results, &mut conns, opts, &mut deadline, &mut ctrl_c).await;
    let mut interrupted = stop.as_ref().is_some_and(|f| f.kind == ErrorKind::Interrupted);
    set.abort_all();
    progress.finish();
    let mut captures: Vec<HostCapture> = results
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let label = labels.get(i).cloned().unwrap_or_default();
            let stage = stages.get(i).and_then(|s| s.lock().ok().and_then(|s| *s));
            c.unwrap_or_else(|| unfinished(label, sinks.get(i), stage, stop.as_ref(), opts))
        })
        .collect();
    if let Some(probe) = opts.probe {
        match &stop {
            None => {
                let (_, int) = probe_phase(
                    &mut captures,
                    probe_jobs,
                    conns,
                    probe,
                    opts,
                    &mut deadline,
                    &mut ctrl_c,
                )
                .await;
                interrupted |= int;
            }
            Some(f) => not_probed(&mut captures, probe, f),
        }
    }
    (captures, interrupted)
}

/// When the run's `--timeout` (or the deadline it shares with other runs) passes; never
/// without one.
async fn run_deadline(opts: &LiveOptions) {
    match (&opts.run_deadline, opts.run_timeout) {
        (Some(d), _) => super::RunDeadline::passed(d.at.clone()).await,
        (None, Some(d)) => tokio::time::sleep(d).await,
        (None, None) => std::future::pending().await,
    }
}

/// When Ctrl-C comes, on the handler registered before the first host started.
async fn interrupted_by(interrupt: std::io::Result<tokio::signal::unix::Signal>) -> std::io::Result<()> {
    match interrupt {
        Ok(mut sig) => {
            sig.recv().await;
        }
        // No handler to be had: the default (the process ends) stays, and the run
        // is never taken for interrupted.
        Err(_) => std::future::pending::<()>().await,
    }
    Ok(())
}

/// Collection itself was stopped (`f`): no pair is probed, and the plan still shows which
/// pairs were not.
fn not_probed(captures: &mut [HostCapture], probe: crate::probe::ProbeOptions, f: &Failure) {
    let sinks: Vec<crate::probe::live::ProbeSink> = captures.iter().map(|_| Default::default()).collect();
    let lines = crate::probe::live::plan_lines(captures, probe, &sinks);
    for ((c, sink), todo) in captures.iter_mut().zip(&sinks).zip(&lines) {
        c.probe = Some(crate::probe::live::finish(sink, todo, Some(f)));
    }
}

/// The stage a host's task last reported.
type StageCell = Arc<std::sync::Mutex<Option<Stage>>>;

/// One host task's result: its index, its capture, its connection when kept open.
type HostDone = (usize, HostCapture, Option<crate::ssh::client::Connection>);

/// Starts the collection of host `i` on `set` once one of the `slots` is free. Its
/// connection stays open for the probe phase when `keep_open` counts fewer than
/// [`PROBE_KEEP_OPEN`] connections kept so far; otherwise it is closed.
fn spawn_host(
    set: &mut tokio::task::JoinSet<HostDone>,
    (i, job): (usize, HostJob),
    slots: Arc<tokio::sync::Semaphore>,
    progress: Arc<Progress>,
    (sink, at): (Sink, StageCell),
    keep_open: Option<Arc<std::sync::atomic::AtomicUsize>>,
) {
    set.spawn(async move {
        let _permit = slots.acquire_owned().await.ok();
        let label = job.label.clone();
        let p = progress.clone();
        let on_stage = move |s: Stage| {
            if let Ok(mut at) = at.lock() {
                *at = Some(s);
            }
            p.stage(&label, s)
        };
        let (capture, conn) = collect_host_open(&job, &on_stage, &sink).await;
        let keep = |kept: &std::sync::atomic::AtomicUsize| {
            kept.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < PROBE_KEEP_OPEN
        };
        let conn = match conn {
            Some(c) if keep_open.as_deref().is_some_and(keep) => Some(c),
            Some(c) => {
                c.close().await;
                None
            }
            None => None,
        };
        progress.host_done(&job.label);
        (i, capture, conn)
    });
}

/// Takes the hosts' results as they finish, until all have or the run deadline or Ctrl-C
/// stops the run; returns why it was stopped (`Timeout` or `Interrupted`), if it was.
async fn wait_for_hosts(
    set: &mut tokio::task::JoinSet<HostDone>,
    results: &mut [Option<HostCapture>],
    conns: &mut [Option<crate::ssh::client::Connection>],
    opts: &LiveOptions,
    deadline: &mut std::pin::Pin<&mut impl std::future::Future<Output = ()>>,
    ctrl_c: &mut std::pin::Pin<&mut impl std::future::Future<Output = std::io::Result<()>>>,
) -> Option<Failure> {
    loop {
        tokio::select! {
            next = set.join_next() => match next {
                Some(Ok((i, capture, conn))) => {
                    if let Some(hook) = &opts.on_host_read { (hook.0)(&capture); }
                    if let Some(slot) = results.get_mut(i) { *slot = Some(capture); }
                    if let Some(slot) = conns.get_mut(i) { *slot = conn; }
                }
                // A panicking host task is a bug; its slot is filled as Internal.
                Some(Err(_)) => {}
                None => return None,
            },
            _ = &mut *deadline => {
                return Some(run_stop(opts, RunStage::Queued, "", " or check the host"));
            }
            _ = &mut *ctrl_c => {
                return Some(Failure::new(ErrorKind::Interrupted,
                    "collection was stopped by Ctrl-C before this host finished"));
            }
        }
    }
}

/// The capture of a host whose task did not finish: failed with why the run stopped (or
/// as an internal error when its task panicked), keeping the outputs it had already
/// answered; every other command is missing with that reason.
fn unfinished(
    label: String,
    sink: Option<&Sink>,
    stage: Option<Stage>,
    stop: Option<&Failure>,
    opts: &LiveOptions,
) -> HostCapture {
    let answered = sink.and_then(|s| s.lock().ok().map(|m| m.len())).unwrap_or(0);
    let f = stop
        .map(|f| stopped_at(&label, f, stage, answered, opts))
        .unwrap_or_else(|| {
            Failure::of_host(
                ErrorKind::Internal,
                &label,
                "collection task failed unexpectedly; please report this bug",
            )
        });
    // Keep what this host had already answered: a partial capture is still evidence, and
    // the missing ids say why they are missing.
    let done = sink
        .and_then(|s| s.lock().ok().map(|mut m| std::mem::take(&mut *m)))
        .unwrap_or_default();
    HostCapture::stopped(label, CaptureSource::Live, f, done)
}

/// Why the run stopped, told for one host with the stage it was in (typed in
/// [`Failure::run_stage`] when it was the run's `--timeout`): `esx01: the whole run hit
/// --timeout 2s while connecting and logging in to this host; ...`, or `... while this
/// host's commands ran (N answered); ...`.
fn stopped_at(label: &str, stop: &Failure, stage: Option<Stage>, answered: usize, opts: &LiveOptions) -> Failure {
    let at = match stage {
        None => RunStage::Queued,
        Some(Stage::Connecting) => RunStage::Connecting,
        Some(Stage::Collecting | Stage::Done) => RunStage::Collecting,
    };
    let count = match at {
        RunStage::Collecting => format!(" ({answered} answered)"),
        _ => String::new(),
    };
    let f = if stop.kind == ErrorKind::Timeout {
        run_stop(opts, at, &count, " or check the host")
    } else {
        Failure::new(
            stop.kind,
            format!("collection was stopped by Ctrl-C {}{count}", at.while_host()),
        )
    };
    f.told_of(label)
}

/// The run's deadline passed at `stage`: `--timeout`, or the deadline a caller such as the
/// exporter set in [`LiveOptions::run_deadline`], named with its own advice. `count` goes
/// right after the stage (" (3 answered)"); `also` after the advice.
fn run_stop(opts: &LiveOptions, stage: RunStage, count: &str, also: &str) -> Failure {
    match &opts.run_deadline {
        Some(d) => Failure::deadline(&d.what, stage, &format!("{count}; {}{also}", d.advice)),
        None => {
            let limit = humantime::format_duration(opts.run_timeout.unwrap_or_default()).to_string();
            Failure::run_timeout(&limit, stage, &format!("{count}; raise --timeout{also}"))
        }
    }
}

/// The `--probe` phase after collection, bounded by the same run deadline and Ctrl-C.
/// Returns why it was stopped (if it was) and whether that was Ctrl-C.
pub(super) async fn probe_phase(
    captures: &mut [HostCapture],
    jobs: Vec<Option<HostJob>>,
    conns: Vec<Option<crate::ssh::client::Connection>>,
    probe: crate::probe::ProbeOptions,
    opts: &LiveOptions,
    deadline: &mut std::pin::Pin<&mut impl std::future::Future<Output = ()>>,
    ctrl_c: &mut std::pin::Pin<&mut impl std::future::Future<Output = std::io::Result<()>>>,
) -> (Option<Failure>, bool) {
    use crate::probe::live::{finish, plan_lines, run, ProbeHost, ProbeSink};
    let sinks: Vec<ProbeSink> = captures.iter().map(|_| ProbeSink::default()).collect();
    let lines = plan_lines(captures, probe, &sinks);
    let total: usize = lines.iter().map(Vec::len).sum();
    if probe.sample.is_none() && captures.len() > PROBE_ALL_PAIRS_WARN {
        let notice = format!(
            "--probe on {} hosts pings every pair ({total} probes); --probe-sample K bounds it to K peers per host",
            captures.len()
        );
        eprint!("{}", crate::terminal::stderr_message("pvrdma-doctor: ", &notice));
    }
    if opts.progress && total > 0 {
        let notice = format!("probing {total} vmknic pairs (vmkping, about 3 s each, 8 at once per host)");
        eprint!("{}", crate::terminal::stderr_message("pvrdma-doctor: ", &notice));
    }
    let hosts: Vec<ProbeHost> = jobs
        .into_iter()
        .zip(conns)
        .zip(&sinks)
        .map(|((job, conn), sink)| ProbeHost {
            job,
            conn,
            sink: sink.clone(),
        })
        .collect();
    let mut stop = None;
    let mut interrupted = false;
    tokio::select! {
        _ = run(hosts, lines.clone(), opts.parallel) => {}
        _ = deadline.as_mut() => {
            stop = Some(run_stop(opts, RunStage::Probing, "", ""));
        }
        _ = ctrl_c.as_mut() => {
            interrupted = true;
            stop = Some(Failure::new(ErrorKind::Interrupted, "the path probe was stopped by Ctrl-C"));
        }
    }
    for ((c, sink), todo) in captures.iter_mut().zip(&sinks).zip(&lines) {
        c.probe = Some(finish(sink, todo, stop.as_ref()));
    }
    (stop, interrupted)
}

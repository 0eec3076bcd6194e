//! The monitoring-plugin mode as a process (`--format nagios` anywhere on the command
//! line): what the Monitoring Plugins Development Guidelines ask of a plugin beyond its
//! output ([`pvrdma_engine::report::nagios`]).
//!
//! - Exit codes 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN only: bad arguments (clap's errors
//!   included, so the format is read from the raw arguments before parsing), `--help`,
//!   `--version`, an error or a panic are UNKNOWN with a one-line reason on stdout, never
//!   a traceback.
//! - stdout only: stderr goes to /dev/null unless `-v` asks for the log.
//! - The plugin ends on its own within `--timeout` (default [`DEFAULT_TIMEOUT`]):
//!   collection stops a little before it, so the report can still say which hosts did
//!   not finish and at which stage; a watchdog thread ends the process at the limit
//!   itself, naming the stage the run was in, should anything still be running.
use pvrdma_engine::report::nagios::{self, State};
use std::ffi::OsString;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `--timeout` when the plugin is not given one: the guidelines' "sane default", and half
/// of Icinga's default check timeout (1m).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// What the plugin's parts share: the run (its clock, its stage, the one output it
/// writes), the watchdog thread that ends it at `--timeout`, and the panic hook that keeps
/// a panic's message for the status line. Passed explicitly (an `Arc` for the thread and
/// the hook), never a process global.
#[derive(Debug)]
pub struct Session {
    started: Instant,
    /// `--timeout`: the process ends by then.
    limit: Duration,
    /// When collection stops (a little before `limit`).
    collect_by: Duration,
    /// What the run is doing, for the watchdog's message.
    stage: Mutex<&'static str>,
    /// The exit code of the output already written, once it is (nothing more is written).
    written: Mutex<Option<u8>>,
    /// The first panic's message and place, kept by the hook for the status line.
    panic: Mutex<Option<(String, String)>>,
}

impl Session {
    fn new(started: Instant, limit: Duration) -> Self {
        // Room after collection for the report: a quarter of the limit, at most 2 s.
        let collect_by = limit.saturating_sub((limit / 4).min(Duration::from_secs(2)));
        Session {
            started,
            limit,
            collect_by,
            stage: Mutex::new("starting"),
            written: Mutex::new(None),
            panic: Mutex::new(None),
        }
    }

    /// Records what the run is doing, for the watchdog's message.
    pub(crate) fn stage(&self, what: &'static str) {
        if let Ok(mut s) = self.stage.lock() {
            *s = what;
        }
    }

    /// How long the run has taken so far.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// `Some(limit)` once the run is past the time collection had.
    pub(crate) fn timed_out(&self) -> Option<Duration> {
        (self.started.elapsed() >= self.collect_by).then_some(self.limit)
    }

    /// Writes `text` unless an output was already written; returns the code that stands.
    pub(crate) fn write_once(&self, text: &str, code: u8) -> u8 {
        let Ok(mut written) = self.written.lock() else {
            return State::Unknown.code();
        };
        if let Some(code) = *written {
            return code;
        }
        let mut out = std::io::stdout().lock();
        // A monitoring system that closed the pipe reads nothing either way.
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        *written = Some(code);
        code
    }

    /// Writes an UNKNOWN status line with `reason` (unless an output was already
    /// written); returns the code that stands.
    pub(crate) fn finish_unknown(&self, reason: &str) -> u8 {
        self.write_once(&nagios::status_only(State::Unknown, reason), State::Unknown.code())
    }
}

/// Whether `--format nagios` (or `--format=nagios`) is on the command line, before `--`.
pub fn requested(args: &[OsString]) -> bool {
    let mut it = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(arg) = it.next() {
        match arg.as_ref() {
            "--" => return false,
            "--format=nagios" => return true,
            "--format" if it.next().is_some_and(|v| v == "nagios") => return true,
            _ => {}
        }
    }
    false
}

/// Runs the program (`run`: the application's entry) as a monitoring plugin; returns the
/// exit code (0 to 3).
pub fn main(args: Vec<OsString>, run: fn(crate::cli::Cli, Option<&Session>) -> anyhow::Result<u8>) -> u8 {
    let started = Instant::now();
    let parsed = crate::cli::try_parse_from(&args);
    let limit = parsed
        .as_ref()
        .ok()
        .and_then(|cli| cli.run_timeout())
        .unwrap_or(DEFAULT_TIMEOUT);
    let session = Arc::new(Session::new(started, limit));
    install_panic_hook(&session);
    let mut cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return usage_error(&session, &e),
    };
    if cli.verbose() == 0 {
        silence_stderr();
    }
    // `--help`-like jobs print what was asked and, as the guidelines want, end UNKNOWN.
    let informational = cli.informational();
    if let Some(timeout) = cli.run_timeout_mut() {
        *timeout = Some(session.collect_by);
    }
    start_watchdog(Arc::clone(&session));
    let code = guard(&session, || run(cli, Some(&session)));
    if informational {
        State::Unknown.code()
    } else {
        code
    }
}

/// Runs `job` and turns an error or a panic into an UNKNOWN status line; a report the job
/// wrote keeps its own code.
fn guard<F: FnOnce() -> anyhow::Result<u8>>(session: &Session, job: F) -> u8 {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => session.finish_unknown(&format!("{e:#}")),
        Err(payload) => {
            let kept = session.panic.lock().ok().and_then(|mut p| p.take());
            let (what, place) = kept.unwrap_or_else(|| (panic_text(payload.as_ref()), String::new()));
            let mut text = nagios::status_only(State::Unknown, &format!("internal error: {what}"));
            text.push_str(&format!("pvrdma-doctor failed{place}; please report this bug\n"));
            session.write_once(&text, State::Unknown.code())
        }
    }
}

/// Keeps a panic's message for [`guard`] instead of printing it with a backtrace on
/// stderr. A panic that a host task recovers from only shows as that host's error. The
/// hook is process-wide by nature; it holds the session, not a global.
fn install_panic_hook(session: &Arc<Session>) {
    let session = Arc::clone(session);
    std::panic::set_hook(Box::new(move |info| {
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let what = panic_text(info.payload());
        if let Ok(mut p) = session.panic.lock() {
            p.get_or_insert((what, place));
        }
    }));
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// clap's refusal as an UNKNOWN status line (its hints as long output); `--help` and
/// `--version` print as usual, then end UNKNOWN.
fn usage_error(session: &Session, e: &clap::Error) -> u8 {
    use clap::error::ErrorKind as K;
    let rendered = e.render().to_string();
    if matches!(
        e.kind(),
        K::DisplayHelp | K::DisplayVersion | K::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        return session.write_once(&rendered, State::Unknown.code());
    }
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("bad arguments");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let mut text = nagios::status_only(State::Unknown, &format!("bad arguments: {first}"));
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    session.write_once(&text, State::Unknown.code())
}

/// Ends the process at the session's limit with an UNKNOWN line naming the stage, if no
/// report was written by then.
fn start_watchdog(session: Arc<Session>) {
    let spawned = std::thread::Builder::new()
        .name("plugin-timeout".into())
        .spawn(move || {
            std::thread::sleep(session.limit.saturating_sub(session.started.elapsed()));
            let what = session.stage.lock().map(|s| *s).unwrap_or("running");
            let reason = format!(
                "plugin timed out after {} (--timeout) while {what}",
                pvrdma_engine::duration::text(session.limit)
            );
            let code = session.finish_unknown(&reason);
            std::process::exit(i32::from(code));
        });
    // Without the thread the run's own --timeout still bounds collection.
    drop(spawned);
}

/// Sends stderr to /dev/null: a monitoring system may mix it into the plugin output.
fn silence_stderr() {
    use std::os::fd::AsRawFd;
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return;
    };
    // SAFETY: dup2 only replaces descriptor 2 by a duplicate of an open descriptor that
    // lives for the whole call; nothing holds a pointer into either.
    #[allow(unsafe_code)]
    unsafe {
        libc::dup2(null.as_raw_fd(), 2);
    }
}

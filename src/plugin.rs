//! The monitoring-plugin mode as a process (`--format nagios` anywhere on the command
//! line): what the Monitoring Plugins Development Guidelines ask of a plugin beyond its
//! output ([`crate::report::nagios`]).
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
use crate::report::nagios::{self, NagiosOptions, PluginOutput, State};
use std::ffi::OsString;
use std::io::Write;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// `--timeout` when the plugin is not given one: the guidelines' "sane default", and half
/// of Icinga's default check timeout (1m).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The run's clock, set once the arguments are read.
struct Clock {
    started: Instant,
    /// `--timeout`: the process ends by then.
    limit: Duration,
    /// When collection stops (a little before `limit`).
    collect_by: Duration,
}

static CLOCK: OnceLock<Clock> = OnceLock::new();
/// What the run is doing, for the watchdog's message.
static STAGE: Mutex<&str> = Mutex::new("starting");
/// The exit code of the output already written, once it is (the watchdog then writes
/// nothing more).
static WRITTEN: Mutex<Option<u8>> = Mutex::new(None);
/// The first panic's message and place, kept by the hook for the status line.
static PANIC: Mutex<Option<(String, String)>> = Mutex::new(None);

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
pub fn main(args: Vec<OsString>, run: fn(crate::cli::Cli) -> anyhow::Result<u8>) -> u8 {
    let started = Instant::now();
    install_panic_hook();
    let mut cli = match crate::cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    if cli.verbose == 0 {
        silence_stderr();
    }
    // `--help`-like jobs print what was asked and, as the guidelines want, end UNKNOWN.
    let informational = cli.generate.is_some() || cli.list_checks;
    let limit = cli.live.timeout.unwrap_or(DEFAULT_TIMEOUT);
    // Room after collection for the report: a quarter of the limit, at most 2 s.
    let collect_by = limit.saturating_sub((limit / 4).min(Duration::from_secs(2)));
    cli.live.timeout = Some(collect_by);
    let _ = CLOCK.set(Clock {
        started,
        limit,
        collect_by,
    });
    start_watchdog(started, limit);
    let code = guard(move || run(cli));
    if informational {
        State::Unknown.code()
    } else {
        code
    }
}

/// Runs `job` and turns an error or a panic into an UNKNOWN status line; a report the job
/// wrote keeps its own code.
pub fn guard<F: FnOnce() -> anyhow::Result<u8>>(job: F) -> u8 {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => finish_unknown(&format!("{e:#}")),
        Err(payload) => {
            let kept = PANIC.lock().ok().and_then(|mut p| p.take());
            let (what, place) = kept.unwrap_or_else(|| (panic_text(payload.as_ref()), String::new()));
            let mut text = nagios::status_only(State::Unknown, &format!("internal error: {what}"));
            text.push_str(&format!("pvrdma-doctor failed{place}; please report this bug\n"));
            write_once(&text, State::Unknown.code())
        }
    }
}

/// Keeps a panic's message for [`guard`] instead of printing it with a backtrace on
/// stderr. A panic that a host task recovers from only shows as that host's error.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let what = panic_text(info.payload());
        if let Ok(mut p) = PANIC.lock() {
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

/// Records what the run is doing (no-op outside the plugin mode's interest).
pub(crate) fn stage(what: &'static str) {
    if let Ok(mut s) = STAGE.lock() {
        *s = what;
    }
}

/// The report's options from the command line and the run's clock.
pub(crate) fn options(args: &crate::cli::PluginArgs) -> NagiosOptions {
    let clock = CLOCK.get();
    let elapsed = clock.map(|c| c.started.elapsed());
    NagiosOptions {
        warning: args.warning.clone(),
        critical: args.critical.clone(),
        unreachable: args.unreachable_state.into(),
        duration: elapsed,
        timed_out: clock.and_then(|c| (c.started.elapsed() >= c.collect_by).then_some(c.limit)),
    }
}

/// Writes the plugin report and returns its exit code.
pub(crate) fn write_report(out: &PluginOutput) -> u8 {
    write_once(&out.text, out.state.code())
}

/// The exit code of the report written, UNKNOWN when none was.
pub(crate) fn reported_code() -> u8 {
    WRITTEN.lock().ok().and_then(|w| *w).unwrap_or(State::Unknown.code())
}

/// Writes `text` unless an output was already written; returns the code that stands.
fn write_once(text: &str, code: u8) -> u8 {
    let Ok(mut written) = WRITTEN.lock() else {
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

fn finish_unknown(reason: &str) -> u8 {
    write_once(&nagios::status_only(State::Unknown, reason), State::Unknown.code())
}

/// clap's refusal as an UNKNOWN status line (its hints as long output); `--help` and
/// `--version` print as usual, then end UNKNOWN.
fn usage_error(e: &clap::Error) -> u8 {
    use clap::error::ErrorKind as K;
    let rendered = e.render().to_string();
    if matches!(
        e.kind(),
        K::DisplayHelp | K::DisplayVersion | K::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        return write_once(&rendered, State::Unknown.code());
    }
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("bad arguments");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let mut text = nagios::status_only(State::Unknown, &format!("bad arguments: {first}"));
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    write_once(&text, State::Unknown.code())
}

/// Ends the process at `limit` after `started` with an UNKNOWN line naming the stage, if
/// no report was written by then.
fn start_watchdog(started: Instant, limit: Duration) {
    let spawned = std::thread::Builder::new()
        .name("plugin-timeout".into())
        .spawn(move || {
            std::thread::sleep(limit.saturating_sub(started.elapsed()));
            let what = STAGE.lock().map(|s| *s).unwrap_or("running");
            let reason = format!(
                "plugin timed out after {}s (--timeout) while {what}",
                limit.as_secs_f64()
            );
            let code = write_once(&nagios::status_only(State::Unknown, &reason), State::Unknown.code());
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

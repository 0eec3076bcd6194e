//! What the exporter's tests and the benchmarks read back from a process they run: an HTTP
//! answer's status and body (or a whole GET), a `/proc/PID/status` figure, and a raised open-file limit.
//! Plain std and libc, so an example can take this file alone (`#[path]`) without the
//! sshd harness.

/// The status code and body of a raw HTTP/1.1 answer; status 0 when there is no status
/// line.
pub fn http_response(raw: &[u8]) -> (u16, String) {
    let text = String::from_utf8_lossy(raw);
    let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// A plain HTTP/1.1 GET of `path` from `addr` (`127.0.0.1:port`): (status, body).
pub fn get(addr: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect to the exporter");
    s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .expect("timeout");
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").expect("send");
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    http_response(&raw)
}

/// A KiB figure of `/proc/PID/status` (`field` with its colon: `"VmRSS:"`, `"VmHWM:"`);
/// `None` when the process or the field is gone.
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Raises this process's soft open-file limit to the hard one, at most `at_most`: the
/// attack and load tests hold thousands of sockets.
pub fn raise_nofile(at_most: libc::rlim_t) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain getrlimit/setrlimit on a struct that lives through the calls.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max.min(at_most);
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
}

/// How a child process ran: its wall time from spawn to exit, its peak resident memory
/// (the kernel's `ru_maxrss`, KiB) and its exit status.
#[derive(Debug, Clone, Copy)]
pub struct Ran {
    pub seconds: f64,
    pub peak_kib: u64,
    pub exit_code: Option<i32>,
}

/// The argument that makes a program using [`run_measured`] act as its launcher.
const LAUNCH: &str = "--measure-child";

/// Runs `command` (its program, arguments, environment and folder; `stdout` for its
/// output, `stdin` written to it, then closed) and measures it. The kernel counts in a
/// process's `ru_maxrss` the memory of the process it was spawned from, up to its exec
/// (posix_spawn shares that memory), so a benchmark that has held a large report would
/// count itself: the command is started by a fresh copy of this program
/// ([`launch_if_asked`], a few MiB), which reaps it with wait4(2) and hands back its
/// figure. Its stdout, when piped, is read whole before the wait, so keep it small or
/// send it to a file.
pub fn run_measured(command: &std::process::Command, stdin: &[u8], stdout: std::process::Stdio) -> (Ran, Vec<u8>) {
    use std::io::{Read, Write};
    let figure = tempfile::NamedTempFile::new().expect("a file for the figure");
    let mut launcher = std::process::Command::new(std::env::current_exe().expect("this program"));
    launcher
        .arg(LAUNCH)
        .arg(figure.path())
        .arg(command.get_program())
        .args(command.get_args())
        .stdin(std::process::Stdio::piped())
        .stdout(stdout);
    for (key, value) in command.get_envs() {
        match value {
            Some(v) => launcher.env(key, v),
            None => launcher.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        launcher.current_dir(dir);
    }
    let start = std::time::Instant::now();
    let mut child = launcher.spawn().expect("spawn the measured process");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin).expect("write its stdin");
    }
    let mut out = Vec::new();
    if let Some(mut piped) = child.stdout.take() {
        piped.read_to_end(&mut out).expect("read its stdout");
    }
    let status = child.wait().expect("wait for the launcher");
    let seconds = start.elapsed().as_secs_f64();
    let peak_kib = std::fs::read_to_string(figure.path())
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .expect("the launcher's figure");
    let ran = Ran {
        seconds,
        peak_kib,
        exit_code: status.code(),
    };
    (ran, out)
}

/// Call first in `main` of a program that uses [`run_measured`]: when started as its
/// launcher, runs the command it was given (inheriting everything), reaps it with
/// wait4(2), writes its peak memory (KiB) to the file named, and exits with its code.
pub fn launch_if_asked() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.len() < 4 || args[1] != LAUNCH {
        return;
    }
    let child = std::process::Command::new(&args[3])
        .args(&args[4..])
        .spawn()
        .expect("spawn the measured command");
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    let mut status = 0;
    // SAFETY: wait4 on our own child, writing into locals that outlive the call; `Child`
    // is then dropped without a wait of its own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    std::fs::write(&args[2], usage.ru_maxrss.to_string()).expect("write the figure");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    std::process::exit(code);
}

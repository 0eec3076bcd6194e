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

/// Spawns `command`, writes `stdin` to it (then closes it) and reaps it with wait4(2),
/// which gives the peak memory of that process alone. Its stdout, when piped, is read
/// whole before the wait, so keep it small or send it to a file.
#[allow(
    clippy::zombie_processes,
    reason = "reaped by wait4(2), which also gives its peak memory"
)]
pub fn run_measured(command: &mut std::process::Command, stdin: &[u8]) -> (Ran, Vec<u8>) {
    use std::io::{Read, Write};
    let start = std::time::Instant::now();
    let mut child = command.spawn().expect("spawn the measured process");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin).expect("write its stdin");
    }
    let mut out = Vec::new();
    if let Some(mut stdout) = child.stdout.take() {
        stdout.read_to_end(&mut out).expect("read its stdout");
    }
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    let mut status = 0;
    // SAFETY: wait4 on our own child, writing into locals that outlive the call; `Child`
    // is then dropped without a wait of its own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    let seconds = start.elapsed().as_secs_f64();
    let exit_code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let ran = Ran {
        seconds,
        peak_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
        exit_code,
    };
    (ran, out)
}

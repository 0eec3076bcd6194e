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

//! Basic authentication under wrong passwords, against the exporter as its own process:
//! the right password gets in while many wrong ones wait, the checks of clients that went
//! are dropped rather than run, and an unknown user costs a bcrypt check like a known one.
use crate::serve::exporter;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn basic(user: &str, password: &str) -> String {
    data_encoding::BASE64.encode(format!("{user}:{password}").as_bytes())
}

/// Sends a GET with these credentials on a new connection; the stream, still open.
fn send(addr: &str, path: &str, user: &str, password: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Basic {}\r\nConnection: close\r\n\r\n",
        basic(user, password)
    )
    .expect("send");
    s
}

/// The answer on `s`: (status, body); status 0 when none came.
fn answer(mut s: TcpStream) -> (u16, String) {
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    crate::support::measure::http_response(&raw)
}

fn counter(metrics: &str, name: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {metrics}"))
}

#[test]
fn the_right_password_gets_in_while_wrong_ones_wait_and_checks_of_clients_gone_are_dropped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hash = bcrypt::hash("scrape-secret", 6).expect("bcrypt");
    let web = dir.path().join("web.yml");
    std::fs::write(&web, format!("basic_auth_users:\n  prometheus: '{hash}'\n")).expect("write web.yml");
    let (_exp, addr) = exporter(
        dir.path(),
        &["demo", "--serve", "--web.config.file", web.to_str().expect("utf-8")],
    );
    // 60 clients send a wrong password and go at once; 60 more send one and wait.
    let gone = 60;
    for i in 0..gone {
        drop(send(&addr, "/-/healthy", "prometheus", &format!("gone-{i}")));
    }
    let waiting: Vec<TcpStream> = (0..60)
        .map(|i| send(&addr, "/-/healthy", "prometheus", &format!("guess-{i}")))
        .collect();
    // The right password, asked behind all of them, is answered (no timed bound: it
    // comes once the waiting wrong ones ahead of it are checked).
    let (status, body) = answer(send(&addr, "/-/healthy", "prometheus", "scrape-secret"));
    assert_eq!(status, 200, "{body}");
    for s in waiting {
        assert_eq!(answer(s).0, 401);
    }
    let (status, metrics) = answer(send(&addr, "/metrics", "prometheus", "scrape-secret"));
    assert_eq!(status, 200, "{metrics}");
    let checks = counter(&metrics, "pvrdma_doctor_http_auth_checks_total");
    let dropped = counter(&metrics, "pvrdma_doctor_http_auth_checks_dropped_total");
    assert!(dropped > 0, "no check of a client gone was dropped: {checks} run");
    assert!(
        checks < gone + 60 + 1,
        "every wrong password was checked ({checks}), also those of clients gone"
    );
    assert_eq!(checks + dropped, gone + 60 + 1, "each check either ran or was dropped");
    // An unknown user is checked with bcrypt too, as a known user's wrong password is.
    let (status, _) = answer(send(&addr, "/-/healthy", "mallory", "anything"));
    assert_eq!(status, 401);
    let (_, after) = answer(send(&addr, "/metrics", "prometheus", "scrape-secret"));
    assert_eq!(counter(&after, "pvrdma_doctor_http_auth_checks_total"), checks + 1);
    assert_eq!(
        counter(&after, "pvrdma_doctor_http_auth_failures_total"),
        counter(&metrics, "pvrdma_doctor_http_auth_failures_total") + 1
    );
}

/// Prometheus shares its address with a flood of guesses, each sent once and waited for:
/// its first scrape waits among them and gives up (its connection closed); the next
/// scrape, the same credential asked again, is answered before the guesses still waiting.
#[test]
fn a_password_asked_again_is_checked_before_the_guesses_waiting_at_the_same_address() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hash = bcrypt::hash("scrape-secret", 8).expect("bcrypt");
    let web = dir.path().join("web.yml");
    std::fs::write(&web, format!("basic_auth_users:\n  prometheus: '{hash}'\n")).expect("write web.yml");
    let (_exp, addr) = exporter(
        dir.path(),
        &["demo", "--serve", "--web.config.file", web.to_str().expect("utf-8")],
    );
    let guesses = 100;
    let waiting: Vec<TcpStream> = (0..guesses)
        .map(|i| send(&addr, "/-/healthy", "prometheus", &format!("guess-{i}")))
        .collect();
    // The first scrape, behind them all, given up; a moment for the exporter to see it
    // go (the order of the two scrapes, not a bound on anything).
    drop(send(&addr, "/-/healthy", "prometheus", "scrape-secret"));
    std::thread::sleep(Duration::from_millis(200));
    let (status, body) = answer(send(&addr, "/-/healthy", "prometheus", "scrape-secret"));
    assert_eq!(status, 200, "{body}");
    // How many guesses had their answer when the right password had its own: in arrival
    // order, all of them.
    let answered = waiting
        .iter()
        .filter(|s| {
            s.set_nonblocking(true).expect("nonblocking");
            let answered = matches!(s.peek(&mut [0u8; 1]), Ok(n) if n > 0);
            s.set_nonblocking(false).expect("blocking");
            answered
        })
        .count();
    assert!(
        answered < guesses / 2,
        "{answered} of {guesses} guesses were answered before the password asked again"
    );
    let (status, metrics) = answer(send(&addr, "/metrics", "prometheus", "scrape-secret"));
    assert_eq!(status, 200, "{metrics}");
    assert!(counter(&metrics, "pvrdma_doctor_http_auth_checks_dropped_total") >= 1);
    for s in waiting {
        assert_eq!(answer(s).0, 401);
    }
}

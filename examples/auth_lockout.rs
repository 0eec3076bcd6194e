//! Can wrong passwords lock the right one out? (a benchmark, not a test). The exporter as
//! its own process (`demo --serve --web.config.file`, one user `prometheus` at bcrypt
//! cost `--cost`), for each binary given:
//!
//! 1. **Lockout**: N clients (`--clients 100,400`) each send a wrong password, wait up to
//!    2 s for the answer, then give up, close and try again, as a scanner does; a
//!    different password each time (`--same-password`: always the same one). After
//!    `--login-at` seconds of this, one client sends the right password on a new
//!    connection and times its answer (at most 60 s); the attack lasts `--attack` seconds
//!    in all (20 by default). `--patience S` sets how long an attacker waits for its
//!    answer (2 s); `--attackers-from 127.0.0.2` sends the attack from another loopback
//!    address than the right client's (127.0.0.1). `--scrape 15,10` makes the right
//!    client scrape as Prometheus does instead: from `--login-at` on, a request every 15 s
//!    on a new connection, given up after 10 s (the scrape timeout), until one is answered
//!    200 or the attack ends; the attack then stops at that first successful scrape.
//!    Printed: the time from the first correct request to the first one answered 200 (and
//!    which scrape it was), the wrong requests sent, and the exporter's count of bcrypt
//!    checks run and dropped when it has one.
//! 2. **Timing**: with no attack, `--tries` wrong passwords of the known user and as many
//!    of an unknown user, interleaved, one at a time on new connections (a different
//!    password each time); medians and quartiles of the time to the 401 (`--tries 0`: not run).
//!
//! Loopback only; every wait is bounded; the exporter is killed at the end of each run.
//!
//! ```text
//! cargo build --bin pvrdma-doctor
//! cargo run --example auth_lockout -- --bin before=/tmp/pvrdma-doctor-old \
//!     --bin after=target/debug/pvrdma-doctor [--clients 100,400] [--cost 6] [--tries 200]
//! ```
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const USER: &str = "prometheus";
const PASSWORD: &str = "the-right-one";

struct Exporter {
    child: Child,
    addr: String,
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(bin: &Path, dir: &Path, web: &Path) -> Exporter {
    let log = dir.join(format!("exporter-{}.log", rand::random::<u32>()));
    let child = Command::new(bin)
        .args(["demo", "--serve", "--listen", "127.0.0.1:0", "--web.config.file"])
        .arg(web)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("start the exporter");
    let mut exporter = Exporter {
        child,
        addr: String::new(),
    };
    let begun = Instant::now();
    while begun.elapsed() < Duration::from_secs(60) {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(rest) = text.split("serving on http://").nth(1) {
            exporter.addr = rest.split('/').next().unwrap_or("").to_string();
            return exporter;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!(
        "the exporter did not start: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
}

fn basic(user: &str, password: &str) -> String {
    data_encoding::BASE64.encode(format!("{user}:{password}").as_bytes())
}

/// A connection to `addr` from the local address `from` (any when `None`).
fn connect(addr: &str, from: Option<std::net::IpAddr>, limit: Duration) -> Option<TcpStream> {
    let to: std::net::SocketAddr = addr.parse().expect("address");
    let Some(from) = from else {
        return TcpStream::connect_timeout(&to, limit).ok();
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let stream = rt.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().ok()?;
        socket.bind(std::net::SocketAddr::new(from, 0)).ok()?;
        tokio::time::timeout(limit, socket.connect(to)).await.ok()?.ok()
    })?;
    let stream = stream.into_std().ok()?;
    stream.set_nonblocking(false).ok()?;
    Some(stream)
}

/// One GET on a new connection: the status (0: no answer within `limit`) and its time.
fn request(addr: &str, path: &str, user: &str, password: &str, limit: Duration) -> (u16, Duration, String) {
    request_from(addr, None, path, user, password, limit)
}

fn request_from(
    addr: &str,
    from: Option<std::net::IpAddr>,
    path: &str,
    user: &str,
    password: &str,
    limit: Duration,
) -> (u16, Duration, String) {
    let start = Instant::now();
    let Some(mut s) = connect(addr, from, limit) else {
        return (0, start.elapsed(), String::new());
    };
    let _ = s.set_read_timeout(Some(limit));
    let sent = write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Basic {}\r\nConnection: close\r\n\r\n",
        basic(user, password)
    );
    if sent.is_err() {
        return (0, start.elapsed(), String::new());
    }
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, start.elapsed(), text)
}

fn web_config(dir: &Path, cost: u32) -> PathBuf {
    let hash = bcrypt::hash(PASSWORD, cost).expect("hash");
    let web = dir.join(format!("web-{cost}.yml"));
    std::fs::write(&web, format!("basic_auth_users:\n  {USER}: '{hash}'\n")).expect("write web.yml");
    web
}

struct Lockout {
    first_login: Option<Duration>,
    /// Which scrape was the first answered 200 (1: the first), in `--scrape` mode.
    scrape: Option<usize>,
    /// The scrapes not answered 200: (status, 0 for none; time to it).
    failed: Vec<(u16, Duration)>,
    wrong_sent: u64,
    checks: String,
}

fn counter(metrics: &str, name: &str) -> Option<u64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.parse().ok())
}

fn lockout(bin: &Path, dir: &Path, web: &Path, clients: usize, opts: &Opts) -> Lockout {
    let exporter = start(bin, dir, web);
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let attackers: Vec<_> = (0..clients)
        .map(|c| {
            let (addr, stop, sent, same) = (exporter.addr.clone(), stop.clone(), sent.clone(), opts.same_password);
            let (from, patience) = (opts.attackers_from, Duration::from_secs_f64(opts.patience));
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let password = if same {
                        "wrong".to_string()
                    } else {
                        format!("wrong-{c}-{n}")
                    };
                    n += 1;
                    sent.fetch_add(1, Ordering::Relaxed);
                    let _ = request_from(&addr, from, "/-/healthy", USER, &password, patience);
                }
            })
        })
        .collect();
    let attack_began = Instant::now();
    let attack = Duration::from_secs_f64(opts.attack);
    std::thread::sleep(Duration::from_secs_f64(opts.login_at));
    let mut failed = Vec::new();
    let (first_login, scrape) = match opts.scrape {
        None => {
            let (status, took, _) = request(&exporter.addr, "/-/healthy", USER, PASSWORD, Duration::from_secs(60));
            std::thread::sleep(attack.saturating_sub(attack_began.elapsed()));
            ((status == 200).then_some(took), None)
        }
        Some((interval, timeout)) => {
            scrape_until_answered(&exporter.addr, attack_began + attack, interval, timeout, &mut failed)
        }
    };
    stop.store(true, Ordering::Relaxed);
    for a in attackers {
        let _ = a.join();
    }
    // The exporter's own count, when it has one (the right password is remembered by then
    // on a binary that remembers it; on one that does not this waits for its check).
    let (_, _, metrics) = request(&exporter.addr, "/metrics", USER, PASSWORD, Duration::from_secs(120));
    let checks = match (
        counter(&metrics, "pvrdma_doctor_http_auth_checks_total"),
        counter(&metrics, "pvrdma_doctor_http_auth_checks_dropped_total"),
    ) {
        (Some(run), Some(dropped)) => format!("{run} run, {dropped} dropped"),
        _ => "not counted".to_string(),
    };
    Lockout {
        first_login,
        scrape,
        failed,
        wrong_sent: sent.load(Ordering::Relaxed),
        checks,
    }
}

/// Scrapes with the right password as Prometheus does (a new connection every `interval`,
/// given up after `timeout`) until one is answered 200 or `until`: the time from the first
/// scrape to that answer, and its number; the others' status and time into `failed`.
fn scrape_until_answered(
    addr: &str,
    until: Instant,
    interval: Duration,
    timeout: Duration,
    failed: &mut Vec<(u16, Duration)>,
) -> (Option<Duration>, Option<usize>) {
    let first = Instant::now();
    let mut n = 0;
    while Instant::now() < until {
        let at = first + interval * n;
        std::thread::sleep(at.saturating_duration_since(Instant::now()));
        n += 1;
        let (status, took, _) = request(addr, "/-/healthy", USER, PASSWORD, timeout);
        if status == 200 {
            return (Some(first.elapsed()), Some(n as usize));
        }
        failed.push((status, took));
    }
    (None, None)
}

fn quartiles(mut v: Vec<Duration>) -> (f64, f64, f64) {
    v.sort();
    let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1000.0;
    (at(0.25), at(0.5), at(0.75))
}

/// (known user's wrong password, unknown user) quartiles in ms.
fn timing(bin: &Path, dir: &Path, web: &Path, tries: usize) -> [(f64, f64, f64); 2] {
    let exporter = start(bin, dir, web);
    let (mut known, mut unknown) = (Vec::new(), Vec::new());
    for i in 0..tries {
        for (user, into) in [(USER, &mut known), ("mallory", &mut unknown)] {
            let (status, took, _) = request(
                &exporter.addr,
                "/-/healthy",
                user,
                &format!("guess-{i}"),
                Duration::from_secs(30),
            );
            assert_eq!(status, 401, "{user}");
            into.push(took);
        }
    }
    [quartiles(known), quartiles(unknown)]
}

struct Opts {
    bins: Vec<(String, PathBuf)>,
    clients: Vec<usize>,
    cost: u32,
    timing_costs: Vec<u32>,
    tries: usize,
    attack: f64,
    login_at: f64,
    same_password: bool,
    /// The attackers' source address (default: the same as the right client's).
    attackers_from: Option<std::net::IpAddr>,
    /// How long an attacker waits for an answer before it gives up and reconnects.
    patience: f64,
    /// The right client scrapes as Prometheus does: (interval, timeout).
    scrape: Option<(Duration, Duration)>,
}

fn main() {
    let mut o = Opts {
        bins: Vec::new(),
        clients: vec![100, 400],
        cost: 6,
        timing_costs: vec![5, 8],
        tries: 200,
        attack: 20.0,
        login_at: 10.0,
        same_password: false,
        attackers_from: None,
        patience: 2.0,
        scrape: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--bin" => {
                let v = value();
                let (label, path) = v.split_once('=').expect("--bin LABEL=PATH");
                o.bins.push((label.to_string(), PathBuf::from(path)));
            }
            "--clients" => o.clients = value().split(',').map(|n| n.parse().expect("N,N")).collect(),
            "--cost" => o.cost = value().parse().expect("cost"),
            "--timing-costs" => o.timing_costs = value().split(',').map(|n| n.parse().expect("N,N")).collect(),
            "--tries" => o.tries = value().parse().expect("N"),
            "--attack" => o.attack = value().parse().expect("seconds"),
            "--login-at" => o.login_at = value().parse().expect("seconds"),
            "--same-password" => o.same_password = true,
            "--attackers-from" => o.attackers_from = Some(value().parse().expect("an address such as 127.0.0.2")),
            "--patience" => o.patience = value().parse().expect("seconds"),
            "--scrape" => {
                let v = value();
                let (every, timeout) = v.split_once(',').expect("--scrape INTERVAL,TIMEOUT");
                let secs = |s: &str| Duration::from_secs_f64(s.parse().expect("seconds"));
                o.scrape = Some((secs(every), secs(timeout)));
            }
            other => panic!("unknown option {other}"),
        }
    }
    if o.bins.is_empty() {
        o.bins
            .push(("this".into(), PathBuf::from("target/debug/pvrdma-doctor")));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let web = web_config(dir.path(), o.cost);
    if let Some((every, timeout)) = o.scrape {
        println!(
            "the right client scrapes every {} s, each scrape given up after {} s",
            every.as_secs_f64(),
            timeout.as_secs_f64()
        );
    }
    println!(
        "lockout: bcrypt cost {}, {} s of attack, the right password sent at {} s, {} wrong passwords, attackers wait {} s for an answer, from {}",
        o.cost,
        o.attack,
        o.login_at,
        if o.same_password { "the same" } else { "different" },
        o.patience,
        o.attackers_from.map_or_else(|| "the right client's address".to_string(), |a| a.to_string()),
    );
    println!("| binary | clients | first correct login | wrong requests sent | bcrypt checks |\n|---|---|---|---|---|");
    for clients in &o.clients {
        for (label, bin) in &o.bins {
            let r = lockout(bin, dir.path(), &web, *clients, &o);
            let login = match (r.first_login, r.scrape) {
                (Some(d), Some(n)) => format!("{:.2} s (scrape {n})", d.as_secs_f64()),
                (Some(d), None) => format!("{:.2} s", d.as_secs_f64()),
                (None, _) if o.scrape.is_some() => "none while the attack lasted".to_string(),
                (None, _) => "none within 60 s".to_string(),
            };
            println!("| {label} | {clients} | {login} | {} | {} |", r.wrong_sent, r.checks);
            for (status, took) in &r.failed {
                eprintln!(
                    "  {label}, {clients}: a scrape answered {status} after {:.2} s (0: none)",
                    took.as_secs_f64()
                );
            }
        }
    }
    if o.tries == 0 {
        return;
    }
    println!(
        "\ntiming: {} wrong passwords each, one at a time, interleaved\n| binary | user cost | known user, wrong password p25 / median / p75 ms | unknown user p25 / median / p75 ms | median difference ms |\n|---|---|---|---|---|",
        o.tries
    );
    for cost in &o.timing_costs {
        let web = web_config(dir.path(), *cost);
        for (label, bin) in &o.bins {
            let [k, u] = timing(bin, dir.path(), &web, o.tries);
            println!(
                "| {label} | {cost} | {:.2} / {:.2} / {:.2} | {:.2} / {:.2} / {:.2} | {:+.2} |",
                k.0,
                k.1,
                k.2,
                u.0,
                u.1,
                u.2,
                k.1 - u.1
            );
        }
    }
}

//! Does a 401 tell which basic-auth users exist? (a benchmark, not a test). Two users with
//! different bcrypt costs, as a site that added a user later at a higher cost has; 200
//! failed checks each of: an unknown user, the cheaper user with a wrong password, the
//! dearer user with a wrong password, through the exporter's own check
//! (`--web.config.file` loaded as `serve` loads it). For comparison, the rule it replaced
//! (an unknown user checked against the first user's hash) is timed in the same run.
//! Medians and quartiles in milliseconds.
//!
//! ```text
//! cargo run --release --example auth_timing -- [--tries 200] [--costs 4,8]
//! ```
use std::time::{Duration, Instant};

fn header(user: &str, password: &str) -> String {
    format!(
        "Basic {}",
        data_encoding::BASE64.encode(format!("{user}:{password}").as_bytes())
    )
}

fn quartiles(mut v: Vec<Duration>) -> (f64, f64, f64) {
    v.sort();
    let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1000.0;
    (at(0.25), at(0.5), at(0.75))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut tries = 200usize;
    let mut costs = (4u32, 8u32);
    for pair in args.chunks(2) {
        let value = pair.get(1).map(String::as_str).unwrap_or("");
        match pair[0].as_str() {
            "--tries" => tries = value.parse().expect("--tries N"),
            "--costs" => {
                let (a, b) = value.split_once(',').expect("--costs LOW,HIGH");
                costs = (a.parse().expect("cost"), b.parse().expect("cost"));
            }
            other => panic!("unknown option {other}"),
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let cheap = bcrypt::hash("right-a", costs.0).expect("hash");
    let dear = bcrypt::hash("right-b", costs.1).expect("hash");
    let path = dir.path().join("web.yml");
    // `alice` sorts first: the old rule checked unknown users against her (cheap) hash.
    std::fs::write(
        &path,
        format!("basic_auth_users:\n  alice: '{cheap}'\n  prometheus: '{dear}'\n"),
    )
    .expect("write web.yml");
    let web = pvrdma_doctor::serve::web::WebConfig::load(&path).expect("load");
    let auth = web.auth.expect("users");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let metrics = pvrdma_doctor::serve::metrics::Metrics::new();
    // A different wrong password every time: a credential checked once is remembered,
    // and what is timed here is the check.
    let time = |user: &str| -> Vec<Duration> {
        (0..tries)
            .map(|i| {
                let h = header(user, &format!("wrong-{i}"));
                let start = Instant::now();
                let verdict = rt.block_on(auth.check(
                    Some(h.as_bytes()),
                    std::net::Ipv4Addr::LOCALHOST.into(),
                    std::future::pending(),
                    &metrics,
                ));
                assert_eq!(verdict, pvrdma_doctor::serve::auth::Verdict::Refused);
                start.elapsed()
            })
            .collect()
    };
    let cases = [
        ("unknown user", "mallory"),
        ("alice (cheaper hash), wrong password", "alice"),
        ("prometheus (dearer hash), wrong password", "prometheus"),
    ];
    println!(
        "{tries} failed checks each; bcrypt costs {} (alice) and {} (prometheus)",
        costs.0, costs.1
    );
    println!("| case | p25 ms | median ms | p75 ms |\n|---|---|---|---|");
    for (name, user) in cases {
        let (a, m, b) = quartiles(time(user));
        println!("| {name} | {a:.1} | {m:.1} | {b:.1} |");
    }
    let old: Vec<Duration> = (0..tries)
        .map(|_| {
            let start = Instant::now();
            let _ = bcrypt::verify("wrong", &cheap);
            start.elapsed()
        })
        .collect();
    let (a, m, b) = quartiles(old);
    println!("| the replaced rule: unknown user checked against the first user's hash | {a:.1} | {m:.1} | {b:.1} |");
}

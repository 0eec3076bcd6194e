//! `pvrdma-doctor watch --demo` against the demo's simulated ESXi hosts (real SSH on
//! 127.0.0.1): a scenario directory read again every round lets the test change a host
//! between rounds, as an admin turning a firewall ruleset off would.
use crate::support::client::Doctor;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(180);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scenario directory: a copy of samples/healthy-cluster (esx01, esx02).
fn healthy_scenario() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for host in ["esx01", "esx02"] {
        let to = dir.path().join(host);
        std::fs::create_dir_all(&to).expect("mkdir");
        for f in std::fs::read_dir(root().join("samples/healthy-cluster").join(host))
            .expect("sample")
            .flatten()
        {
            std::fs::copy(f.path(), to.join(f.file_name())).expect("copy");
        }
    }
    dir
}

/// Turns the `pvrdma` firewall ruleset of `host` off (the ruleset list of the sample
/// whose ruleset is disabled), replacing the file atomically as an editor would.
fn disable_ruleset(scenario: &Path, host: &str) {
    let file = "esxcli_network_firewall_ruleset_list.txt";
    let disabled = root().join("samples/firewall-pvrdma-disabled/esx01").join(file);
    let tmp = scenario.join(host).join("ruleset.tmp");
    std::fs::copy(disabled, &tmp).expect("copy");
    std::fs::rename(&tmp, scenario.join(host).join(file)).expect("rename");
}

struct Watch {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Watch {
    fn start(args: &[&str]) -> Watch {
        let mut child = Doctor::new()
            .arg("watch")
            .args(args)
            // The width lines wrap at when stdout is not a terminal.
            .env("COLUMNS", "100")
            .command()
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start watch");
        let out = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Watch {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Reads lines until one satisfies `want`; fails the test after [`LIMIT`].
    fn until(&mut self, want: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let left = LIMIT.checked_sub(started.elapsed()).unwrap_or_default();
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if want(&line) {
                        return line;
                    }
                }
                Err(_) => {
                    let _ = self.child.kill();
                    panic!("no such line within {LIMIT:?}; got:\n{}", self.seen.join("\n"));
                }
            }
        }
    }

    /// Waits for the end; returns the exit code and every line printed.
    fn finish(mut self) -> (i32, Vec<String>, String) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                self.seen.extend(self.lines.iter());
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                return (status.code().unwrap_or(-1), std::mem::take(&mut self.seen), err);
            }
            if started.elapsed() > LIMIT {
                let _ = self.child.kill();
                panic!("watch did not end within {LIMIT:?}:\n{}", self.seen.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A watch left running by a failing test (an endless `--interval 100ms`) would load
/// every test after it: it goes with the test.
impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `2026-11-25T14:31:05Z ...`: a line that starts with an RFC 3339 UTC time.
fn timestamped(line: &str) -> Option<&str> {
    let (time, rest) = line.split_once(' ')?;
    humantime::parse_rfc3339(time).ok()?;
    Some(rest)
}

#[test]
fn a_ruleset_disabled_between_rounds_gives_exactly_one_change_line() {
    let scenario = healthy_scenario();
    let dir = scenario.path().to_str().expect("utf-8");
    let mut w = Watch::start(&["--demo", "--scenario", dir, "--interval", "3s", "--count", "4"]);
    // The full report first, then the line saying what comes next.
    w.until(|l| l.starts_with("2 hosts: 2 healthy"));
    w.until(|l| timestamped(l).is_some_and(|r| r.starts_with("watching 2 simulated hosts every 3s for 4 rounds")));
    let before = w.seen.len();
    disable_ruleset(scenario.path(), "esx02");
    let (code, lines, err) = w.finish();
    // A round longer than the interval says so on a line of its own (a loaded machine):
    // not a change.
    let after: Vec<&String> = lines[before..]
        .iter()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| !timestamped(l).is_some_and(|r| r.starts_with("round ")))
        .collect();
    let changes: Vec<&str> = after.iter().filter_map(|l| timestamped(l)).collect();
    assert_eq!(changes.len(), 1, "one change, one entry:\n{}", lines.join("\n"));
    // The change says why (the check's summary, wrapped under it) and the fix, whole on
    // its own line.
    assert!(
        changes[0].starts_with("esx02: check firewall-pvrdma: pass → fail (host ok → problems): the firewall"),
        "{}",
        lines.join("\n")
    );
    let told: String = after.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
    assert!(
        told.contains("its pvrdma ruleset is disabled (the ESXi 8.0 default): PVRDMA traffic is blocked"),
        "{told}"
    );
    assert_eq!(
        after.last().map(|l| l.trim()),
        Some("run: esxcli network firewall ruleset set -e true -r pvrdma"),
        "{}",
        lines.join("\n")
    );
    // The last report has a failing check: the documented code 1.
    assert_eq!(code, 1, "{err}");
}

#[test]
fn until_change_exits_with_the_code_of_the_changed_report_as_json_lines() {
    let scenario = healthy_scenario();
    let dir = scenario.path().to_str().expect("utf-8");
    let mut w = Watch::start(&[
        "--demo",
        "--scenario",
        dir,
        "--interval",
        "1s",
        "--until-change",
        "--format",
        "json",
    ]);
    w.until(|l| l.starts_with(r#"{"event":"report""#));
    // A round without change first: the heartbeat says so.
    w.until(|l| l.starts_with(r#"{"event":"round""#));
    disable_ruleset(scenario.path(), "esx01");
    let (code, lines, err) = w.finish();
    assert_eq!(code, 1, "the changed report has a failing check: {err}");
    let events: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    for e in &events {
        assert!(
            e["time"].as_str().is_some_and(|t| humantime::parse_rfc3339(t).is_ok()),
            "{e}"
        );
        assert!(e["round"].as_u64().is_some(), "{e}");
    }
    let report = &events[0];
    assert_eq!(report["event"], "report");
    assert_eq!(report["report"]["schema"], "pvrdma-doctor/report/v1");
    assert_eq!(report["report"]["exit_code"], 0);
    let changes: Vec<&serde_json::Value> = events.iter().filter(|e| e["event"] == "change").collect();
    let flat: Vec<String> = changes
        .iter()
        .map(|c| format!("{} {} {} {}->{}", c["host"], c["kind"], c["id"], c["from"], c["to"]))
        .collect();
    assert_eq!(
        flat,
        [
            r#""esx01" "host" "status" "ok"->"problems""#,
            r#""esx01" "check" "firewall-pvrdma" "pass"->"fail""#,
        ]
    );
    // Each change carries why it is so now and the fix (null where there is none).
    assert_eq!(
        changes[0]["reason"],
        serde_json::Value::Null,
        "a reachable host has no error"
    );
    assert_eq!(changes[0]["remedy"], serde_json::Value::Null);
    let check = changes[1];
    assert!(
        check["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("the firewall is enabled and its pvrdma ruleset is disabled")),
        "{check}"
    );
    assert_eq!(check["remedy"], "esxcli network firewall ruleset set -e true -r pvrdma");
    assert_eq!(
        check["remediation"]["command"],
        "esxcli network firewall ruleset set -e true -r pvrdma"
    );
    let last = events.last().expect("events");
    assert_eq!(last["event"], "stop");
    assert_eq!(last["reason"], "until-change");
    assert_eq!(last["exit_code"], 1);
    // Nothing was reported twice: the change round is the last round.
    assert_eq!(changes[0]["round"], last["round"]);
}

#[test]
fn ctrl_c_exits_130_and_a_slow_round_says_so() {
    // Each command answers after 300 ms: a round cannot fit a 100 ms interval.
    let mut w = Watch::start(&["--demo", "--latency", "300ms", "--interval", "100ms"]);
    let overrun = w.until(|l| timestamped(l).is_some_and(|r| r.starts_with("round 1 took")));
    assert!(
        overrun.ends_with("longer than --interval 100ms; the next round starts now"),
        "{overrun}"
    );
    let status = Command::new("kill")
        .args(["-INT", &w.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let (code, lines, err) = w.finish();
    assert_eq!(code, 130, "{}\n{err}", lines.join("\n"));
    assert!(err.contains("pvrdma-doctor: interrupted"), "{err}");

    // Between rounds (an hour to wait): Ctrl-C ends the wait at once.
    let mut w = Watch::start(&["--demo", "--interval", "1h"]);
    w.until(|l| timestamped(l).is_some_and(|r| r.starts_with("watching 3 simulated hosts every 1h until Ctrl-C")));
    let status = Command::new("kill")
        .args(["-INT", &w.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let (code, _, err) = w.finish();
    // The first line says the hosts are simulated; then only the interruption.
    let (intro, rest) = err.trim().split_once('\n').unwrap_or_default();
    assert!(
        intro.starts_with("pvrdma-doctor: watch --demo: 3 simulated ESXi hosts"),
        "{err}"
    );
    assert_eq!((code, rest), (130, "pvrdma-doctor: interrupted after round 1"));
}

/// Sends `signal` (`-TERM`, `-INT`) to the watch.
fn send(w: &Watch, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &w.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

#[test]
fn sigterm_ends_the_watch_after_its_round_with_a_stop_event_and_exit_0() {
    // Between rounds (an hour to wait): a `stop` event at once, exit 0.
    let mut w = Watch::start(&["--demo", "--interval", "1h", "--format", "json"]);
    // Ready: the first round is reported, the watch waits for the next.
    w.until(|l| l.starts_with(r#"{"event":"report""#));
    send(&w, "-TERM");
    let (code, lines, err) = w.finish();
    assert_eq!(code, 0, "{}\n{err}", lines.join("\n"));
    let last: serde_json::Value = serde_json::from_str(lines.last().expect("lines")).expect("JSON");
    assert_eq!(last["event"], "stop", "{last}");
    assert_eq!(last["reason"], "terminated");
    assert_eq!(last["exit_code"], 0);
    assert_eq!(last["round"], 1);

    // During a round (each command answers after 300 ms, the rounds run back to back):
    // the round in progress finishes and is reported, then the watch stops.
    let mut w = Watch::start(&[
        "--demo",
        "--latency",
        "300ms",
        "--interval",
        "100ms",
        "--format",
        "json",
    ]);
    // Ready: round 1 is over and round 2 has started at once.
    w.until(|l| l.starts_with(r#"{"event":"overrun""#));
    send(&w, "-TERM");
    let (code, lines, err) = w.finish();
    assert_eq!(code, 0, "{}\n{err}", lines.join("\n"));
    let events: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let stop = events.last().expect("events");
    assert_eq!(
        (&stop["event"], &stop["reason"]),
        (&"stop".into(), &"terminated".into()),
        "{stop}"
    );
    let round = stop["round"].as_u64().expect("round");
    assert!(round >= 2, "{stop}");
    assert!(
        events.iter().any(|e| e["event"] == "round" && e["round"] == round),
        "round {round} was finished and reported before the stop:\n{}",
        lines.join("\n")
    );

    // The human format: a timestamped stop line on stdout.
    let mut w = Watch::start(&["--demo", "--interval", "1h"]);
    w.until(|l| timestamped(l).is_some_and(|r| r.starts_with("watching 3 simulated hosts every 1h")));
    send(&w, "-TERM");
    let (code, lines, err) = w.finish();
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines.last().and_then(|l| timestamped(l)),
        Some("stopped by SIGTERM after round 1"),
        "{}",
        lines.join("\n")
    );
}

/// A host whose SSH port is closed in the scenario is simulated (as refusing): no warning
/// that it is not, round after round. A host the directory adds later cannot be served:
/// said once, not every round.
#[test]
fn a_closed_host_draws_no_warning_and_an_added_host_one() {
    let scenario = healthy_scenario();
    let copy = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to).expect("mkdir");
        for f in std::fs::read_dir(from).expect("read").flatten() {
            std::fs::copy(f.path(), to.join(f.file_name())).expect("copy");
        }
    };
    copy(
        &root().join("samples/esxi80-mixed-fleet/esx03"),
        &scenario.path().join("esx03"),
    );
    let dir = scenario.path().to_str().expect("utf-8");
    let mut w = Watch::start(&["--demo", "--scenario", dir, "--interval", "1s", "--count", "4"]);
    w.until(|l| timestamped(l).is_some_and(|r| r.starts_with("watching 3 simulated hosts every 1s for 4 rounds")));
    copy(
        &root().join("samples/healthy-cluster/esx01"),
        &scenario.path().join("esx04"),
    );
    let (code, lines, err) = w.finish();
    assert_eq!(code, 3, "esx03 stays unreachable:\n{}\n{err}", lines.join("\n"));
    assert!(!err.contains("esx03"), "no warning for the closed host:\n{err}");
    assert_eq!(err.matches("esx04 not served").count(), 1, "said once:\n{err}");
}

//! `--format nagios` against its real consumers: Icinga 2's own performance-data parser
//! reads every item the plugin prints for every sample scenario and the simulated hosts,
//! `icinga2 daemon -C` validates the shipped CheckCommand, and a real Icinga 2 daemon runs
//! the check on the demo's simulated hosts. Every state of the plugin exit-code table is
//! reached by the binary: OK, WARNING, CRITICAL, UNKNOWN for an unreachable host, an
//! incomplete one, the plugin's own timeout, bad arguments, an error and a panic.
//!
//! Needs `icinga2` (Debian package icinga2-bin; `scripts/install-test-deps.sh`).
use crate::support::client::Doctor;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const ICINGA2: &str = "/usr/sbin/icinga2";

fn bin() -> PathBuf {
    Doctor::binary()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn require_icinga2() {
    assert!(
        Path::new(ICINGA2).is_file(),
        "{ICINGA2} is missing: run `sudo scripts/install-test-deps.sh` (it installs icinga2-bin)"
    );
}

/// Runs the plugin, killed after `limit` (a hung plugin fails the test, it does not hang it).
fn plugin(args: &[&str], limit: Duration) -> Output {
    Doctor::new().args(args).timeout(limit).output()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Checks the plugin contract of one run and returns (exit code, status line, perfdata).
fn contract(o: &Output) -> (i32, String, String) {
    let text = stdout(o);
    let code = o.status.code().expect("exited");
    assert!((0..=3).contains(&code), "exit {code}: {text}");
    assert!(
        o.stderr.is_empty(),
        "stderr must stay empty: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let word = ["OK", "WARNING", "CRITICAL", "UNKNOWN"][code as usize];
    let first = text.lines().next().unwrap_or_default().to_string();
    assert!(
        first.starts_with(&format!("PVRDMA {word} - ")),
        "exit {code} but: {first}"
    );
    let (status, perf) = first.split_once(" | ").unwrap_or((&first, ""));
    assert!(
        status.chars().count() <= 80,
        "status line too long for a pager: {status}"
    );
    (code, status.to_string(), perf.to_string())
}

/// Splits performance data as Icinga 2 does (`PluginUtility::SplitPerfdata`): items are
/// separated by spaces, a quoted label may hold spaces.
fn split_perfdata(perf: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut rest = perf.trim();
    while !rest.is_empty() {
        let label_end = if let Some(quoted) = rest.strip_prefix('\'') {
            quoted.find('\'').map_or(rest.len(), |i| i + 2)
        } else {
            0
        };
        let end = rest[label_end..].find(' ').map_or(rest.len(), |i| label_end + i);
        items.push(rest[..end].to_string());
        rest = rest[end..].trim_start();
    }
    items
}

/// Icinga 2's own parser on every item (one `icinga2 console` run, no daemon): returns
/// its result per item, failing the test on any item it rejects.
fn icinga_parse(items: &[String]) -> Vec<serde_json::Value> {
    for item in items {
        assert!(!item.contains('"') && !item.contains('\\'), "cannot quote {item}");
    }
    let expr = format!(
        "[{}]",
        items
            .iter()
            .map(|i| format!("parse_performance_data(\"{i}\")"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let out = Command::new(ICINGA2)
        .args(["console", "--eval", &expr])
        .output()
        .expect("run icinga2 console");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "icinga2 rejected the performance data: {}{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    let parsed: Vec<serde_json::Value> = serde_json::from_str(text.trim()).expect("icinga2 prints JSON");
    assert_eq!(parsed.len(), items.len());
    parsed
}

/// Every item Icinga read back has the label and value we printed, and our UOMs.
fn check_round_trip(items: &[String], parsed: &[serde_json::Value]) {
    for (item, p) in items.iter().zip(parsed) {
        let (label, rest) = item.split_once('=').expect("label=value");
        let label = label.trim_matches('\'');
        assert_eq!(p["label"], label, "{item}: {p}");
        let value = rest.split(';').next().unwrap_or_default();
        let (number, unit) = match value.strip_suffix('s') {
            Some(n) => (n, "seconds"),
            None => (value, ""),
        };
        let number: f64 = number.parse().expect("a number");
        assert_eq!(p["value"].as_f64(), Some(number), "{item}: {p}");
        assert_eq!(p["unit"], unit, "{item}: {p}");
        assert_eq!(p["min"].as_f64(), Some(0.0), "{item}: {p}");
    }
}

#[test]
#[ignore = "needs Icinga 2: scripts/test.sh runs it"]
fn icinga2_parses_every_performance_data_item_of_every_sample_and_the_demo() {
    require_icinga2();
    let mut items = Vec::new();
    let mut states = std::collections::BTreeSet::new();
    let mut runs = 0;
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("samples"))
        .expect("samples")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in &dirs {
        let o = plugin(
            &["analyze", dir.to_str().expect("utf-8 path"), "--format", "nagios"],
            Duration::from_secs(60),
        );
        let (code, status, perf) = contract(&o);
        runs += 1;
        if perf.is_empty() {
            // Not a capture at all (e.g. a folder of raw outputs): an UNKNOWN line.
            assert_eq!(code, 3, "{}: {status}", dir.display());
            continue;
        }
        states.insert(code);
        items.extend(split_perfdata(&perf));
    }
    // The simulated hosts over SSH, as `pvrdma-doctor demo --format nagios` shows them.
    let o = plugin(&["--format", "nagios", "demo"], Duration::from_secs(120));
    let (_, _, perf) = contract(&o);
    items.extend(split_perfdata(&perf));
    assert!(runs > 20, "only {runs} samples");
    assert_eq!(
        states.into_iter().collect::<Vec<_>>(),
        [0, 1, 2, 3],
        "the samples cover every state"
    );
    let parsed = icinga_parse(&items);
    check_round_trip(&items, &parsed);
    // The parser is strict enough to fail this test: it refuses what the guidelines allow
    // but Icinga does not (a `U` value, a decimal comma).
    let refused = Command::new(ICINGA2)
        .args(["console", "--eval", "parse_performance_data(\"'x'=U;;0\")"])
        .output()
        .expect("run icinga2");
    assert!(!refused.status.success());
}

/// A running Icinga 2 daemon in a process group of its own. The daemon forks its worker
/// (and the worker its check runner), which outlive a kill of the process started: the
/// whole group goes when this is dropped, a failing test included.
struct Daemon(std::process::Child);

impl Daemon {
    fn start(mut command: Command) -> Daemon {
        use std::os::unix::process::CommandExt;
        let child = command
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start icinga2");
        Daemon(child)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.0.wait();
    }
}

/// A throwaway Icinga 2 configuration directory: the daemon runs as the current user with
/// every state, cache, log and spool path inside it.
struct IcingaDir {
    dir: tempfile::TempDir,
}

impl IcingaDir {
    fn new() -> IcingaDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["cache", "log", "data", "spool/tmp", "run"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        IcingaDir { dir }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    fn command(&self, conf: &str) -> Command {
        let file = self.path("icinga2.conf");
        std::fs::write(&file, conf).expect("write icinga2.conf");
        let user = String::from_utf8_lossy(&Command::new("id").arg("-un").output().expect("id").stdout)
            .trim()
            .to_string();
        let group = String::from_utf8_lossy(&Command::new("id").arg("-gn").output().expect("id").stdout)
            .trim()
            .to_string();
        let mut c = Command::new(ICINGA2);
        c.arg("daemon").arg("-c").arg(&file);
        for (name, sub) in [
            ("ConfigDir", ""),
            ("CacheDir", "cache"),
            ("LogDir", "log"),
            ("DataDir", "data"),
            ("SpoolDir", "spool"),
            ("InitRunDir", "run"),
        ] {
            c.arg(format!("-D{name}={}", self.path(sub).display()));
        }
        c.arg(format!("-DRunAsUser={user}"))
            .arg(format!("-DRunAsGroup={group}"));
        c
    }
}

fn shipped_conf() -> String {
    root().join("contrib/icinga2/pvrdma-doctor.conf").display().to_string()
}

#[test]
#[ignore = "needs Icinga 2: scripts/test.sh runs it"]
fn icinga2_validates_the_shipped_check_command() {
    require_icinga2();
    let ic = IcingaDir::new();
    let conf = format!(
        r#"include "{}"
object CheckCommand "dummy" {{ command = [ "/bin/true" ] }}
object Host "esx-cluster-a" {{
  check_command = "dummy"
  address = "esx01"
}}
object Service "pvrdma" {{
  host_name = "esx-cluster-a"
  check_command = "pvrdma-doctor"
  vars.pvrdma_hosts = [ "esx[01-16]", "esx20" ]
  vars.pvrdma_user = "root"
  vars.pvrdma_identity = [ "/var/lib/nagios/.ssh/id_ecdsa" ]
  vars.pvrdma_ssh_options = [ "UserKnownHostsFile=/var/lib/nagios/.ssh/known_hosts" ]
  vars.pvrdma_timeout = "50s"
  vars.pvrdma_warning = "0"
  vars.pvrdma_critical = "2"
  vars.pvrdma_unreachable_state = "critical"
}}
"#,
        shipped_conf()
    );
    let out = ic.command(&conf).arg("-C").output().expect("run icinga2 -C");
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "icinga2 -C refused the CheckCommand:\n{log}");
    assert!(log.contains("Instantiated 2 CheckCommands"), "{log}");
    // The same check without the shipped file is refused: -C does resolve references.
    let without = conf.replace(&format!("include \"{}\"", shipped_conf()), "");
    let out = ic.command(&without).arg("-C").output().expect("run icinga2 -C");
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

/// The README's Icinga snippet, run for real: an Icinga 2 daemon schedules the shipped
/// CheckCommand against the demo's simulated hosts, and its perfdata writer records the
/// state and the performance data it parsed.
#[test]
#[ignore = "needs Icinga 2: scripts/test.sh runs it"]
fn icinga2_runs_the_check_on_the_demo_hosts() {
    require_icinga2();
    let ic = IcingaDir::new();
    let perfdata = ic.path("spool/service-perfdata");
    let conf = format!(
        r#"const PvrdmaDoctorBin = "{bin}"
include "{conf}"
object IcingaApplication "app" {{ }}
object CheckerComponent "checker" {{ }}
object PerfdataWriter "perfdata" {{
  service_perfdata_path = "{perf}"
  service_temp_path = "{tmp}/service-perfdata"
  host_perfdata_path = "{tmp}/../host-perfdata"
  host_temp_path = "{tmp}/host-perfdata"
  rotation_interval = 1s
}}
object CheckCommand "dummy" {{ command = [ "/bin/true" ] }}
object Host "demo-cluster" {{
  check_command = "dummy"
  /* pvrdma_hosts defaults to it; with pvrdma_demo the demo's own hosts are checked. */
  address = "127.0.0.1"
  enable_active_checks = false
}}
object Service "pvrdma" {{
  host_name = "demo-cluster"
  check_command = "pvrdma-doctor"
  vars.pvrdma_demo = true
  vars.pvrdma_timeout = "50s"
  check_interval = 1s
  retry_interval = 1s
}}
"#,
        bin = bin().display(),
        conf = shipped_conf(),
        perf = perfdata.display(),
        tmp = ic.path("spool/tmp").display(),
    );
    let daemon = Daemon::start(ic.command(&conf));
    let started = Instant::now();
    let mut record = String::new();
    while started.elapsed() < Duration::from_secs(120) {
        // Rotated files are named service-perfdata.<timestamp>.
        for entry in std::fs::read_dir(ic.path("spool")).expect("spool").flatten() {
            if entry.file_name().to_string_lossy().starts_with("service-perfdata") {
                let mut text = String::new();
                if let Ok(mut f) = std::fs::File::open(entry.path()) {
                    let _ = f.read_to_string(&mut text);
                }
                if let Some(line) = text.lines().find(|l| l.contains("SERVICESTATE::")) {
                    record = line.to_string();
                }
            }
        }
        if !record.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(daemon);
    assert!(!record.is_empty(), "Icinga 2 recorded no check result within 120 s");
    // The demo has an adapter in TCP fallback (esx02) and a closed host (esx03).
    assert!(record.contains("SERVICESTATE::CRITICAL"), "{record}");
    assert!(record.contains("SERVICECHECKCOMMAND::pvrdma-doctor"), "{record}");
    assert!(record.contains("adapters_tcp_fallback=1;;0;0;2"), "{record}");
    assert!(record.contains("hosts_unreachable=1;;;0;3"), "{record}");
}

/// A scenario with one healthy host and one whose SSH port is closed.
fn healthy_and_closed() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to).expect("mkdir");
        for f in std::fs::read_dir(from).expect("read").flatten() {
            std::fs::copy(f.path(), to.join(f.file_name())).expect("copy");
        }
    };
    copy(&root().join("samples/healthy-cluster/esx01"), &dir.path().join("esx01"));
    copy(
        &root().join("samples/esxi80-mixed-fleet/esx03"),
        &dir.path().join("esx03"),
    );
    dir
}

#[test]
fn every_state_of_the_exit_code_table() {
    let limit = Duration::from_secs(120);
    let sample = |name: &str| root().join("samples").join(name).display().to_string();
    // OK, WARNING, UNKNOWN (incomplete) over samples.
    let o = plugin(&["analyze", &sample("healthy-cluster"), "--format", "nagios"], limit);
    assert_eq!(contract(&o).0, 0);
    let o = plugin(&["analyze", &sample("lossless-network-off"), "--format=nagios"], limit);
    let (code, status, _) = contract(&o);
    assert_eq!(
        (code, status.as_str()),
        (1, "PVRDMA WARNING - esx01: lossless-network warning")
    );
    let o = plugin(
        &["--format", "nagios", "analyze", &sample("vsish-listing-failed")],
        limit,
    );
    assert_eq!(contract(&o).0, 3);
    // CRITICAL over the simulated hosts: the culprit first, the host and its failing
    // check (the fallback's cause), whole; the fallback's line says what decided it.
    for thresholds in [&[][..], &["-c", "1"]] {
        let mut args = vec!["--format", "nagios"];
        args.extend_from_slice(thresholds);
        args.push("demo");
        let o = plugin(&args, limit);
        let (code, status, _) = contract(&o);
        assert_eq!(code, 2, "{args:?}");
        assert_eq!(
            status, "PVRDMA CRITICAL - esx02: firewall-pvrdma failing; +2 more problems",
            "{args:?}"
        );
        let out = stdout(&o);
        assert!(out.contains("\n[UNKNOWN] esx03: unreachable: "), "{out}");
        assert!(
            out.contains(
                "esx02 hpc-node02#0: tcp-fallback (vsish `Physical HCA available:0`): host check firewall-pvrdma fails: "
            ),
            "{out}"
        );
    }

    // UNKNOWN for a simulated host with SSH closed, CRITICAL when the site says so.
    let scenario = healthy_and_closed();
    let dir = scenario.path().to_str().expect("utf-8");
    let o = plugin(&["--format", "nagios", "demo", "--scenario", dir], limit);
    let (code, status, _) = contract(&o);
    assert_eq!((code, status.as_str()), (3, "PVRDMA UNKNOWN - esx03: unreachable"));
    let o = plugin(
        &[
            "--format",
            "nagios",
            "demo",
            "--scenario",
            dir,
            "--unreachable-state",
            "critical",
        ],
        limit,
    );
    assert_eq!(contract(&o).0, 2);

    // The plugin's own timeout: UNKNOWN, naming the stage, and the process ends by itself.
    let o = plugin(
        &[
            "--format",
            "nagios",
            "demo",
            "--scenario",
            dir,
            "--latency",
            "600s",
            "--timeout",
            "10s",
        ],
        limit,
    );
    let (code, status, _) = contract(&o);
    assert_eq!(code, 3, "{}", stdout(&o));
    // 10 s: the simulated hosts are up and logged in to long before, on a loaded machine too.
    assert!(
        status.starts_with("PVRDMA UNKNOWN - timed out after 10s (while running commands on esx01)"),
        "{status}"
    );

    // Bad arguments, clap's own errors included: UNKNOWN on stdout, never 2.
    for args in [
        &["--format", "nagios", "--no-such-option"][..],
        &["--format=nagios", "-w", "1,5", "analyze", "x"],
        &["--format", "nagios", "--unreachable-state", "maybe", "esx01"],
        &["--format", "nagios", "watch", "--demo"],
        &["--format", "nagios"],
    ] {
        let o = plugin(args, limit);
        let (code, status, _) = contract(&o);
        assert_eq!(code, 3, "{args:?}: {status}");
        assert!(status.starts_with("PVRDMA UNKNOWN - "), "{args:?}: {status}");
    }
    // --help is UNKNOWN too, as the guidelines ask.
    let o = plugin(&["--format", "nagios", "--help"], limit);
    assert_eq!(o.status.code(), Some(3));
    assert!(stdout(&o).contains("Usage:"));
    // Without the plugin format, a usage error keeps today's code.
    let o = plugin(&["--no-such-option"], limit);
    assert_eq!(o.status.code(), Some(2));

    // An error of the run: UNKNOWN with the reason on one line.
    let taken = tempfile::tempdir().expect("tempdir");
    let bundle = taken.path().join("b.tar.gz");
    std::fs::write(&bundle, "x").expect("write");
    let o = plugin(
        &[
            "--format",
            "nagios",
            "demo",
            "--bundle",
            bundle.to_str().expect("utf-8"),
        ],
        limit,
    );
    let (code, status, _) = contract(&o);
    assert_eq!(code, 3);
    assert!(status.contains("exists"), "{status}");
}

/// The watchdog: a run stuck where no host timeout applies (here, reading the host list
/// from a stdin that never ends) is ended at --timeout with the stage it was in.
#[test]
fn the_watchdog_ends_a_stuck_run_at_the_timeout() {
    let mut child = Doctor::new()
        .args(["--format", "nagios", "--timeout", "2s", "-"])
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let stdin = child.stdin.take();
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the plugin did not end by itself"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(stdin);
    let o = child.wait_with_output().expect("output");
    let (code, status, _) = contract(&o);
    assert_eq!(code, 3);
    assert!(
        status.starts_with("PVRDMA UNKNOWN - plugin timed out after 2s (--timeout) while collecting"),
        "{status}"
    );
}

/// The watchdog firing while `--ask-password` waits at its prompt (in a real terminal:
/// the prompt reads it) names that wait, not a stage the run never reached or left.
#[test]
#[ignore = "needs tmux: scripts/test.sh runs it"]
fn the_watchdog_names_the_password_prompt_it_found_the_run_waiting_at() {
    let pane = crate::tmux::in_80_columns(&["--format", "nagios", "--timeout", "2s", "--ask-password", "esx01"]);
    assert!(pane.contains("Password for the ESXi hosts (not echoed): "), "{pane}");
    let status = pane
        .lines()
        .find_map(|l| l.find("PVRDMA ").map(|at| &l[at..]))
        .unwrap_or_else(|| panic!("no status line: {pane}"));
    let reason = "plugin timed out after 2s (--timeout) while waiting at the --ask-password prompt";
    assert!(
        status.starts_with("PVRDMA UNKNOWN - plugin timed out after 2s (--timeout) while waiting at the"),
        "{pane}"
    );
    // The status line is cut at 80 columns; the whole reason follows as long output.
    assert!(pane.contains(reason), "{pane}");
    assert_eq!(crate::tmux::exit_code(&pane), "3", "{pane}");
}

/// A panic: the test binary runs itself as the child, as the plugin with a job that panics.
#[test]
fn a_panic_is_an_unknown_line_without_a_traceback() {
    if std::env::var_os("PVRDMA_TEST_PANIC_CHILD").is_some() {
        let args = ["pvrdma-doctor", "analyze", "DIR", "--format", "nagios"].map(std::ffi::OsString::from);
        let code = pvrdma_doctor::plugin::main(args.to_vec(), |_, _| panic!("a simulated bug"));
        std::process::exit(i32::from(code));
    }
    let o = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "nagios::a_panic_is_an_unknown_line_without_a_traceback",
            "--exact",
            "--nocapture",
        ])
        .env("PVRDMA_TEST_PANIC_CHILD", "1")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("run the child");
    assert_eq!(o.status.code(), Some(3));
    let out = stdout(&o);
    let line = out.lines().find(|l| l.starts_with("PVRDMA ")).expect("a status line");
    assert_eq!(line, "PVRDMA UNKNOWN - internal error: a simulated bug");
    assert!(
        out.contains("\npvrdma-doctor failed at tests/suite/nagios.rs:"),
        "{out}"
    );
    let all = format!("{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        !all.contains("panicked at") && !all.contains("stack backtrace"),
        "{all}"
    );
}

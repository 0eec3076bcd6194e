//! `--format prometheus` and `--output` against the real consumers: promtool (package
//! `prometheus`) lints every exposition the samples and the demo's simulated hosts give
//! and the shipped alerting rules (tests/suite/alerting.rs runs them); node_exporter (package
//! `prometheus-node-exporter`) reads what `--output` writes into its textfile directory,
//! also while it is being rewritten. Both are installed by scripts/install-test-deps.sh;
//! no system service is used: node_exporter is started here, on 127.0.0.1.
use crate::support;
use crate::support::client::Doctor;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

pub(crate) use crate::support::promtool::PROMTOOL;
const NODE_EXPORTER: &str = "/usr/bin/prometheus-node-exporter";

/// Fails (never skips) when a real component is missing, saying how to install it.
pub(crate) fn require(tool: &str) {
    assert!(
        Path::new(tool).is_file(),
        "{tool} is missing: run `sudo scripts/install-test-deps.sh` first (it installs the Debian packages prometheus and prometheus-node-exporter)"
    );
}

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every scenario folder under samples/.
fn scenarios() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("samples"))
        .expect("samples/")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() > 20, "{names:?}");
    names
}

/// `pvrdma-doctor ARGS`: (stdout, exit code), with a bound on the run.
pub(crate) fn doctor(args: &[&str]) -> (String, i32, String) {
    let out = Doctor::new()
        .args(args)
        .env_remove("NO_COLOR")
        .timeout(Duration::from_secs(120))
        .output();
    (
        String::from_utf8(out.stdout).expect("utf-8"),
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn analyze(scenario: &str) -> String {
    let path = root().join("samples").join(scenario);
    let (text, code, stderr) = doctor(&["analyze", "--format", "prometheus", path.to_str().unwrap()]);
    assert!([0, 1, 3].contains(&code), "{scenario}: exit {code}: {stderr}");
    assert!(stderr.is_empty(), "{scenario}: {stderr}");
    text
}

pub(crate) use crate::support::promtool::{
    assert_accepts as assert_promtool_accepts, check_metrics as promtool_check_metrics,
};

#[test]
#[ignore = "needs promtool: scripts/test.sh runs it"]
fn promtool_accepts_every_sample_scenario_without_a_remark() {
    require(PROMTOOL);
    for scenario in scenarios() {
        let text = analyze(&scenario);
        assert!(text.contains("\npvrdma_host_up"), "{scenario}:\n{text}");
        assert_promtool_accepts(&scenario, &text);
    }
    // The check is not a rubber stamp: a metric written twice is refused.
    let text = analyze("healthy-cluster");
    let (code, said) = promtool_check_metrics(&format!("{text}{text}"));
    assert_ne!(code, 0, "promtool accepted a repeated metric: {said}");
}

#[test]
#[ignore = "needs promtool: scripts/test.sh runs it"]
fn promtool_accepts_the_demo_hosts_with_and_without_the_probe() {
    require(PROMTOOL);
    for extra in [&[][..], &["--probe"][..]] {
        let mut args = vec!["demo", "--no-progress", "--timeout", "90s", "--format", "prometheus"];
        args.extend_from_slice(extra);
        let (text, code, stderr) = doctor(&args);
        assert_eq!(code, 0, "{args:?}: the demo finds what it planted: {stderr}");
        assert_promtool_accepts(&format!("{args:?}"), &text);
        // A live run states its own finish time and duration.
        let series = parse(&text);
        let finished = value(&series, "pvrdma_last_run_timestamp_seconds", &[]);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(now - finished >= 0.0 && now - finished < 300.0, "{finished} vs {now}");
        assert!(value(&series, "pvrdma_run_duration_seconds", &[]) > 0.0);
        if extra.is_empty() {
            assert!(!text.contains("pvrdma_probe_pair_status"), "{text}");
        } else {
            assert!(text.contains("# TYPE pvrdma_probe_pair_status gauge"), "{text}");
        }
    }
}

/// One sample line: metric name, labels, value.
pub(crate) type Sample = (String, BTreeMap<String, String>, f64);

/// The samples of an exposition (comments skipped), label values unescaped.
pub(crate) fn parse(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let name_end = line.find(['{', ' ']).expect("a name");
        let name = line[..name_end].to_string();
        let mut labels = BTreeMap::new();
        let mut rest = &line[name_end..];
        if let Some(inner) = rest.strip_prefix('{') {
            let mut chars = inner.char_indices();
            let mut key = String::new();
            loop {
                let (i, c) = chars.next().expect("labels end");
                match c {
                    '}' => {
                        rest = &inner[i + 1..];
                        break;
                    }
                    ',' => {}
                    '=' => {
                        assert_eq!(chars.next().map(|x| x.1), Some('"'), "{line}");
                        let mut v = String::new();
                        loop {
                            match chars.next().expect("value ends").1 {
                                '"' => break,
                                '\\' => match chars.next().expect("escape").1 {
                                    'n' => v.push('\n'),
                                    other => v.push(other),
                                },
                                other => v.push(other),
                            }
                        }
                        labels.insert(std::mem::take(&mut key), v);
                    }
                    other => key.push(other),
                }
            }
        }
        let value: f64 = rest.trim().parse().unwrap_or_else(|_| panic!("value of {line}"));
        out.push((name, labels, value));
    }
    out
}

fn value(series: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    let want: BTreeMap<String, String> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    series
        .iter()
        .find(|(n, l, _)| n == name && *l == want)
        .unwrap_or_else(|| panic!("no {name}{labels:?}"))
        .2
}

/// Series (name, labels) with the bits of their value.
type SeriesSet = BTreeSet<(String, Vec<(String, String)>, u64)>;

/// The pvrdma series (name and labels) with their values, the run's times left out (they
/// change with every run).
fn pvrdma_series(series: &[Sample]) -> SeriesSet {
    series
        .iter()
        .filter(|(n, _, _)| n.starts_with("pvrdma_"))
        .filter(|(n, _, _)| n != "pvrdma_last_run_timestamp_seconds" && n != "pvrdma_run_duration_seconds")
        .map(|(n, l, v)| (n.clone(), l.clone().into_iter().collect(), v.to_bits()))
        .collect()
}

/// node_exporter on 127.0.0.1 with only the textfile collector; killed on drop.
pub(crate) struct NodeExporter {
    child: Child,
    pub(crate) port: u16,
}

impl NodeExporter {
    pub(crate) fn start(textfile_dir: &Path, log: &Path) -> NodeExporter {
        require(NODE_EXPORTER);
        for _ in 0..5 {
            let port = support::free_port();
            let child = std::process::Command::new(NODE_EXPORTER)
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .arg("--collector.disable-defaults")
                .arg("--collector.textfile")
                .arg(format!("--collector.textfile.directory={}", textfile_dir.display()))
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(log).expect("log file"))
                .spawn()
                .expect("start node_exporter");
            let mut exporter = NodeExporter { child, port };
            let ours = format!("address=127.0.0.1:{port}");
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = exporter.child.try_wait() {
                    break; // the port was taken meanwhile: try another
                }
                if std::fs::read_to_string(log).unwrap_or_default().contains(&ours)
                    && TcpStream::connect(("127.0.0.1", port)).is_ok()
                {
                    return exporter;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!(
            "node_exporter did not start: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
    }

    /// GET /metrics over plain HTTP/1.0; the body.
    fn scrape(&self) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect to node_exporter");
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        stream
            .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n")
            .expect("send request");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("read response");
        let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
        assert!(
            head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
            "{head}"
        );
        body.to_string()
    }
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn write_textfile(scenario: &str, file: &Path) {
    let path = root().join("samples").join(scenario);
    let (stdout, code, stderr) = doctor(&[
        "analyze",
        "--format",
        "prometheus",
        "--output",
        file.to_str().unwrap(),
        path.to_str().unwrap(),
    ]);
    assert!([0, 1, 3].contains(&code), "{scenario}: exit {code}: {stderr}");
    assert!(stdout.is_empty(), "--output writes nothing on stdout: {stdout}");
}

#[test]
#[ignore = "needs node_exporter: scripts/test.sh runs it"]
fn node_exporter_exposes_the_textfile_also_while_it_is_rewritten() {
    let tmp = tempfile::tempdir().unwrap();
    let textfiles = tmp.path().join("textfile");
    std::fs::create_dir(&textfiles).unwrap();
    let file = textfiles.join("pvrdma.prom");
    write_textfile("esxi80-mixed-fleet", &file);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "node_exporter runs as its own user and must read the file");

    let exporter = NodeExporter::start(&textfiles, &tmp.path().join("node_exporter.log"));
    let written = parse(&std::fs::read_to_string(&file).unwrap());
    let scraped = parse(&exporter.scrape());
    assert_eq!(value(&scraped, "node_textfile_scrape_error", &[]), 0.0);
    assert_eq!(pvrdma_series(&scraped), pvrdma_series(&written));
    assert!(!pvrdma_series(&written).is_empty());
    // The run's time went through too, and node_exporter saw the file.
    assert_eq!(
        value(&scraped, "pvrdma_last_run_timestamp_seconds", &[]),
        value(&written, "pvrdma_last_run_timestamp_seconds", &[])
    );
    assert!(scraped.iter().any(
        |(n, l, _)| n == "node_textfile_mtime_seconds" && l.get("file").is_some_and(|f| f.ends_with("pvrdma.prom"))
    ));
    // The fallback and the unreachable host are there as such.
    assert_eq!(value(&scraped, "pvrdma_host_up", &[("host_name", "esx03")]), 0.0);
    assert!(!scraped
        .iter()
        .any(|(n, l, _)| n == "pvrdma_adapter_verdict" && l.get("host_name").map(String::as_str) == Some("esx03")));

    // Rewritten again and again (two fleets in turn) while node_exporter is scraped in a
    // loop: every scrape reads one whole file, never a mix, never an error.
    write_textfile("healthy-cluster", &file);
    let healthy = pvrdma_series(&parse(&std::fs::read_to_string(&file).unwrap()));
    let mixed = pvrdma_series(&written);
    assert_ne!(healthy, mixed);
    let writer_file = file.clone();
    let writer = std::thread::spawn(move || {
        for round in 0..16 {
            let scenario = if round % 2 == 0 {
                "esxi80-mixed-fleet"
            } else {
                "healthy-cluster"
            };
            write_textfile(scenario, &writer_file);
        }
    });
    let mut scrapes = 0;
    let mut seen = BTreeSet::new();
    while !writer.is_finished() || scrapes < 10 {
        let scraped = parse(&exporter.scrape());
        assert_eq!(
            value(&scraped, "node_textfile_scrape_error", &[]),
            0.0,
            "scrape {scrapes} read a broken file"
        );
        let series = pvrdma_series(&scraped);
        assert!(
            series == healthy || series == mixed,
            "scrape {scrapes} saw a mix or a part"
        );
        seen.insert(series == healthy);
        scrapes += 1;
    }
    writer.join().expect("the writer ran");
    assert!(
        seen.len() == 2 || scrapes < 20,
        "both files were seen over {scrapes} scrapes"
    );
    // Nothing but the file itself is left in the directory (no temporary file).
    let names: Vec<String> = std::fs::read_dir(&textfiles)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["pvrdma.prom"]);
}

#[test]
fn a_report_that_cannot_be_written_is_an_error_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let sample = root().join("samples/healthy-cluster");
    // The folder does not exist.
    let missing = tmp.path().join("no-such-dir/pvrdma.prom");
    let (stdout, code, stderr) = doctor(&[
        "analyze",
        "--format",
        "prometheus",
        "--output",
        missing.to_str().unwrap(),
        sample.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains(&format!("cannot write the report to {}", missing.display())),
        "{stderr}"
    );
    // A directory in the way: the rename fails, nothing is left behind.
    let dir = tmp.path().join("taken");
    std::fs::create_dir(&dir).unwrap();
    let (_, code, stderr) = doctor(&["analyze", "--output", dir.to_str().unwrap(), sample.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot write the report to"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [std::ffi::OsString::from("taken")]);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);

    // The disk fills up mid-write (a file size limit makes write() fail with EFBIG): the
    // older report stays whole, the error says so, the exit code is 2.
    let file = tmp.path().join("report.json");
    std::fs::write(&file, "old\n").unwrap();
    let bin = Doctor::binary();
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 2; exec \"$0\" \"$@\"")
        .arg(&bin)
        .args(["analyze", "--format", "json", "--output"])
        .arg(&file)
        .arg(&sample)
        .output()
        .expect("sh runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot write the report to {}", file.display())),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "old\n");
    let mut left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, [std::ffi::OsString::from("report.json"), "taken".into()]);
}

/// The `ExecStart=` command line of a unit file, continuation lines joined, as words.
fn exec_start(unit: &str) -> Vec<String> {
    let joined = unit.replace("\\\n", " ");
    let line = joined
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("an ExecStart= line");
    line.split_whitespace().map(str::to_string).collect()
}

#[test]
#[ignore = "needs promtool, a real OpenSSH sshd and systemd-analyze: scripts/test.sh runs it"]
fn the_shipped_textfile_service_runs_against_a_real_sshd_and_its_units_verify() {
    require(PROMTOOL);
    let unit_dir = root().join("contrib/systemd");
    let unit = std::fs::read_to_string(unit_dir.join("pvrdma-doctor-textfile.service")).unwrap();
    let words = exec_start(&unit);
    assert_eq!(words[0], "/usr/bin/pvrdma-doctor");

    // The same command line, its paths moved into a temporary folder, against an ESXi
    // double (real OpenSSH sshd on 127.0.0.1) whose firewall drops PVRDMA.
    let tmp = tempfile::tempdir().unwrap();
    let key = support::keygen(tmp.path(), "id_ecdsa", "ecdsa");
    let mut opts = support::SshdOptions::new(support::samples_host("firewall-pvrdma-disabled", "esx01"));
    opts.authorized_keys.push(key.with_extension("pub"));
    let sshd = support::Sshd::start(opts);
    let host = format!("127.0.0.1:{}", sshd.port);
    let hosts = tmp.path().join("hosts");
    std::fs::write(&hosts, format!("# the ESXi double\n{host}\n")).unwrap();
    let known_hosts = tmp.path().join("known_hosts");
    std::fs::write(&known_hosts, sshd.known_hosts_line()).unwrap();
    let textfiles = tmp.path().join("node-exporter");
    std::fs::create_dir(&textfiles).unwrap();
    let bin = Doctor::binary();
    let moved: Vec<String> = words
        .iter()
        .map(|w| match w.as_str() {
            "/usr/bin/pvrdma-doctor" => bin.display().to_string(),
            "/etc/pvrdma-doctor/hosts" => hosts.display().to_string(),
            "/etc/pvrdma-doctor/id_ecdsa" => key.display().to_string(),
            "root" => support::test_user(),
            "UserKnownHostsFile=/etc/pvrdma-doctor/known_hosts" => {
                format!("UserKnownHostsFile={}", known_hosts.display())
            }
            "/var/lib/prometheus/node-exporter/pvrdma.prom" => textfiles.join("pvrdma.prom").display().to_string(),
            other => {
                assert!(!other.starts_with('/'), "a path the test does not move: {other}");
                other.to_string()
            }
        })
        .collect();
    // moved[0] is the binary Doctor runs.
    let out = Doctor::new().args(&moved[1..]).home(tmp.path()).run();
    let stderr = &out.stderr;
    // Exit 1 (an adapter falls back) is a result the unit counts as success.
    assert_eq!(out.code, Some(1), "{stderr}");
    let success = unit
        .lines()
        .find_map(|l| l.strip_prefix("SuccessExitStatus="))
        .expect("SuccessExitStatus=");
    assert_eq!(success.split_whitespace().collect::<Vec<_>>(), ["1", "3"]);
    assert!(out.stdout.is_empty() && stderr.is_empty(), "{stderr}");
    let text = std::fs::read_to_string(textfiles.join("pvrdma.prom")).expect("the textfile");
    assert_promtool_accepts("the service's textfile", &text);
    let series = parse(&text);
    assert_eq!(value(&series, "pvrdma_host_up", &[("host_name", &host)]), 1.0);
    assert_eq!(
        value(
            &series,
            "pvrdma_check_status",
            &[("host_name", &host), ("check", "firewall-pvrdma"), ("status", "fail")]
        ),
        1.0
    );

    // systemd itself accepts both units (the binary path pointed at the built one).
    let verify_dir = tmp.path().join("units");
    std::fs::create_dir(&verify_dir).unwrap();
    std::fs::write(
        verify_dir.join("pvrdma-doctor-textfile.service"),
        unit.replace("/usr/bin/pvrdma-doctor", &bin.display().to_string()),
    )
    .unwrap();
    std::fs::copy(
        unit_dir.join("pvrdma-doctor-textfile.timer"),
        verify_dir.join("pvrdma-doctor-textfile.timer"),
    )
    .unwrap();
    let out = std::process::Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(verify_dir.join("pvrdma-doctor-textfile.timer"))
        .arg(verify_dir.join("pvrdma-doctor-textfile.service"))
        .output()
        .expect("systemd-analyze runs (package systemd)");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.trim().is_empty(),
        "systemd-analyze verify: {said}"
    );
}

#[test]
#[ignore = "needs promtool: scripts/test.sh runs it"]
fn analyze_states_the_run_times_a_bundle_recorded_and_says_when_there_are_none() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("run.tar.gz");
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    };
    let before = now();
    let (_, code, stderr) = doctor(&[
        "demo",
        "--no-progress",
        "--timeout",
        "90s",
        "--format",
        "json",
        "--bundle",
        bundle.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "the demo finds what it planted: {stderr}");
    let after = now();
    // Unpacked too: the same manifest.
    let unpacked = tmp.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    let st = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(&bundle)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(st.success());
    std::thread::sleep(Duration::from_millis(1100));
    for capture in [&bundle, &unpacked] {
        let (text, _, stderr) = doctor(&["analyze", "--format", "prometheus", capture.to_str().unwrap()]);
        assert!(stderr.is_empty(), "{stderr}");
        assert!(
            text.starts_with("# pvrdma-doctor analyze: the run times are those the support bundle recorded (started "),
            "{text}"
        );
        let series = parse(&text);
        let finished = value(&series, "pvrdma_last_run_timestamp_seconds", &[]);
        // The bundle's rounding is to the millisecond.
        assert!(
            finished >= before - 0.001 && finished <= after,
            "{before} <= {finished} <= {after}"
        );
        let duration = value(&series, "pvrdma_run_duration_seconds", &[]);
        assert!(duration > 0.0 && duration <= after - before, "{duration}");
        assert_promtool_accepts("analyze of a bundle", &text);
    }
    // A capture folder records no time: the time of reading it, and the note says so.
    let text = analyze("healthy-cluster");
    assert!(
        text.starts_with("# pvrdma-doctor analyze: the capture records no run time"),
        "{text}"
    );
    let finished = value(&parse(&text), "pvrdma_last_run_timestamp_seconds", &[]);
    assert!(finished > after, "{finished} after {after}");
}

/// Copies a sample scenario with every `from` in the VM list replaced by `to` (the
/// display name esxcli prints; a .vmx file would encode the quotes).
fn renamed_copy(scenario: &str, from: &str, to: &str, dest: &Path) {
    for host in std::fs::read_dir(root().join("samples").join(scenario)).unwrap() {
        let host = host.unwrap().path();
        let target = dest.join(host.file_name().unwrap());
        std::fs::create_dir_all(&target).unwrap();
        for file in std::fs::read_dir(&host).unwrap() {
            let file = file.unwrap().path();
            let mut text = std::fs::read_to_string(&file).unwrap();
            if file.ends_with("esxcli_vm_process_list.txt") {
                text = text.replace(from, to);
            }
            std::fs::write(target.join(file.file_name().unwrap()), text).unwrap();
        }
    }
}

#[test]
#[ignore = "needs node_exporter: scripts/test.sh runs it"]
fn a_vm_name_with_quotes_and_backslashes_reaches_node_exporter_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let capture = tmp.path().join("capture");
    let odd = r#"hpc "node" \01"#;
    renamed_copy("healthy-cluster", "hpc-node01", odd, &capture);
    let textfiles = tmp.path().join("textfile");
    std::fs::create_dir(&textfiles).unwrap();
    let file = textfiles.join("names.prom");
    let (_, code, stderr) = doctor(&[
        "analyze",
        "--format",
        "prometheus",
        "--output",
        file.to_str().unwrap(),
        capture.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_promtool_accepts("a VM name with quotes and a backslash", &text);
    let exporter = NodeExporter::start(&textfiles, &tmp.path().join("node_exporter.log"));
    let scraped = parse(&exporter.scrape());
    assert_eq!(value(&scraped, "node_textfile_scrape_error", &[]), 0.0);
    let labels = [
        ("host_name", "esx01"),
        ("vm_name", odd),
        ("adapter", "0"),
        ("verdict", "hca"),
    ];
    assert_eq!(value(&scraped, "pvrdma_adapter_verdict", &labels), 1.0);
    assert_eq!(pvrdma_series(&scraped), pvrdma_series(&parse(&text)));
}

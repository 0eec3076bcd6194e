//! The command line as an admin uses it: options anywhere, node sets, a fleet
//! report that folds, fits the terminal and says when nothing was diagnosed, scriptable
//! remedies, completions and the smaller promises. Through the real binary.
use crate::support::client::Doctor;
use std::path::{Path, PathBuf};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

fn doctor() -> Doctor {
    Doctor::new()
        .env_remove("NO_COLOR")
        .env_remove("COLUMNS")
        .env_remove("RUST_LOG")
}

struct Run {
    stdout: String,
    stderr: String,
    code: i32,
}

fn run(cmd: Doctor) -> Run {
    let out = cmd.output();
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// 40 hosts with two outcomes: esx01-20 healthy, esx21-40 with the pvrdma firewall
/// ruleset disabled (each a copy of a sample host).
fn fleet_of_40() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for n in 1..=40 {
        let from = if n <= 20 {
            samples().join("esxi80-mixed-fleet/esx01")
        } else {
            samples().join("esxi80-mixed-fleet/esx02")
        };
        let host = dir.path().join(format!("esx{n:02}"));
        copy_dir(&from, &host);
        // Every host has its own PVRDMA vmknic address, as in a real fleet (a shared one
        // fails vmknic-ipv4-unique).
        let ipv4 = host.join("esxcli_network_ip_interface_ipv4_get.txt");
        let text = std::fs::read_to_string(&ipv4).unwrap();
        let own = text
            .lines()
            .map(|l| {
                if l.starts_with("vmk1 ") {
                    // Same width, so the esxcli table's columns stay aligned.
                    l.replacen("10.10.10.11 ", &format!("10.10.10.{}", 100 + n), 1)
                        .replacen("10.10.10.12 ", &format!("10.10.10.{}", 100 + n), 1)
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&ipv4, own + "\n").unwrap();
    }
    dir
}

fn display_width(line: &str) -> usize {
    use unicode_width::UnicodeWidthStr;
    line.width()
}

#[test]
fn options_may_stand_before_the_subcommand() {
    let dir = samples().join("healthy-cluster");
    for args in [
        vec!["--only-problems", "--format", "json", "analyze"],
        vec!["--color", "never", "--format", "json", "analyze"],
        vec!["analyze", "--format", "json"],
    ] {
        let r = run(doctor().args(&args).arg(&dir));
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        let json: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(json["summary"]["hosts"], 2, "{args:?}");
    }
}

#[test]
fn an_option_a_subcommand_does_not_use_is_a_usage_error_naming_it() {
    let dir = samples().join("healthy-cluster");
    for (args, sub, option) in [
        (vec!["--no-progress", "analyze"], "analyze", "--no-progress"),
        (vec!["-l", "root", "analyze"], "analyze", "'-l'"),
        (vec!["analyze", "--parallel", "4"], "analyze", "--parallel"),
        (
            vec!["serve", "--config", "c.yml", "-p", "1", "--bundle", "x.tgz"],
            "serve",
            "'-p'",
        ),
        (vec!["watch", "esx01", "--output", "f"], "watch", "--output"),
    ] {
        let r = run(doctor().args(&args).arg(&dir));
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
        assert!(r.stderr.contains(option), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("Usage: pvrdma-doctor {sub}")),
            "{args:?}: {}",
            r.stderr
        );
    }
    // `--help` lists only what the subcommand uses.
    let help = run(doctor().args(["serve", "--help"])).stdout;
    for absent in ["--user", "--bundle", "--timeout", "--format", "--probe", "--parallel"] {
        assert!(!help.contains(absent), "serve --help offers {absent}:\n{help}");
    }
    let help = run(doctor().args(["watch", "--help"])).stdout;
    for absent in ["--bundle", "--output", "--warning", "prometheus", "One JSON document"] {
        assert!(!help.contains(absent), "watch --help offers {absent}:\n{help}");
    }
    assert!(help.contains("JSON Lines"), "{help}");
}

#[test]
fn a_host_with_a_slash_or_a_bad_node_set_never_reaches_dns() {
    for (arg, needle) in [
        ("samples/healthy-cluster", "'/' is not allowed"),
        ("esx[a-c]", "no letter ranges"),
        ("esx[1/2]", "a step needs a range"),
        ("esx[1:4]", "a range is written FIRST-LAST"),
        ("esx[1-010]", "padding mismatch"),
        ("root@esx01:22:33", "a second ':'"),
        ("esx[1-3", "never closed"),
    ] {
        let r = run(doctor().args(["--connect-timeout", "1s", arg]));
        assert_eq!(r.code, 2, "{arg}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(needle), "{arg}: {}", r.stderr);
        assert!(r.stderr.contains('^'), "points at the character: {}", r.stderr);
        assert!(r.stdout.is_empty(), "no report: {}", r.stdout);
    }
}

#[test]
fn nothing_diagnosed_is_said_and_identical_failures_fold() {
    const LOGIN: &str = "no SSH login within --connect-timeout 10s";
    let dir = tempfile::tempdir().unwrap();
    for n in 1..=11 {
        let host = dir.path().join(format!("esx{n:02}"));
        std::fs::create_dir_all(&host).unwrap();
        std::fs::write(
            host.join("host-error.json"),
            format!(r#"{{"kind": "timeout", "message": "esx{n:02}:22: {LOGIN}", "detail": "{LOGIN}"}}"#),
        )
        .unwrap();
    }
    let r = run(doctor().args(["analyze", "--color", "never"]).arg(dir.path()));
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(!r.stdout.contains("No PVRDMA adapters found"), "{}", r.stdout);
    assert!(r.stdout.contains("Nothing was diagnosed"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("esx[01-11] (11 hosts) · unreachable · timeout: no SSH login within"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .trim_end()
            .ends_with("11 hosts: 11 unreachable (esx[01-11]); nothing was diagnosed"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.lines().count() <= 7, "{}", r.stdout);
    let json = run(doctor().args(["analyze", "--format", "json"]).arg(dir.path()));
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["summary"]["diagnosed"], 0);
    assert_eq!(v["summary"]["host_sets"]["unreachable"], "esx[01-11]");
}

#[test]
fn a_fleet_of_40_with_two_outcomes_fits_a_screenful_and_names_the_failing_set() {
    let fleet = fleet_of_40();
    let r = run(doctor().args(["analyze", "--color", "never"]).arg(fleet.path()));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines = r.stdout.lines().count();
    // Two screenfuls at most (the fleet checks and the transport exceptions, which name
    // the vsish line and the failing check behind each fallback, add a few lines, and the
    // folded fix is shown once in each tool, about ten).
    assert!(lines <= 100, "{lines} lines:\n{}", r.stdout);
    assert!(r.stdout.contains("esx[01-20] (20 hosts) · ok"), "{}", r.stdout);
    assert!(r.stdout.contains("esx[21-40] (20 hosts) · problems"), "{}", r.stdout);
    assert_eq!(
        r.stdout
            .matches("run: esxcli network firewall ruleset set -e true -r pvrdma")
            .count(),
        1,
        "the remedy is printed once: {}",
        r.stdout
    );
    // The summary is the last paragraph (it may wrap over several lines).
    let summary = r
        .stdout
        .trim_end()
        .rsplit("\n\n")
        .next()
        .unwrap_or("")
        .replace('\n', " ");
    assert!(summary.contains("20 with problems (esx[21-40])"), "{summary}");
    // Unfolded, every host has its own section again.
    let unfolded = run(doctor()
        .args(["analyze", "--color", "never", "--no-fold"])
        .arg(fleet.path()));
    assert_eq!(unfolded.stdout.matches(" · problems").count(), 20);
    // The JSON report is not folded: one entry per host.
    let json = run(doctor().args(["analyze", "--format", "json"]).arg(fleet.path()));
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["hosts"].as_array().map(Vec::len), Some(40));
    assert_eq!(v["summary"]["host_sets"]["problems"], "esx[21-40]");
}

#[test]
fn only_problems_hides_the_healthy_and_says_so() {
    let fleet = fleet_of_40();
    let r = run(doctor()
        .args(["analyze", "--color", "never", "--only-problems"])
        .arg(fleet.path()));
    assert_eq!(r.code, 1);
    assert!(!r.stdout.contains(" · ok"), "{}", r.stdout);
    assert!(!r.stdout.contains("✓ esxi-version"), "{}", r.stdout);
    assert!(r.stdout.contains("✗ firewall-pvrdma"), "{}", r.stdout);
    assert!(
        r.stdout.contains("20 hosts without problems not shown: esx[01-20]"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("physical HCA in use"), "{}", r.stdout);
    assert!(
        r.stdout.contains("40 hosts: 20 healthy"),
        "the summary counts all: {}",
        r.stdout
    );
}

#[test]
fn every_line_fits_the_width_from_columns() {
    let fleet = fleet_of_40();
    for columns in [80usize, 60, 132] {
        for dir in [
            fleet.path().to_path_buf(),
            samples().join("dvs-two-uplinks"),
            samples().join("vm-names-special"),
        ] {
            let r = run(doctor()
                .args(["analyze", "--color", "never"])
                .arg(&dir)
                .env("COLUMNS", columns.to_string()));
            for line in r.stdout.lines() {
                assert!(
                    display_width(line) <= columns,
                    "{columns} columns, {}: {} wide: {line}",
                    dir.display(),
                    display_width(line)
                );
            }
        }
    }
}

#[test]
fn a_host_that_is_not_esxi_is_one_line_with_status_error() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("linuxbox");
    std::fs::create_dir_all(&host).unwrap();
    for id in [
        "esxcli_system_version_get",
        "esxcli_rdma_device_list",
        "esxcli_network_nic_list",
    ] {
        std::fs::write(host.join(format!("{id}.txt")), "").unwrap();
        std::fs::write(host.join(format!("{id}.stderr.txt")), "sh: esxcli: not found\n").unwrap();
        std::fs::write(host.join(format!("{id}.exit")), "127\n").unwrap();
    }
    copy_dir(&samples().join("healthy-cluster/esx01"), &dir.path().join("esx01"));
    let r = run(doctor().args(["analyze", "--color", "never"]).arg(dir.path()));
    assert_eq!(r.code, 3, "{}", r.stdout);
    let line: Vec<&str> = r.stdout.lines().filter(|l| l.contains("linuxbox ·")).collect();
    assert_eq!(line.len(), 1, "{}", r.stdout);
    assert!(
        line.first()
            .is_some_and(|l| l.starts_with("linuxbox · error · not-esxi: not an ESXi host")),
        "{line:?}"
    );
    assert!(r.stdout.contains("1 with errors (linuxbox)"), "{}", r.stdout);
    assert!(!r.stdout.contains("  ? "), "no unknown checks listed: {}", r.stdout);
    let json = run(doctor().args(["analyze", "--format", "json"]).arg(dir.path()));
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let host = v["hosts"]
        .as_array()
        .and_then(|h| h.iter().find(|h| h["host"] == "linuxbox"))
        .cloned();
    let host = host.expect("linuxbox in the report");
    assert_eq!(host["status"], "error");
    assert_eq!(host["error"]["kind"], "not-esxi");
    assert_eq!(host["checks"].as_array().map(Vec::len), Some(0));
}

#[test]
fn remedies_split_into_a_command_and_advice() {
    let r = run(doctor()
        .args(["analyze", "--format", "json"])
        .arg(samples().join("firewall-pvrdma-disabled")));
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let checks: Vec<&serde_json::Value> = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["checks"].as_array().unwrap().iter())
        .filter(|c| c["id"] == "firewall-pvrdma" && c["status"] == "fail")
        .collect();
    let c = checks.first().expect("a failing firewall check");
    assert_eq!(
        c["remediation"]["command"],
        "esxcli network firewall ruleset set -e true -r pvrdma"
    );
    assert!(c["remediation"]["advice"].is_null());
    assert_eq!(c["remedy"], c["remediation"]["command"], "v1's remedy string stays");

    // A teamed vDS is fixed in vCenter: advice, no command.
    let r = run(doctor()
        .args(["analyze", "--format", "json"])
        .arg(samples().join("dvs-two-uplinks")));
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    for host in v["hosts"].as_array().unwrap() {
        for c in host["checks"].as_array().unwrap() {
            let Some(command) = c["remediation"]["command"].as_str() else {
                continue;
            };
            assert!(command.starts_with("esxcli "), "{command}");
            assert!(!command.contains('<') && !command.contains("vCenter"), "{command}");
        }
    }
    let text = run(doctor()
        .args(["analyze", "--color", "never"])
        .arg(samples().join("dvs-two-uplinks")));
    assert!(text.stdout.contains("advice: in vCenter"), "{}", text.stdout);
}

#[test]
fn the_summary_shows_warnings() {
    let r = run(doctor()
        .args(["analyze", "--color", "never"])
        .arg(samples().join("vmknic-subnets-differ")));
    assert_eq!(r.code, 0);
    // The summary is the last paragraph (it may wrap over several lines).
    let summary = r
        .stdout
        .trim_end()
        .rsplit("\n\n")
        .next()
        .unwrap_or("")
        .replace('\n', " ");
    assert!(summary.contains("1 warning: vmknic-subnets across hosts"), "{summary}");
}

#[test]
fn completions_and_man_page_come_from_the_cli_definition() {
    for (kind, needle) in [
        ("complete-bash", "--only-problems"),
        ("complete-zsh", "--only-problems"),
        ("complete-fish", "only-problems"),
        ("complete-powershell", "--only-problems"),
        ("complete-elvish", "--only-problems"),
        ("man", ".TH pvrdma-doctor"),
    ] {
        let r = run(doctor().args(["--generate", kind]));
        assert_eq!(r.code, 0, "{kind}: {}", r.stderr);
        assert!(r.stdout.contains(needle), "{kind}: {}", r.stdout);
    }
}

#[test]
fn the_plan_formats_are_in_the_help_the_man_page_and_the_completions() {
    let help = run(doctor().arg("--help")).stdout;
    for needle in ["- ansible:", "- powercli:", "save it with --output"] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
    for (kind, needle) in [
        ("man", "ansible: The fixes of the failing checks"),
        ("man", "powercli: The same plan as a PowerCLI script"),
        ("complete-bash", "human json prometheus nagios ansible powercli"),
        ("complete-zsh", "powercli\\:"),
        ("complete-fish", "powercli\\t"),
    ] {
        let r = run(doctor().args(["--generate", kind]));
        assert_eq!(r.code, 0, "{kind}: {}", r.stderr);
        assert!(r.stdout.contains(needle), "{kind} lacks {needle:?}: {}", r.stdout);
    }
}

/// A plan keeps the diagnosis's documented exit code (runbooks read it), so it is written
/// with --output and applied on a line of its own.
#[test]
fn a_plan_exits_with_the_diagnosis_code_and_is_written_whole_with_output() {
    let scenario = samples().join("firewall-pvrdma-disabled");
    let json = run(doctor().args(["analyze", "--format", "json"]).arg(&scenario));
    assert_eq!(json.code, 1, "{}", json.stderr);
    let dir = tempfile::tempdir().unwrap();
    for (format, file, first) in [
        ("ansible", "fix.yml", "---"),
        ("powercli", "fix.ps1", "# pvrdma-doctor"),
    ] {
        let path = dir.path().join(file);
        let r = run(doctor()
            .args(["analyze", "--format", format, "--output"])
            .arg(&path)
            .arg(&scenario));
        assert_eq!(r.code, json.code, "{format}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{format}: {}", r.stdout);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(first), "{format}: {text}");
        assert!(text.contains("firewall-pvrdma"), "{format}: {text}");
    }
}

#[test]
fn list_checks_as_json() {
    let r = run(doctor().args(["--list-checks", "--format", "json"]));
    assert_eq!(r.code, 0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v["commands"].as_array().is_some_and(|c| c.len() > 10));
    assert!(v["checks"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["id"] == "firewall-pvrdma")));
}

#[test]
fn small_promises() {
    // --bundle with another extension is refused before anything is collected.
    let r = run(doctor().args(["--bundle", "x.zip", "esx01"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains(".tar.gz"), "{}", r.stderr);
    // analyze does not write bundles.
    let r = run(doctor()
        .args(["analyze", "--bundle", "y.tar.gz"])
        .arg(samples().join("healthy-cluster")));
    assert_eq!(r.code, 2);
    // -F /nonexistent: the OS error once.
    let r = run(doctor().args(["-F", "/nonexistent/ssh_config", "esx01"]));
    assert_eq!(r.code, 2);
    assert_eq!(r.stderr.matches("No such file").count(), 1, "{}", r.stderr);
    // One folder too high.
    let r = run(doctor().args(["analyze"]).arg(samples()));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("pvrdma-doctor analyze") && r.stderr.contains("samples/broken-output"),
        "{}",
        r.stderr
    );
    // A truncated .tar.gz is named and called truncated.
    let dir = tempfile::tempdir().unwrap();
    let tgz = dir.path().join("cut.tar.gz");
    let made = run(doctor().args(["demo", "--no-progress", "--bundle"]).arg(&tgz));
    assert_eq!(made.code, 0, "the demo came out as planted: {}", made.stderr);
    assert_eq!(
        run(doctor().arg("analyze").arg(&tgz)).code,
        1,
        "the whole bundle reads, with the report's own code"
    );
    let bytes = std::fs::read(&tgz).unwrap();
    std::fs::write(&tgz, bytes.get(..bytes.len() / 2).unwrap()).unwrap();
    let r = run(doctor().arg("analyze").arg(&tgz));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("cut.tar.gz is truncated"), "{}", r.stderr);
}

#[test]
fn verbose_shows_each_command_on_stderr() {
    let r = run(doctor().args(["demo", "-v", "--no-progress", "--format", "json"]));
    assert!(r.code == 0, "{}", r.stderr);
    assert!(
        serde_json::from_str::<serde_json::Value>(&r.stdout).is_ok(),
        "stdout stays JSON"
    );
    let commands: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("`esxcli system version get` exit 0 in"))
        .collect();
    assert!(commands.len() >= 2, "{}", r.stderr);
    assert!(commands.iter().all(|l| l.contains("esx0")), "{commands:?}");
    let quiet = run(doctor().args(["demo", "--no-progress", "--format", "json"]));
    assert!(!quiet.stderr.contains("exit 0 in"), "{}", quiet.stderr);
}

#[test]
fn ctrl_c_reports_reached_hosts_as_interrupted_and_exits_130() {
    use std::io::BufRead;
    let mut child = Doctor::new()
        .args(["demo", "-v", "--no-progress", "--format", "json", "--latency", "30s"])
        .env_remove("RUST_LOG")
        .command()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("binary runs");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    // Once a host is logged in, its commands are waiting on the simulated latency.
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap_or_default();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("logged in as") {
            break;
        }
    }
    assert!(seen.contains("logged in as"), "{seen}");
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let out = child.wait_with_output().expect("exits");
    assert_eq!(out.status.code(), Some(130), "{seen}{}", rest.join("\n"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report of what was collected");
    let statuses: Vec<&str> = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["status"].as_str())
        .collect();
    assert!(statuses.contains(&"interrupted"), "{statuses:?}");
    assert!(!statuses.contains(&"ok"), "{statuses:?}");
    assert!(rest.iter().any(|l| l.contains("interrupted")), "{rest:?}");
}

#[test]
fn host_supplied_names_are_escaped_and_shortened_in_text_but_whole_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("esx01");
    copy_dir(&samples().join("healthy-cluster/esx01"), &host);
    // An 8 MiB VM name that starts with a right-to-left override.
    let name = format!("evil\u{202E}fdp.exe{}", "x".repeat(8 * 1024 * 1024));
    let list = std::fs::read_to_string(host.join("esxcli_vm_process_list.txt")).unwrap();
    let list = list.replacen("Display Name: hpc-node01", &format!("Display Name: {name}"), 1);
    std::fs::write(host.join("esxcli_vm_process_list.txt"), list).unwrap();
    let r = run(doctor().args(["analyze", "--color", "never"]).arg(dir.path()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.len() < 16 * 1024, "{} bytes of text report", r.stdout.len());
    assert!(!r.stdout.contains('\u{202E}'), "the override is escaped");
    assert!(r.stdout.contains("evil\\u{202e}fdp.exe"), "{}", r.stdout);
    // The cell wraps the name, each of its lines but the last marked, then the note of how
    // much was left out, as words.
    let left_out = name.chars().count() - 200;
    let cell: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with('│'))
        .skip(1)
        .filter_map(|l| l.split('│').nth(1))
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert!(
        cell.join(" ")
            .contains(&format!("… ({left_out} more characters, whole in --format json)")),
        "{}",
        r.stdout
    );
    let name_lines = cell.iter().take_while(|l| !l.contains('…'));
    assert!(name_lines.clone().count() > 1, "{}", r.stdout);
    assert!(name_lines.into_iter().all(|l| l.ends_with('↩')), "{}", r.stdout);
    let json = run(doctor().args(["analyze", "--format", "json"]).arg(dir.path()));
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["hosts"][0]["vms"][0]["name"].as_str(), Some(name.as_str()));
}

#[test]
fn a_real_host_named_like_a_misspelt_subcommand_is_still_contacted() {
    // `demoo` is one edit from `demo`, but the ssh_config maps it to a host: it is looked
    // up and contacted (here a closed port on 127.0.0.1), and no "did you mean" is added.
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = dir.path().join("ssh_config");
    std::fs::write(&config, format!("Host demoo\n  HostName 127.0.0.1\n  Port {port}\n")).unwrap();
    let r = run(doctor()
        .args([
            "demoo",
            "--no-progress",
            "--color",
            "never",
            "--connect-timeout",
            "5s",
            "-F",
        ])
        .arg(&config));
    assert_eq!(r.code, 3, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("demoo · unreachable"), "{}", r.stdout);
    assert!(r.stdout.contains("127.0.0.1"), "{}", r.stdout);
    assert!(!r.stderr.contains("did you mean"), "{}", r.stderr);
    // A line that cannot be hosts at all gets the hint.
    let r = run(doctor().args(["analyse", "samples/healthy-cluster"]));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("did you mean `pvrdma-doctor analyze samples/healthy-cluster`?"),
        "{}",
        r.stderr
    );
}

#[test]
fn an_ssh_config_or_command_line_ssh_refuses_stops_the_run_once() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    std::fs::write(&cfg, "Host esx*\n  Usre admin\n").unwrap();
    let r = run(doctor().arg("-F").arg(&cfg).args(["--no-progress", "esx01", "esx02"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr.matches("Bad configuration option: usre").count(),
        1,
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(&format!("{}:2:", cfg.display())), "{}", r.stderr);
    for (args, needle) in [
        (
            &["-o", "ProxyCommand=none", "-J", "j1"][..],
            "Cannot specify -J with ProxyCommand",
        ),
        (&["-o", "ProxyJump=j2", "-J", "j1"][..], "Only a single -J"),
        (&["-p", "0"][..], "bad port"),
        (&["-l", "a;b"][..], "invalid characters"),
    ] {
        let r = run(doctor().args(["-F", "none", "--no-progress"]).args(args).arg("esx01"));
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
    }
}

#[test]
fn connect_timeout_comes_from_ssh_config_unless_the_command_line_gives_one() {
    // A listener that accepts TCP and never sends an SSH banner: the login runs out of
    // whichever limit applies, and the message names it and how to raise it.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("ssh_config");
    std::fs::write(
        &cfg,
        format!("Host quick\n  ConnectTimeout 1\nHost *\n  HostName 127.0.0.1\n  Port {port}\n"),
    )
    .unwrap();
    let message = |args: &[&str]| {
        let r = run(doctor()
            .env("HOME", dir.path())
            .arg("-F")
            .arg(&cfg)
            .args(["--no-progress", "--format", "json"])
            .args(args));
        let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stderr));
        report["hosts"][0]["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    // Its ConnectTimeout bounds the TCP connect and handshake, as ssh's does.
    let m = message(&["quick"]);
    assert!(
        m.contains("no SSH handshake (TCP connect, banner, key exchange) within ConnectTimeout 1s"),
        "{m}"
    );
    assert!(m.contains("raise ConnectTimeout"), "{m}");
    let m = message(&["-o", "ConnectTimeout=1", "other"]);
    assert!(m.contains("within ConnectTimeout 1s"), "{m}");
    // --connect-timeout bounds the whole login, whatever the file says.
    let m = message(&["--connect-timeout", "1500ms", "other"]);
    assert!(m.contains("no SSH login within --connect-timeout 1s 500ms"), "{m}");
    assert!(m.contains("raise --connect-timeout"), "{m}");
    drop(silent);
}

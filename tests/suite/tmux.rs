//! What a person sees in a real 80-column terminal (tmux), without `$COLUMNS`: the width
//! comes from the terminal itself. Every sample's report, `demo`, `demo --probe`,
//! `--list-checks` (and `-v`), `--help`, `demo --help` and the error paths, stdout and
//! stderr both on the pane: no line is wider than 80 columns, no table line starts a
//! cell with a stray space, and the tool's own words are not cut. tmux is installed by
//! scripts/install-test-deps.sh; its absence fails the test rather than skipping it.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

fn tmux(socket: &str, args: &[&str]) -> std::process::Output {
    Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .expect("tmux runs (scripts/install-test-deps.sh installs it)")
}

fn bin() -> PathBuf {
    crate::support::client::Doctor::binary()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// POSIX-sh single quotes.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// What the pane shows after `pvrdma-doctor ARGS` ran in an 80-column tmux terminal
/// (from the repository root), followed by `exit=N`.
pub(crate) fn in_80_columns(args: &[&str]) -> String {
    in_80_columns_typing(args, None)
}

/// [`in_80_columns`], with `typed` = (`prompt`, `keys`): once the pane shows `prompt`,
/// `keys` and Enter are typed (not before: the terminal itself would echo keys typed
/// ahead of a prompt that turns echo off).
pub(crate) fn in_80_columns_typing(args: &[&str], typed: Option<(&str, &str)>) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let socket = format!("pvrdma-doctor-test-{}-{n}", std::process::id());
    let channel = format!("pvrdma-doctor-done-{n}");
    let line: Vec<String> = args.iter().map(|a| quote(a)).collect();
    // The output goes to the pane (a terminal), then the shell signals and waits, so the
    // pane stays for capture.
    let script = format!(
        "cd {}; env -u COLUMNS -u NO_COLOR {} {}; echo exit=$?; tmux -L {socket} wait-for -S {channel}; sleep 60",
        quote(&root().display().to_string()),
        quote(&bin().display().to_string()),
        line.join(" ")
    );
    let started = tmux(&socket, &["new-session", "-d", "-x", "80", "-y", "50", &script]);
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    if let Some((prompt, keys)) = typed {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !String::from_utf8_lossy(&tmux(&socket, &["capture-pane", "-p", "-J"]).stdout).contains(prompt) {
            assert!(
                std::time::Instant::now() < deadline,
                "{args:?}: no `{prompt}` within 60 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let sent = tmux(&socket, &["send-keys", "-l", keys]);
        assert!(sent.status.success(), "{}", String::from_utf8_lossy(&sent.stderr));
        let _ = tmux(&socket, &["send-keys", "Enter"]);
    }
    let waited = Command::new("timeout")
        .args(["120", "tmux", "-L", &socket, "wait-for", &channel])
        .status()
        .expect("timeout runs");
    // -J joins lines the terminal wrapped: a line wider than 80 would show up whole.
    // `-S -`: from the start of the scrollback, for outputs longer than the pane.
    let captured = tmux(&socket, &["capture-pane", "-p", "-J", "-S", "-", "-E", "-"]);
    let _ = tmux(&socket, &["kill-server"]);
    assert!(waited.success(), "{args:?} did not finish within 120 s");
    String::from_utf8_lossy(&captured.stdout).trim_end().to_string()
}

/// Every line fits 80 columns; no table cell line starts with a stray space; nothing the
/// tool wrote is cut.
pub(crate) fn assert_fits(what: &str, text: &str) {
    for line in text.lines() {
        let width = line.trim_end().chars().count();
        assert!(width <= 80, "{what}: {width} columns: {line}\n{text}");
        assert!(
            !line
                .split('│')
                .skip(1)
                .any(|cell| cell.starts_with("  ") && !cell.trim().is_empty()),
            "{what}: a table cell starts with a stray space: {line}\n{text}"
        );
    }
    assert!(
        !text.contains("more characters, whole in --format json"),
        "{what}: something was cut\n{text}"
    );
}

pub(crate) fn exit_code(text: &str) -> &str {
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix("exit="))
        .unwrap_or("none")
}

#[test]
#[ignore = "needs tmux: scripts/test.sh runs it"]
fn every_sample_report_fits_an_80_column_terminal() {
    let mut names: Vec<String> = std::fs::read_dir(root().join("samples"))
        .expect("samples")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() > 30, "{names:?}");
    for name in &names {
        let path = format!("samples/{name}");
        let text = in_80_columns(&["analyze", "--color", "never", &path]);
        assert_fits(name, &text);
        assert!(["0", "1", "3"].contains(&exit_code(&text)), "{name}: {text}");
        // The summary line is there: the report is whole, not an error.
        assert!(text.contains(" host"), "{name}: {text}");
    }
    // The runnable remedy stays on one line, whole.
    let text = in_80_columns(&["analyze", "--color", "never", "samples/esxi80-mixed-fleet"]);
    assert!(
        text.lines()
            .any(|l| l.trim() == "esxcli network firewall ruleset set -e true -r pvrdma"
                || l.trim() == "run: esxcli network firewall ruleset set -e true -r pvrdma"),
        "{text}"
    );
    // Evidence names the command, not the catalogue id.
    assert!(text.contains("`esxcli network firewall get`: Enabled"), "{text}");
    assert!(!text.contains("esxcli_network_firewall_get"), "{text}");
    // The same report piped (no terminal, no $COLUMNS) is laid out for 100 columns.
    let piped = Command::new(bin())
        .args(["analyze", "--color", "never"])
        .arg(root().join("samples/dvs-two-uplinks"))
        .env_remove("COLUMNS")
        .output()
        .expect("runs");
    let piped = String::from_utf8_lossy(&piped.stdout).into_owned();
    assert!(piped.lines().any(|l| l.chars().count() > 80), "{piped}");
    assert!(piped.lines().all(|l| l.chars().count() <= 100), "{piped}");
}

#[test]
#[ignore = "needs tmux: scripts/test.sh runs it"]
fn the_demo_says_first_and_last_what_is_simulated_and_planted() {
    let text = in_80_columns(&["demo", "--color", "never", "--no-progress"]);
    assert_fits("demo", &text);
    let first = text.lines().next().unwrap_or("");
    assert!(first.starts_with("demo: 3 simulated ESXi hosts"), "{text}");
    let opening: String = text.split("\n\n").next().unwrap_or("").replace("\n    ", " ");
    assert!(opening.contains("127.0.0.1"), "{opening}");
    assert!(opening.contains("esx02: firewall-pvrdma fails"), "{opening}");
    assert!(opening.contains("esx03: its SSH port is closed"), "{opening}");
    let closing: String = text.rsplit("\n\n").next().unwrap_or("").replace("\n    ", " ");
    assert!(
        closing.starts_with("demo: the report above is of simulated hosts on 127.0.0.1"),
        "{closing}"
    );
    assert!(
        closing.contains("esx02: firewall-pvrdma; esx03: SSH port closed"),
        "{closing}"
    );
    assert!(
        closing.contains("exits 0; on real hosts this report would exit 1"),
        "{closing}"
    );
    assert_eq!(exit_code(&text), "0", "{text}");
}

#[test]
#[ignore = "needs tmux: scripts/test.sh runs it"]
fn the_probe_demo_fits_and_names_its_planted_switch_ports() {
    // With the progress bar (stderr is the pane), so the probe's notice shows too.
    let text = in_80_columns(&["demo", "--probe", "--color", "never"]);
    assert_fits("demo --probe", &text);
    assert!(text.contains("pvrdma-doctor: probing 12 vmknic pairs"), "{text}");
    assert!(text.contains("✗ vmknic-reachability"), "{text}");
    assert!(text.contains("mtu: esx01 vmk1 ↔ esx03 10.10.10.13"), "{text}");
    let joined = text.replace("\n    ", " ");
    assert!(
        joined.contains("esx03: its physical switch port has MTU 1500"),
        "{joined}"
    );
    assert!(
        joined.contains("esx04: its physical switch port is in VLAN 30"),
        "{joined}"
    );
    assert_eq!(exit_code(&text), "0", "{text}");
}

#[test]
#[ignore = "needs tmux: scripts/test.sh runs it"]
fn list_checks_and_help_fit() {
    let text = in_80_columns(&["--list-checks"]);
    assert_fits("--list-checks", &text);
    assert!(text.contains("esxcli_network_vm_port_list"), "{text}");
    assert!(
        text.contains("runs: esxcli network vm port list -w <World ID>"),
        "{text}"
    );
    assert!(text.contains("vmknic-reachability"), "{text}");
    let exact = in_80_columns(&["--list-checks", "-v"]);
    assert_fits("--list-checks -v", &exact);
    assert!(
        exact.contains("q() { esxcli network vm port list -w \"$1\"; };"),
        "{exact}"
    );

    let help = in_80_columns(&["--help"]);
    assert_fits("--help", &help);
    assert!(help.contains("--generate <KIND>"), "{help}");
    assert!(
        !help.contains("docs/report.schema.json") && !help.contains("brew"),
        "{help}"
    );
    let demo = in_80_columns(&["demo", "--help"]);
    assert_fits("demo --help", &demo);
    assert!(demo.contains("--scenario <DIR>") && demo.contains("--probe"), "{demo}");
    for ssh in [
        "--hosts-file",
        "--jump",
        "--user",
        "--accept-new",
        "--ssh-option",
        "--ask-password",
    ] {
        assert!(!demo.contains(ssh), "demo --help lists {ssh}: {demo}");
    }
    assert_fits("analyze --help", &in_80_columns(&["analyze", "--help"]));
    // The front ends for monitoring: their help is read at a terminal too.
    let watch = in_80_columns(&["watch", "--help"]);
    assert_fits("watch --help", &watch);
    assert!(watch.contains("--until-change"), "{watch}");
    let serve = in_80_columns(&["serve", "--help"]);
    assert_fits("serve --help", &serve);
    assert!(serve.contains("--check-config"), "{serve}");
}

#[test]
#[ignore = "needs tmux: scripts/test.sh runs it"]
fn error_messages_fit() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "no hosts given"),
        (&["esx[01-"], "'[' is never closed"),
        (
            &["analyse", "samples/healthy-cluster"],
            "did you mean `pvrdma-doctor analyze samples/healthy-cluster`?",
        ),
        (&["demo", "-l", "admin"], "Usage: pvrdma-doctor demo"),
        (&["--command-timeout", "soon", "esx01"], "is not a duration"),
        (&["analyze", "/nonexistent/capture"], "/nonexistent/capture"),
        (&["--bundle", "x.zip", "esx01"], ".tar.gz"),
    ];
    for (args, needle) in cases {
        let text = in_80_columns(args);
        assert_fits(&format!("{args:?}"), &text);
        let joined = text.replace("\n    ", " ");
        assert!(joined.contains(needle), "{args:?}: {text}");
        assert_eq!(exit_code(&text), "2", "{args:?}: {text}");
    }
    // The caret stays under the character it points at.
    let text = in_80_columns(&["esx[01-0a]"]);
    let lines: Vec<&str> = text.lines().collect();
    let set = lines
        .iter()
        .position(|l| l.trim() == "esx[01-0a]")
        .expect("the set is shown");
    let column = lines[set].find("esx").unwrap_or(0) + "esx[01-0".len();
    assert_eq!(lines[set + 1].find('^'), Some(column), "{text}");
}

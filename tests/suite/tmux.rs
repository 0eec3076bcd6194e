//! The human report in a real 80-column terminal (tmux), without `$COLUMNS`: the width
//! comes from the terminal itself, and no line is wider than it. tmux is installed by
//! scripts/install-test-deps.sh; its absence fails the test rather than skipping it.
use std::path::Path;
use std::process::Command;

fn tmux(socket: &str, args: &[&str]) -> std::process::Output {
    Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .expect("tmux runs (scripts/install-test-deps.sh installs it)")
}

#[test]
fn the_report_fits_an_80_column_terminal() {
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_pvrdma-doctor"));
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/dvs-two-uplinks");
    let socket = format!("pvrdma-doctor-test-{}", std::process::id());
    let channel = "pvrdma-doctor-report-done";
    // The report goes to the pane (a terminal), then the shell signals and waits, so the
    // pane stays for capture.
    let script = format!(
        "env -u COLUMNS -u NO_COLOR {} analyze --color never {}; tmux -L {socket} wait-for -S {channel}; sleep 60",
        bin.display(),
        scenario.display()
    );
    let started = tmux(&socket, &["new-session", "-d", "-x", "80", "-y", "150", &script]);
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    let waited = Command::new("timeout")
        .args(["60", "tmux", "-L", &socket, "wait-for", channel])
        .status()
        .expect("timeout runs");
    // -J joins lines the terminal wrapped: a line wider than 80 would show up whole.
    let captured = tmux(&socket, &["capture-pane", "-p", "-J", "-S", "-150"]);
    let _ = tmux(&socket, &["kill-server"]);
    assert!(waited.success(), "the report did not finish within 60 s");
    let text = String::from_utf8_lossy(&captured.stdout).into_owned();
    assert!(text.contains("dvs-single-uplink"), "{text}");
    assert!(text.contains("1 host: 1 with problems (esx01)"), "{text}");
    for line in text.lines() {
        let width = line.trim_end().chars().count();
        assert!(width <= 80, "{width} columns: {line}\n{text}");
    }
    // The same report piped (no terminal, no $COLUMNS) is laid out for 100 columns.
    let piped = Command::new(&bin)
        .args(["analyze", "--color", "never"])
        .arg(&scenario)
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    let piped = String::from_utf8_lossy(&piped.stdout).into_owned();
    assert!(piped.lines().any(|l| l.chars().count() > 80), "{piped}");
    assert!(piped.lines().all(|l| l.chars().count() <= 100), "{piped}");
}

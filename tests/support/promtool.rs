//! promtool (Debian package `prometheus`, which scripts/install-test-deps.sh installs)
//! linting an exposition, for every test binary that checks what the exporter serves.
use std::io::Write;
use std::process::Stdio;

pub const PROMTOOL: &str = "/usr/bin/promtool";

/// promtool's verdict on an exposition: (exit code, everything it printed).
pub fn check_metrics(text: &str) -> (i32, String) {
    assert!(
        std::path::Path::new(PROMTOOL).is_file(),
        "{PROMTOOL} is missing: run `sudo scripts/install-test-deps.sh` first (it installs the Debian package prometheus)"
    );
    let mut child = std::process::Command::new(PROMTOOL)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run promtool");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("feed promtool");
    let out = child.wait_with_output().expect("promtool ends");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), said)
}

/// `promtool check metrics` accepts `text` with no lint remark.
pub fn assert_accepts(what: &str, text: &str) {
    let (code, said) = check_metrics(text);
    assert_eq!(code, 0, "promtool check metrics rejects {what}: {said}\n{text}");
    assert!(said.trim().is_empty(), "promtool has lint remarks on {what}: {said}");
}

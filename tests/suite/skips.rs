//! A test that did not run says so. A test whose oracle is a real tool is
//! `#[ignore = "needs …: scripts/test.sh runs it"]`: a plain `cargo test` counts it as
//! ignored and names the tool, and `scripts/test.sh` (CI) runs it with `--include-ignored`,
//! where a missing tool fails it. What would undo that is a test that returns early on its
//! own (an environment variable, a tool looked for), which cargo counts as passed: none does.
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every file that holds tests: the integration tests and the crates' inline ones.
fn test_sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "tests",
        "src",
        "engine/src",
        "parsers",
        "nodeset",
        "ssh-config",
        "vsphere",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    files
}

const REASON: &str = ": scripts/test.sh runs it\"]";

#[test]
fn every_ignored_test_names_its_tool_and_no_test_skips_itself() {
    let mut ignored = 0;
    let mut wrong = Vec::new();
    for file in test_sources() {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let at = format!("{}:{}", file.display(), i + 1);
            let line = line.trim();
            if line.starts_with("#[ignore") {
                if line.starts_with("#[ignore = \"needs ") && line.ends_with(REASON) {
                    ignored += 1;
                } else {
                    wrong.push(format!(
                        "{at}: `{line}`: say what it needs, `#[ignore = \"needs TOOL{REASON}` (scripts/test.sh runs every ignored test)"
                    ));
                }
            }
            if line == "#[test]" {
                // The test's first statement, past its other attributes and the `fn` line.
                let body = lines[i + 1..]
                    .iter()
                    .map(|l| l.trim())
                    .skip_while(|l| l.starts_with("#[") || l.starts_with("///"))
                    .skip(1)
                    .take(3)
                    .collect::<Vec<_>>();
                if body.first().is_some_and(|l| l.starts_with("if ")) && body.contains(&"return;") {
                    wrong.push(format!(
                        "{at}: the test returns early on its own, and cargo counts it as passed: make it `#[ignore = \"needs TOOL{REASON}` and let it fail when the tool is missing"
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(
        ignored >= 50,
        "only {ignored} real-tool tests found: the scan is broken"
    );
}

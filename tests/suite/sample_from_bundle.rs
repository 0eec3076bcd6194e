//! `scripts/sample-from-bundle.sh`: a bundle a user sent becomes a sample scenario, its
//! golden reports, its line in the golden test and its confirmed origin in samples/README.md,
//! in one step. Run here into a copy of the repository's layout, never into samples/ itself.

use crate::support::client::Doctor;
use assert_cmd::Command;
use pvrdma_engine::catalogue::CATALOGUE;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn doctor(args: &[&str], dir: &Path) -> i32 {
    Doctor::new().args(args).current_dir(dir).run().code.unwrap_or(-1)
}

/// `demo --scenario samples/SCENARIO --bundle sent.tar.gz` (plus `extra`) run in `dir`;
/// the bundle's path.
fn demo_bundle(dir: &Path, scenario: &str, extra: &[&str]) -> std::path::PathBuf {
    let scenario = repo().join("samples").join(scenario);
    let mut args = vec![
        "demo",
        "--scenario",
        scenario.to_str().unwrap(),
        "--bundle",
        "sent.tar.gz",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--color", "never", "--no-progress"]);
    assert_eq!(doctor(&args, dir), 0, "demo run with {args:?}");
    dir.join("sent.tar.gz")
}

/// The script on `bundle` into the repository copy at `root`: (exit code, stderr).
fn script(root: &Path, bundle: &Path, name: &str) -> (i32, String) {
    let bin = Doctor::binary();
    let out = Command::new("bash")
        .arg(repo().join("scripts/sample-from-bundle.sh"))
        .arg("--root")
        .arg(root)
        .arg("--bin")
        .arg(&bin)
        .arg(bundle)
        .arg(name)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What the golden test reads and the script writes: samples/README.md, the golden test
/// and its snapshots folder.
fn repository_copy() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("samples")).unwrap();
    std::fs::create_dir_all(root.path().join("tests/suite/snapshots")).unwrap();
    std::fs::copy(repo().join("samples/README.md"), root.path().join("samples/README.md")).unwrap();
    std::fs::copy(
        repo().join("tests/suite/golden.rs"),
        root.path().join("tests/suite/golden.rs"),
    )
    .unwrap();
    root
}

/// A snapshot file without insta's `---` header.
fn snapshot_body(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rest = text.strip_prefix("---\n").expect("insta header");
    rest.split_once("\n---\n").expect("end of insta header").1.to_string()
}

fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_bundle_becomes_a_scenario_with_its_reviewed_report_and_confirmed_origin() {
    let work = tempfile::tempdir().unwrap();
    let bundle = demo_bundle(work.path(), "healthy-cluster", &[]);

    let root = repository_copy();
    let golden_before = std::fs::read_to_string(root.path().join("tests/suite/golden.rs")).unwrap();
    let readme_before = std::fs::read_to_string(root.path().join("samples/README.md")).unwrap();
    let (code, stderr) = script(root.path(), &bundle, "field-esx80");
    assert_eq!(code, 0, "{stderr}");

    // Every output of every host, verbatim as the bundle holds it.
    let unpacked = work.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    let status = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(&bundle)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(status.success());
    let dest = root.path().join("samples/field-esx80");
    for host in ["esx01", "esx02"] {
        for spec in CATALOGUE {
            let file = format!("{}.txt", spec.id);
            let want = std::fs::read(unpacked.join(host).join(&file)).unwrap();
            let got = std::fs::read(dest.join(host).join(&file)).unwrap_or_else(|e| panic!("{host}/{file}: {e}"));
            assert_eq!(got, want, "{host}/{file}");
        }
        assert_eq!(
            tree(&dest.join(host)),
            tree(&unpacked.join(host)),
            "{host}: the whole folder"
        );
    }
    assert!(!dest.join("manifest.json").exists() && !dest.join("report.json").exists());

    // Registered with analyze's exit code, once, inside SCENARIOS; nothing else changed.
    let golden = std::fs::read_to_string(root.path().join("tests/suite/golden.rs")).unwrap();
    let entry = "    (\"field-esx80\", 0),\n";
    assert_eq!(golden.matches(entry).count(), 1, "{golden}");
    assert_eq!(golden.replacen(entry, "", 1), golden_before);
    let scenarios = golden.split("const SCENARIOS").nth(1).unwrap();
    let list = scenarios.split("\n];").next().unwrap();
    assert!(list.ends_with(entry.trim_end()), "the entry closes the list: {list}");

    // Its golden reports are the reviewed reports of the scenario it was captured from.
    let snaps = root.path().join("tests/suite/snapshots");
    let reviewed = repo().join("tests/suite/snapshots");
    assert_eq!(
        snapshot_body(&snaps.join("suite__golden__field-esx80.human.snap")),
        snapshot_body(&reviewed.join("suite__golden__healthy-cluster.human.snap"))
    );
    let json: serde_json::Value =
        serde_json::from_str(&snapshot_body(&snaps.join("suite__golden__field-esx80.json.snap"))).unwrap();
    assert_eq!(json["exit_code"], 0);

    // The origin, from the hosts' own outputs, marked as confirmed.
    let readme = std::fs::read_to_string(root.path().join("samples/README.md")).unwrap();
    let added = readme
        .strip_prefix(readme_before.as_str())
        .expect("appended at the end");
    assert!(added.contains("## Confirmed captures"), "{added}");
    assert!(
        added.contains("### `field-esx80` (esx01, esx02) - expected: every adapter judged"),
        "{added}"
    );
    assert!(added.contains("**Confirmed capture**"), "{added}");
    assert!(added.contains("(redacted: no)"), "{added}");
    for host in ["esx01", "esx02"] {
        let line = added
            .lines()
            .find(|l| l.starts_with(&format!("- `{host}`:")))
            .unwrap_or_else(|| panic!("{host}: {added}"));
        assert!(
            line.contains("VMware ESXi 8.0.2 (build 22380479, update 2, patch 0)"),
            "{line}"
        );
        assert!(
            line.contains("`vmnic2` nmlx5_core (Mellanox Technologies MT28800 Family [ConnectX-5 Ex])"),
            "{line}"
        );
    }

    // The same name again, or a damaged bundle: refused, and the copy is left as it was.
    let before = tree(root.path());
    let (code, stderr) = script(root.path(), &bundle, "field-esx80");
    assert_eq!(code, 1);
    assert!(stderr.contains("exists already"), "{stderr}");
    let mut damaged = std::fs::read(&bundle).unwrap();
    damaged.truncate(damaged.len() / 2);
    let cut = work.path().join("cut.tar.gz");
    std::fs::write(&cut, damaged).unwrap();
    let (code, stderr) = script(root.path(), &cut, "field-cut");
    assert_eq!(code, 1);
    assert!(stderr.contains("analyze refused the bundle"), "{stderr}");
    assert_eq!(tree(root.path()), before);
}

#[test]
fn a_redacted_bundle_with_an_unreadable_output_keeps_its_unknown_verdict() {
    let work = tempfile::tempdir().unwrap();
    let bundle = demo_bundle(work.path(), "broken-output", &["--redact"]);
    let root = repository_copy();
    let (code, stderr) = script(root.path(), &bundle, "field-drift");
    assert_eq!(code, 0, "{stderr}");
    let golden = std::fs::read_to_string(root.path().join("tests/suite/golden.rs")).unwrap();
    assert!(golden.contains("    (\"field-drift\", 3),\n"), "{golden}");
    let human = snapshot_body(
        &root
            .path()
            .join("tests/suite/snapshots/suite__golden__field-drift.human.snap"),
    );
    assert!(
        human.contains("`esxcli rdma device list` printed output that did not parse"),
        "{human}"
    );
    assert!(!human.contains("esx01"), "the redacted names stay redacted: {human}");
    let readme = std::fs::read_to_string(root.path().join("samples/README.md")).unwrap();
    assert!(readme.contains("(redacted: yes)"), "{readme}");
}

//! Replays the checked-in fuzz corpus (`fuzz/corpus/<target>/`, and the inputs that once
//! crashed a target, `fuzz/regressions/<target>/<what broke>`) through the very functions
//! the `cargo fuzz` targets run (`fuzz/harness.rs`), on stable: every input the fuzzer kept
//! for reaching new code, and every input that once crashed a target, stays a test case
//! without nightly or libFuzzer. See `fuzz/README.md`.
#[path = "../../fuzz/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus")
}

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs every input of one target; a panic names the file so `cargo fuzz run <target>
/// <file>` reproduces it.
fn replay(target: &str) {
    let (_, run) = harness::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .unwrap_or_else(|| panic!("no fuzz target {target}"));
    let mut files = inputs(&corpus_dir().join(target));
    assert!(!files.is_empty(), "fuzz/corpus/{target} is empty");
    let regressions = corpus_dir().join("../regressions").join(target);
    if regressions.is_dir() {
        files.extend(inputs(&regressions));
    }
    for file in files {
        let data = std::fs::read(&file).unwrap();
        let outcome = std::panic::catch_unwind(|| run(&data));
        assert!(outcome.is_ok(), "fuzz target {target} fails on {}", file.display());
    }
}

#[test]
fn every_fuzz_target_has_a_checked_in_corpus() {
    let mut on_disk: Vec<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut targets: Vec<String> = harness::TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    targets.sort();
    assert_eq!(on_disk, targets, "fuzz/corpus/ and harness::TARGETS disagree");
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/Cargo.toml")).unwrap();
    for t in &targets {
        assert!(
            manifest.contains(&format!("path = \"fuzz_targets/{t}.rs\"")),
            "fuzz/Cargo.toml has no [[bin]] for {t}"
        );
    }
}

#[test]
fn replay_rdma() {
    replay("rdma");
}

#[test]
fn replay_vmkping() {
    replay("vmkping");
}

#[test]
fn replay_nic() {
    replay("nic");
}

#[test]
fn replay_vswitch() {
    replay("vswitch");
}

#[test]
fn replay_ip_interface() {
    replay("ip_interface");
}

#[test]
fn replay_advanced() {
    replay("advanced");
}

#[test]
fn replay_firewall() {
    replay("firewall");
}

#[test]
fn replay_version() {
    replay("version");
}

#[test]
fn replay_vm() {
    replay("vm");
}

#[test]
fn replay_vsish() {
    replay("vsish");
}

#[test]
fn replay_vmx() {
    replay("vmx");
}

#[test]
fn replay_diagnosis() {
    replay("diagnosis");
}

/// The chunk layout the diagnosis target reads really yields the hosts and outputs it
/// encodes (otherwise the whole-host fuzzing would explore one empty host).
#[test]
fn diagnosis_input_layout_round_trips() {
    let input = harness::encode(
        0,
        &[
            (
                "esxcli_system_version_get",
                b"   Product: VMware ESXi\n   Version: 8.0.2\n",
            ),
            ("vsish_pvrdma_devices_ls", b"7_0/\n"),
        ],
    );
    let mut second = vec![harness::CHUNK];
    second.extend(harness::encode(1, &[("esxcli_vm_process_list", b"")]));
    let hosts = harness::captures(&[input, second].concat());
    assert_eq!(hosts.len(), 2);
    assert_eq!(hosts[0].host, "esx-a");
    assert_eq!(
        hosts[0].outputs["esxcli_system_version_get"].stdout,
        "   Product: VMware ESXi\n   Version: 8.0.2\n"
    );
    assert_eq!(hosts[0].outputs["vsish_pvrdma_devices_ls"].exit_status, Some(0));
    assert!(hosts[1].outputs.contains_key("esxcli_vm_process_list"));
}

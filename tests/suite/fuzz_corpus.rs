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
fn replay_frames() {
    replay("frames");
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

/// The diagnosis target's "nothing passes on cut evidence" holds section by section: a
/// vsish batch cut by a timeout keeps the section that ended (its adapter reads `hca`)
/// and not the one it cut (unknown), and the harness accepts exactly that.
#[test]
fn a_cut_batch_is_evidence_only_for_its_whole_sections() {
    use pvrdma_engine::catalogue;
    let block = |wid: &str| {
        format!("PVRDMA Device Properties {{\n   VMM leader ID of VM:{wid}\n   adapter index:0\n   MAC address:00:50:56:8a:9f:c2\n   Physical HCA available:1\n   RoCE version:2\n   Active MTU:4096\n}}\n")
    };
    let props = format!(
        "==> 2101874_0 <==\n{}<== 2101874_0 exit 0 ==>\n==> 2101875_0 <==\n{}",
        block("2101874"),
        block("2101875")
    );
    let mut input = harness::encode(
        0,
        &[(catalogue::PVRDMA_DEVICES_LS, b"2101874_0/\n2101875_0/\n".as_slice())],
    );
    let selector = catalogue::CATALOGUE
        .iter()
        .position(|s| s.id == catalogue::PVRDMA_PROPERTIES)
        .expect("id");
    input.push(harness::CHUNK);
    // No exit status, `timeout_hit`: the batch was cut by the command timeout.
    input.extend_from_slice(&[selector as u8, 0x08 | 0x03]);
    input.extend_from_slice(props.as_bytes());
    harness::diagnosis(&input);
    let d = pvrdma_engine::diagnose::diagnose(&harness::captures(&input));
    let verdicts: Vec<_> = d.hosts[0]
        .vms
        .iter()
        .flat_map(|v| v.adapters.iter().map(move |a| (v.world_id, a.verdict)))
        .collect();
    use pvrdma_engine::diagnose::Verdict;
    assert!(verdicts.contains(&(Some(2101874), Verdict::Hca)), "{verdicts:?}");
    assert!(verdicts.contains(&(Some(2101875), Verdict::Unknown)), "{verdicts:?}");
}

/// Every catalogue command's parser is fuzzed: the parser table gives it a family that is
/// a real target (the target runs every parser of its family, and `fuzz/seed.py` seeds it
/// with the command's samples, both read from the table).
#[test]
fn every_catalogue_command_has_a_fuzzed_family() {
    use pvrdma_parsers::by_id::FAMILIES;
    for spec in pvrdma_engine::catalogue::CATALOGUE {
        let family = FAMILIES.iter().find(|(id, _)| *id == spec.id).map(|(_, f)| *f);
        let family = family.unwrap_or_else(|| panic!("{}: no row in the parser table", spec.id));
        assert!(
            harness::TARGETS.iter().any(|(name, _)| *name == family),
            "{}: no fuzz target {family}",
            spec.id
        );
    }
    // seed.py reads the family column with this pattern; a row it misses is seeded nowhere.
    let table = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("parsers/src/by_id.rs")).unwrap();
    let seed = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seed.py")).unwrap();
    assert!(seed.contains(r#"FAMILY = dict(re.findall(r'= "(\w+)" => [\w:]+ in "(\w+)";', TABLE))"#));
    for (id, family) in FAMILIES {
        let row = table.lines().find(|l| l.contains(&format!("= \"{id}\" => ")));
        assert!(
            row.is_some_and(|l| l.trim_end().ends_with(&format!(" in \"{family}\";"))),
            "{id}: its row of parsers/src/by_id.rs is not on one line as seed.py reads it: {row:?}"
        );
    }
}

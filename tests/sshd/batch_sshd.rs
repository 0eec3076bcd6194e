//! One query of a concurrent batch costs only its own answer: against a real OpenSSH
//! server whose login shell is busybox `sh`, a host with 200 PVRDMA adapters whose
//! `vsish` properties query hangs at the first, a middle or the last adapter, is killed,
//! floods, or whose two largest answers are written at the same time. Every other
//! adapter keeps its `hca` verdict, and the report (human, JSON and the bundle manifest)
//! names the one that did not answer whole.
use crate::support;

use pvrdma_engine::catalogue;
use serde_json::Value;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use support::client::{alias, Client, Doctor};
use support::*;

const ADAPTERS: usize = 200;
const COMMAND_TIMEOUT: &str = "8s";

fn wid(i: usize) -> usize {
    2_200_000 + i
}

fn key(i: usize) -> String {
    format!("{}_0", wid(i))
}

/// A host (esx01's samples otherwise) with `ADAPTERS` running VMs of one PVRDMA adapter
/// each: process list, vsish listing and properties, port lists and `.vmx` lines.
fn many_adapters(dir: &Path) {
    let base = samples_host("healthy-cluster", "esx01");
    for f in std::fs::read_dir(&base).expect("samples") {
        let f = f.expect("entry");
        std::fs::copy(f.path(), dir.join(f.file_name())).expect("copy");
    }
    let template = std::fs::read_to_string(base.join(format!("{}.txt", catalogue::PVRDMA_PROPERTIES))).expect("props");
    let block: String = template
        .lines()
        .skip_while(|l| !l.ends_with('{'))
        .take_while(|l| !l.starts_with("<== "))
        .map(|l| format!("{l}\n"))
        .collect();
    let (mut list, mut ls, mut ports, mut props, mut vmx) = (
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    );
    for i in 0..ADAPTERS {
        let (wid, key) = (wid(i), key(i));
        let name = format!("hpc-node{i:03}");
        let path = format!("/vmfs/volumes/ds1/{name}/{name}.vmx");
        let mac = format!("00:50:56:9a:{:02x}:{:02x}", i / 256, i % 256);
        let _ = write!(
            list,
            "{name}\n   World ID: {wid}\n   Process ID: 0\n   VMX Cartel ID: {}\n   UUID: 42 31 0d 66 62 8c b0 5d-46 6f 24 42 52 c6 95 8f\n   Display Name: {name}\n   Config File: {path}\n\n",
            wid - 1
        );
        let _ = writeln!(ls, "{key}/");
        let _ = write!(
            ports,
            "==> {wid} <==\n   Port ID: {}\n   vSwitch: DSwitch-RDMA\n   Portgroup: DPG-PVRDMA\n   DVPort ID: 24\n   MAC Address: {mac}\n   IP Address: 0.0.0.0\n   Team Uplink: vmnic2\n   Uplink Port ID: 50331650\n   Active Filters: \n<== {wid} exit 0 ==>\n",
            50_331_700 + i
        );
        let body = block
            .replace("VMM leader ID of VM:2101874", &format!("VMM leader ID of VM:{wid}"))
            .replace("00:50:56:8a:9f:c2", &mac);
        let _ = write!(props, "==> {key} <==\n{body}<== {key} exit 0 ==>\n");
        let _ = write!(
            vmx,
            "==> {path} <==\nvirtualHW.version = \"19\"\nmemSize = \"16384\"\nsched.mem.pin = \"TRUE\"\ndisplayName = \"{name}\"\nethernet1.virtualDev = \"vrdma\"\nethernet1.networkName = \"DPG-PVRDMA\"\nethernet1.addressType = \"vpx\"\nethernet1.generatedAddress = \"{mac}\"\nethernet1.present = \"TRUE\"\n<== {path} exit 0 ==>\n"
        );
    }
    let file = |id: &str| dir.join(format!("{id}.txt"));
    std::fs::write(file(catalogue::VM_PROCESS_LIST), list).expect("list");
    std::fs::write(file(catalogue::PVRDMA_DEVICES_LS), ls).expect("ls");
    std::fs::write(file(catalogue::VM_PORT_LIST), ports).expect("ports");
    std::fs::write(file(catalogue::PVRDMA_PROPERTIES), props).expect("props");
    std::fs::write(file(catalogue::VMX_PVRDMA_LINES), vmx).expect("vmx");
}

/// What one run gave: exit code, JSON report, and from its bundle the manifest and the
/// human report.
struct Run {
    code: Option<i32>,
    json: Value,
    manifest: Value,
    human: String,
    stderr: String,
}

/// Starts the host misbehaving as `tweak` says and runs the binary on it, with a bundle.
fn run(tweak: impl FnOnce(&mut SshdOptions)) -> Run {
    let client = Client::new();
    let samples = client.dir.path().join("host");
    std::fs::create_dir(&samples).expect("samples dir");
    many_adapters(&samples);
    // The test user's shell reads the samples.
    let chmod = std::process::Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(&samples)
        .status();
    assert!(chmod.is_ok_and(|s| s.success()));
    set_mode(client.dir.path(), 0o755);
    let mut o = SshdOptions::new(samples);
    client.authorize(&mut o);
    tweak(&mut o);
    let sshd = Sshd::start(o);
    client.trust(&sshd);
    client.write_config(&alias("busy", &sshd));
    let bundle = client.dir.path().join("busy.tar.gz");
    let out = client
        .doctor()
        .args(["--format", "json", "--color", "never", "--connect-timeout", "20s"])
        .args(["--command-timeout", COMMAND_TIMEOUT, "--timeout", "120s"])
        .arg("--bundle")
        .arg(&bundle)
        .arg("busy")
        .env("COLUMNS", "80")
        .run();
    let json: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}\n{}", out.stdout, out.stderr, sshd.log()));
    let (manifest, human) = bundle_reports(&bundle);
    // The bundle, analysed again, reads exactly as the live run did.
    let analyzed = Doctor::new()
        .args(["analyze", "--format", "json", "--color", "never"])
        .arg(&bundle)
        .run();
    assert_eq!(analyzed.stdout, out.stdout, "the bundle reads differently");
    Run {
        code: out.code,
        json,
        manifest,
        human,
        stderr: out.stderr,
    }
}

fn bundle_reports(bundle: &PathBuf) -> (Value, String) {
    let file = std::fs::File::open(bundle).expect("bundle");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let (mut manifest, mut human) = (Value::Null, String::new());
    for entry in archive.entries().expect("entries") {
        let mut entry = entry.expect("entry");
        let path = entry.path().expect("path").display().to_string();
        let mut text = String::new();
        if path.ends_with("manifest.json") {
            entry.read_to_string(&mut text).expect("manifest");
            manifest = serde_json::from_str(&text).expect("manifest JSON");
        } else if path.ends_with("report.txt") {
            entry.read_to_string(&mut human).expect("report.txt");
        }
    }
    (manifest, human)
}

/// Every adapter but `bad` is `hca`; `bad` is unknown with a reason holding `words`.
fn only_one_unknown(r: &Run, bad: &str, words: &str) -> String {
    let host = &r.json["hosts"][0];
    let mut unknown = Vec::new();
    let mut hca = 0;
    for vm in host["vms"].as_array().expect("vms") {
        for a in vm["adapters"].as_array().expect("adapters") {
            match a["verdict"].as_str() {
                Some("hca") => hca += 1,
                _ => unknown.push((vm["world_id"].clone(), a["reasons"].clone())),
            }
        }
    }
    assert_eq!(hca, ADAPTERS - 1, "{unknown:?}\n{}", r.stderr);
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    let reason = unknown[0].1[0].as_str().expect("reason").to_string();
    assert_eq!(format!("{}_0", unknown[0].0), bad, "{reason}");
    assert!(reason.contains(words), "{reason}");
    assert_eq!(host["status"], "incomplete", "{host}");
    assert_eq!(r.code, Some(3));
    reason
}

/// The properties batch as the manifest and the JSON `incomplete_outputs` list it.
fn properties_entries(r: &Run) -> (Value, Value) {
    let manifest = r.manifest["hosts"][0]["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .find(|c| c["id"] == catalogue::PVRDMA_PROPERTIES)
        .cloned()
        .expect("properties in the manifest");
    let json = r.json["hosts"][0]["incomplete_outputs"]
        .as_array()
        .expect("incomplete_outputs")
        .iter()
        .find(|c| c["command"] == catalogue::PVRDMA_PROPERTIES)
        .cloned()
        .unwrap_or_else(|| panic!("properties not among incomplete outputs: {}", r.json));
    (manifest, json)
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn a_hung_vsish_at_the_first_a_middle_or_the_last_adapter_costs_only_that_adapter() {
    let timeout_words = format!("did not finish within --command-timeout {COMMAND_TIMEOUT}");
    for at in [0, ADAPTERS / 2, ADAPTERS - 1] {
        let bad = key(at);
        let r = run(|o| o.key_hang = vec![bad.clone()]);
        let reason = only_one_unknown(&r, &bad, &timeout_words);
        assert!(reason.contains(&format!("vsish properties of {bad}")), "{reason}");
        let (manifest, json) = properties_entries(&r);
        assert_eq!(json["event"], "timed-out");
        let outstanding = serde_json::json!([{"key": bad, "reason": timeout_words}]);
        assert_eq!(json["unfinished"], outstanding, "{json}");
        assert_eq!(manifest["unfinished"], outstanding, "{manifest}");
        assert_eq!(manifest["outcome"]["kind"], "timed-out");
        let sentence = format!("vsish properties of {bad} {timeout_words}");
        let flat = r.human.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(&sentence), "{}", r.human);
        // The bundle's report is rendered 100 columns wide (not a terminal).
        assert!(r.human.lines().all(|l| l.chars().count() <= 100), "{}", r.human);
    }
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn a_killed_query_is_its_own_adapters_error_and_nothing_else() {
    let bad = key(57);
    let r = run(|o| o.key_kill = vec![bad.clone()]);
    // The query ended (killed: status 137) and its answer arrived whole: it is that
    // adapter's own failure, not a broken batch.
    only_one_unknown(&r, &bad, "status 137");
    let host = &r.json["hosts"][0];
    assert_eq!(host["incomplete_outputs"], serde_json::json!([]), "{host}");
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn a_flooding_query_is_cut_on_the_host_and_costs_only_its_adapter() {
    let bad = key(120);
    let r = run(|o| {
        o.key_flood = vec![bad.clone()];
        o.flood_bytes = 20 * 1024 * 1024;
    });
    let reason = only_one_unknown(&r, &bad, "printed more than 256 KiB");
    assert!(reason.contains(&format!("vsish properties of {bad}")), "{reason}");
    let (manifest, json) = properties_entries(&r);
    assert_eq!(json["event"], "unfinished-answers", "{json}");
    assert_eq!(json["unfinished"][0]["key"], bad.as_str());
    assert_eq!(manifest["unfinished"][0]["key"], bad.as_str());
    assert_eq!(manifest["outcome"]["kind"], "exited");
    // What reached the client stayed far below the per-command cap.
    assert!(
        manifest["stdout_bytes"].as_u64().expect("bytes") < 2 * 1024 * 1024,
        "{manifest}"
    );
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn two_large_answers_written_at_the_same_time_both_arrive_whole() {
    let big = [key(10), key(11)];
    let r = run(|o| {
        o.key_big = big.to_vec();
        o.key_hang = vec![key(150)];
    });
    // Both large answers are evidence (their padding members are kept), the hung one
    // is the only unknown.
    only_one_unknown(&r, &key(150), "did not finish");
    let host = &r.json["hosts"][0];
    for b in &big {
        let wid: u64 = b.trim_end_matches("_0").parse().expect("wid");
        let vm = host["vms"]
            .as_array()
            .expect("vms")
            .iter()
            .find(|v| v["world_id"] == wid)
            .expect("vm");
        assert_eq!(vm["adapters"][0]["verdict"], "hca", "{vm}");
    }
}

#[test]
#[ignore = "needs a real OpenSSH sshd: scripts/test.sh runs it"]
fn a_hung_vmx_read_costs_the_vm_checks_their_pass_and_names_the_file() {
    let path = "/vmfs/volumes/ds1/hpc-node077/hpc-node077.vmx";
    let r = run(|o| o.key_hang = vec![path.to_string()]);
    let host = &r.json["hosts"][0];
    // vsish answered for every adapter.
    let hca = host["vms"]
        .as_array()
        .expect("vms")
        .iter()
        .filter(|v| v["adapters"][0]["verdict"] == "hca")
        .count();
    assert_eq!(hca, ADAPTERS, "{host}");
    let check = host["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == "vm-hardware-version")
        .expect("check");
    assert_eq!(check["status"], "unknown", "{check}");
    let summary = check["summary"].as_str().expect("summary");
    assert!(
        summary.contains(path) && summary.contains("did not finish"),
        "{summary}"
    );
    let vmx = host["incomplete_outputs"]
        .as_array()
        .expect("incomplete_outputs")
        .iter()
        .find(|c| c["command"] == catalogue::VMX_PVRDMA_LINES)
        .expect("vmx inventory listed");
    assert_eq!(vmx["unfinished"][0]["key"], path, "{vmx}");
    assert_eq!(vmx["unfinished"].as_array().map(Vec::len), Some(1));
}

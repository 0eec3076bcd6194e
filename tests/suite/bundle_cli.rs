//! `pvrdma-doctor analyze` on bundles, through the real binary: a bundle reproduces the
//! report of the run that wrote it byte for byte, a damaged bundle is refused with a clear
//! message and exit code 2, and a vm-support bundle is analysed as far as it can be.
use crate::support::client::Doctor;
use pvrdma_doctor::app::write_support_bundle;
use pvrdma_doctor::cli::BundleArgs;
use pvrdma_doctor::offline::load_captures;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

fn analyze(path: &Path) -> (String, String, i32) {
    let out = Doctor::new()
        .args(["analyze", "--color", "never", "--format", "json"])
        .arg(path)
        .output();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

fn bundle_args(path: &Path, redact: bool) -> BundleArgs {
    BundleArgs {
        bundle: Some(path.to_path_buf()),
        redact,
        force: false,
    }
}

fn entry(bundle: &Path, name: &str) -> String {
    let file = std::fs::File::open(bundle).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    for e in archive.entries().unwrap() {
        let mut e = e.unwrap();
        if e.path().unwrap().to_string_lossy() == name {
            let mut text = String::new();
            e.read_to_string(&mut text).unwrap();
            return text;
        }
    }
    panic!("no {name} in {}", bundle.display());
}

#[test]
fn analyze_of_a_bundle_reproduces_the_report_of_its_run() {
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(samples())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.ends_with("vm-support"))
        .collect();
    scenarios.sort();
    assert!(scenarios.len() > 5);
    let dir = tempfile::tempdir().unwrap();
    for scenario in scenarios {
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        let (direct, _, direct_code) = analyze(&scenario);
        let captures = load_captures(&scenario).unwrap();
        let bundle = dir.path().join(format!("{name}.tar.gz"));
        let started = SystemTime::now();
        write_support_bundle(
            &bundle_args(&bundle, false),
            &captures,
            &pvrdma_engine::diagnose::diagnose(&captures),
            started,
            started + Duration::from_secs(2),
            false,
        )
        .unwrap();
        // One difference on purpose: of a capture folder, the report says how to send an
        // output that did not parse (a redacted bundle); a bundle is what a run sends.
        let mut run: serde_json::Value = serde_json::from_str(&direct).unwrap();
        for host in run["hosts"].as_array_mut().unwrap() {
            host.as_object_mut().unwrap().remove("send_evidence");
        }
        let bundled: serde_json::Value = serde_json::from_str(&entry(&bundle, "report.json")).unwrap();
        assert_eq!(bundled, run, "{name}: bundled report");
        let (again, stderr, code) = analyze(&bundle);
        assert_eq!(
            again,
            entry(&bundle, "report.json"),
            "{name}: analyze of the bundle\n{stderr}"
        );
        assert_eq!(code, direct_code, "{name}: exit code");
    }
}

#[test]
fn a_bundle_carries_its_page_and_analyze_of_it_shows_the_outputs_behind_each_finding() {
    let dir = tempfile::tempdir().unwrap();
    let captures = load_captures(&samples().join("dvs-two-uplinks")).unwrap();
    let bundle = dir.path().join("case-1234.tar.gz");
    let started = SystemTime::UNIX_EPOCH + Duration::from_secs(1_790_000_000);
    write_support_bundle(
        &bundle_args(&bundle, false),
        &captures,
        &pvrdma_engine::diagnose::diagnose(&captures),
        started,
        started + Duration::from_secs(3),
        false,
    )
    .unwrap();
    // The failing check cites the vDS list; its output (a VM's port among its lines) is
    // in the page the bundle carries, and in the page analyze makes of the bundle.
    let port_line = "Client: hpc-node01.eth1";
    let bundled = entry(&bundle, "report.html");
    assert!(bundled.contains("dvs-single-uplink fails on esx01"), "{bundled}");
    assert!(bundled.contains(port_line), "the bundle's page carries the output");
    // Its captures came from a capture folder here; a live run's say "over SSH".
    assert!(bundled.contains("<dt>Read</dt><dd>from the capture folder (1 host)</dd>"));
    assert!(
        bundled.contains("<time datetime=\"2026-09-21T14:13:20Z\">"),
        "the run's own time"
    );
    let out = Doctor::new()
        .args(["analyze", "--format", "html"])
        .arg(&bundle)
        .output();
    assert_eq!(out.status.code(), Some(1));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.contains("from the pvrdma-doctor support bundle case-1234.tar.gz (1 host)"),
        "{page}"
    );
    assert!(page.contains("as the bundle recorded it"));
    assert!(page.contains("collected by pvrdma-doctor"));
    assert!(page.contains(port_line), "analyze of the bundle shows the output");
    // Of the capture folder it was made from, the same outputs (analyze reads offline).
    let out = Doctor::new()
        .args(["analyze", "--format", "html"])
        .arg(samples().join("dvs-two-uplinks"))
        .output();
    assert!(String::from_utf8(out.stdout).unwrap().contains(port_line));
}

#[test]
fn damaged_bundles_are_refused_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let captures = load_captures(&samples().join("healthy-cluster")).unwrap();
    let bundle = dir.path().join("b.tar.gz");
    let now = SystemTime::now();
    write_support_bundle(
        &bundle_args(&bundle, false),
        &captures,
        &pvrdma_engine::diagnose::diagnose(&captures),
        now,
        now,
        false,
    )
    .unwrap();

    // Flip one verdict line inside the archive and repack it.
    let file = std::fs::File::open(&bundle).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let tampered = dir.path().join("tampered.tar.gz");
    let out = std::fs::File::create(&tampered).unwrap();
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(out, flate2::Compression::fast()));
    let mut flipped = false;
    for e in archive.entries().unwrap() {
        let mut e = e.unwrap();
        let mut header = e.header().clone();
        let path = e.path().unwrap().into_owned();
        let mut data = Vec::new();
        e.read_to_end(&mut data).unwrap();
        let text = String::from_utf8_lossy(&data);
        if text.contains("Physical HCA available:1") && !flipped {
            data = text
                .replacen("Physical HCA available:1", "Physical HCA available:0", 1)
                .into_bytes();
            flipped = true;
        }
        header.set_size(data.len() as u64);
        builder.append_data(&mut header, &path, data.as_slice()).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap();
    assert!(flipped);

    let (stdout, stderr, code) = analyze(&tampered);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("does not match the sha256 in manifest.json"),
        "{stderr}"
    );
}

#[test]
fn vm_support_bundle_lists_pvrdma_vms_as_unknown_with_the_reason() {
    let (stdout, stderr, code) = analyze(&samples().join("vm-support"));
    assert_eq!(code, 3, "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let host = &report["hosts"][0];
    assert_eq!(host["host"], "esx01");
    let vms = host["vms"].as_array().unwrap();
    assert_eq!(vms.len(), 1, "only the VM with a vrdma adapter: {vms:?}");
    let adapter = &vms[0]["adapters"][0];
    assert_eq!(adapter["verdict"], "unknown");
    assert!(
        adapter["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str().unwrap().contains("no vsish data")),
        "{adapter}"
    );
    // Host checks still ran on the localcli captures.
    let tagged = host["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "pvrdma-vmknic-tagged")
        .unwrap();
    assert_eq!(tagged["status"], "pass", "{tagged}");
}

#[test]
fn redacted_bundle_from_the_cli_path_has_its_map_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let captures = load_captures(&samples().join("healthy-cluster")).unwrap();
    let bundle = dir.path().join("r.tar.gz");
    let now = SystemTime::now();
    write_support_bundle(
        &bundle_args(&bundle, true),
        &captures,
        &pvrdma_engine::diagnose::diagnose(&captures),
        now,
        now,
        false,
    )
    .unwrap();
    let map = dir.path().join("r.tar.gz.redaction-map.json");
    let map: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(map).unwrap()).unwrap();
    assert_eq!(map["hosts"]["esx01"], "host-001");
    let manifest: serde_json::Value = serde_json::from_str(&entry(&bundle, "manifest.json")).unwrap();
    assert_eq!(manifest["redacted"], true);
    assert!(manifest["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| !a.as_str().unwrap().contains("esx0")));
    let report = entry(&bundle, "report.json");
    assert!(!report.contains("esx01") && report.contains("host-001"));
    // A second run refuses to overwrite the map as well as the bundle.
    let err = write_support_bundle(
        &bundle_args(&bundle, true),
        &captures,
        &pvrdma_engine::diagnose::diagnose(&captures),
        now,
        now,
        false,
    )
    .unwrap_err();
    assert!(format!("{err:#}").contains("--force"), "{err:#}");
}

fn doctor(args: &[&str], dir: &Path) -> (String, String, i32) {
    let out = Doctor::new()
        .args(args)
        .current_dir(dir)
        .env_remove("PVRDMA_DOCTOR_PASSWORD")
        .timeout(Duration::from_secs(120))
        .output();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn demo_run_with_bundle_then_analyze_prints_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = samples().join("healthy-cluster");
    let scenario = scenario.to_str().unwrap();
    let common = ["--format", "json", "--color", "never", "--no-progress"];
    let mut args = vec!["demo", "--scenario", scenario, "--bundle", "run.tar.gz"];
    args.extend(common);
    let (live, stderr, code) = doctor(&args, dir.path());
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("support bundle written to run.tar.gz"), "{stderr}");
    let bundle = dir.path().join("run.tar.gz");
    let (again, stderr, again_code) = doctor(&["analyze", "run.tar.gz", "--format", "json"], dir.path());
    assert_eq!(again, live, "{stderr}");
    assert_eq!(again_code, code);
    let manifest: serde_json::Value = serde_json::from_str(&entry(&bundle, "manifest.json")).unwrap();
    let argv: Vec<&str> = manifest["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(argv.get(1..3), Some(&["demo", "--scenario"][..]));

    // Run again without --force: refused before any host is contacted, the bundle intact.
    let before = std::fs::read(&bundle).unwrap();
    let (stdout, stderr, code) = doctor(&args, dir.path());
    assert_eq!(code, 2);
    assert!(stdout.is_empty(), "collection ran: {stdout}");
    assert!(stderr.contains("already exists; pass --force"), "{stderr}");
    assert_eq!(std::fs::read(&bundle).unwrap(), before);

    // --redact: the map lands beside the bundle, and the bundled report holds tokens.
    let mut args = vec!["demo", "--scenario", scenario, "--bundle", "red.tar.gz", "--redact"];
    args.extend(common);
    let (_, stderr, code) = doctor(&args, dir.path());
    assert_eq!(code, 0, "{stderr}");
    assert!(dir.path().join("red.tar.gz.redaction-map.json").is_file());
    let report = entry(&dir.path().join("red.tar.gz"), "report.json");
    assert!(report.contains("host-001") && !report.contains("esx01"), "{report}");
}

#[test]
fn ctrl_c_still_writes_the_bundle_with_what_is_missing_and_why() {
    let dir = tempfile::tempdir().unwrap();
    // Every simulated command takes 30 s, so once a host has logged in (said with -v) the
    // run is mid-collection, and Ctrl-C is already caught.
    let run = Doctor::new()
        .args(["demo", "--latency", "30s", "--no-progress", "--format", "json", "-v"])
        .args(["--bundle", "interrupted.tar.gz"])
        .current_dir(dir.path())
        .spawn_until("logged in as", Duration::from_secs(60));
    run.interrupt();
    let out = run.wait(Duration::from_secs(60));
    let (live, stderr) = (&out.stdout, &out.stderr);
    assert!(stderr.contains("support bundle written"), "{stderr}");

    let bundle = dir.path().join("interrupted.tar.gz");
    let manifest: serde_json::Value = serde_json::from_str(&entry(&bundle, "manifest.json")).unwrap();
    assert_eq!(manifest["interrupted"], true);
    let hosts = manifest["hosts"].as_array().unwrap();
    // The demo fleet has one host nobody listens on; the others were cut off by Ctrl-C.
    let cut_off: Vec<_> = hosts.iter().filter(|h| h["error"]["kind"] != "unreachable").collect();
    assert!(!cut_off.is_empty() && cut_off.len() < hosts.len(), "{manifest}");
    for h in cut_off {
        assert_ne!(h["outcome"], "complete", "{h}");
        let missing = h["missing"].as_array().unwrap();
        assert!(!missing.is_empty(), "{h}");
        for m in missing {
            assert_eq!(m["reason"]["kind"], "interrupted", "{m}");
        }
    }
    // Offline, the bundle tells the same story the interrupted run printed.
    let (again, _, code) = analyze(&bundle);
    assert_eq!(&again, live);
    // The interrupted run exits 130 as shells expect; the bundle, read later, is simply
    // incomplete.
    assert_eq!(out.code, Some(130));
    assert_eq!(code, 3);
}

//! Support bundles as a support engineer relies on them: what a live run wrote reads back
//! the same, the manifest tells what happened, and a damaged or hostile archive is refused
//! rather than analysed.
use pvrdma_doctor::bundle::manifest::sha256_hex;
use pvrdma_doctor::bundle::{write_bundle, BundleError, BundleMeta, ReadLimits};
use pvrdma_doctor::offline::{load_captures, load_captures_with};
use pvrdma_engine::capture::{CaptureSource, ErrorKind, Failure, HostCapture, RawOutput};
use pvrdma_engine::catalogue::{self, CATALOGUE};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

const SAMPLE: &str = "samples/vm-support/esx-esx01-2026-11-20--10.15-123456";

/// The output of `id` in the vm-support sample; for a command vm-support does not hold
/// (a batched query, `nic pauseParams list`), the composed sample of a live host.
fn sample_stdout(id: &str) -> String {
    let spec = catalogue::spec(id).unwrap();
    let in_bundle = pvrdma_doctor::vmsupport::command_file_name(spec.command)
        .map(|file| Path::new(SAMPLE).join("commands").join(file))
        .filter(|path| path.is_file());
    let path = in_bundle.unwrap_or_else(|| Path::new("samples/healthy-cluster/esx01").join(format!("{id}.txt")));
    std::fs::read_to_string(path).unwrap()
}

fn output(id: &str, stdout: &str) -> RawOutput {
    RawOutput {
        id: id.to_string(),
        command: catalogue::spec(id).unwrap().command.to_string(),
        stdout: stdout.to_string(),
        stderr: String::new(),
        exit_status: Some(0),
        duration_ms: 120,
        truncated: false,
        timeout_hit: false,
        failure: None,
        outcome: None,
        unfinished: Vec::new(),
    }
}

/// A healthy host, a host interrupted half-way, and a host refused at login.
fn captures() -> Vec<HostCapture> {
    let mut healthy = HostCapture::new("esx01.lab.example.com", CaptureSource::Live);
    for spec in CATALOGUE {
        let stdout = match spec.id {
            catalogue::VM_PORT_LIST => "==> 68762 <==\n   Port ID: 33554441\n   vSwitch: vDS-RDMA\n   Portgroup: PVRDMA-PG\n   DVPort ID: 16\n   MAC Address: 00:50:56:8a:9f:c2\n   IP Address: 10.88.154.20\n   Team Uplink: vmnic2\n   Uplink Port ID: 2214592517\n   Active Filters: \n".to_string(),
            catalogue::PVRDMA_DEVICES_LS => "68762_1/\n".to_string(),
            catalogue::VMX_PVRDMA_LINES => "==> /vmfs/volumes/ds1/RH236_3.1/RH236_3.1.vmx <==\nvirtualHW.version = \"19\"\nethernet1.virtualDev = \"vrdma\"\nethernet1.generatedAddress = \"00:50:56:8a:9f:c2\"\n<== /vmfs/volumes/ds1/RH236_3.1/RH236_3.1.vmx exit 0 ==>\n".to_string(),
            catalogue::PVRDMA_PROPERTIES => "==> 68762_1 <==\nPVRDMA Device Properties {\nVMM leader ID of VM:68762\nadapter index:1\nMAC address:00:50:56:8a:9f:c2\nPhysical HCA available:1\nRoCE version:2\nActive MTU:1024\n}\n".to_string(),
            catalogue::PVRDMA_VMKNIC_OPTION => pvrdma_doctor::vmsupport::extract_advanced_record(
                &std::fs::read_to_string(Path::new(SAMPLE).join("commands").join(pvrdma_doctor::vmsupport::ADVANCED_DELTA_FILE)).unwrap(),
                "/Net/PVRDMAVmknic",
            )
            .unwrap(),
            id => sample_stdout(id),
        };
        healthy.outputs.insert(spec.id.to_string(), output(spec.id, &stdout));
    }
    // stderr kept apart from stdout, a non-zero exit, and the flags.
    let fw = healthy.outputs.get_mut(catalogue::FIREWALL_RULESET_LIST).unwrap();
    fw.stderr = "Warning: ruleset cache is being refreshed\n".to_string();
    fw.exit_status = Some(1);
    fw.truncated = true;
    fw.timeout_hit = true;
    fw.duration_ms = 30_000;

    let mut partial = HostCapture::new("esx02", CaptureSource::Live);
    for id in [catalogue::SYSTEM_VERSION, catalogue::RDMA_DEVICE_LIST] {
        partial.outputs.insert(id.to_string(), output(id, &sample_stdout(id)));
    }
    let interrupted = Failure::new(ErrorKind::Interrupted, "interrupted by Ctrl-C");
    for spec in CATALOGUE.iter().skip(2) {
        partial.missing.insert(spec.id.to_string(), interrupted.clone());
    }
    partial.error = Some(interrupted);

    let auth = Failure::of_host(
        ErrorKind::Auth,
        "esx03",
        "every authentication method was refused (tried publickey, keyboard-interactive)",
    );
    let mut failed = HostCapture::failed("esx03", CaptureSource::Live, auth.clone());
    for spec in CATALOGUE {
        failed.missing.insert(spec.id.to_string(), auth.clone());
    }
    vec![healthy, partial, failed]
}

fn meta() -> BundleMeta {
    let started = UNIX_EPOCH + Duration::from_secs(1_795_000_000);
    BundleMeta {
        tool_version: "0.1.0".to_string(),
        command_line: vec![
            "pvrdma-doctor".to_string(),
            "esx01.lab.example.com".to_string(),
            "--bundle".to_string(),
            "out.tar.gz".to_string(),
        ],
        started,
        finished: started + Duration::from_millis(4_250),
        interrupted: true,
        redacted: false,
        vm_scope: None,
        vm_scope_left_out: Vec::new(),
    }
}

const REPORT_JSON: &str = "{\"hosts\": []}\n";
const REPORT_TXT: &str = "esx01  OK\n";
const REPORT_HTML: &str = "<!DOCTYPE html>\n<html lang=\"en\"><title>esx01</title></html>\n";

fn write(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    write_bundle(&path, &captures(), &meta(), REPORT_JSON, REPORT_TXT, REPORT_HTML, false).unwrap();
    path
}

fn as_bundle(mut captures: Vec<HostCapture>) -> Vec<HostCapture> {
    for c in &mut captures {
        c.source = CaptureSource::Bundle;
        // The manifest records every output's outcome, derived when the capture had none.
        for o in c.outputs.values_mut() {
            o.outcome = Some(o.outcome());
        }
    }
    captures
}

/// (path, type, bytes) of every entry, in archive order.
fn entries(path: &Path) -> Vec<(String, tar::EntryType, Vec<u8>)> {
    let file = std::fs::File::open(path).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut out = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        let kind = entry.header().entry_type();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        out.push((path, kind, data));
    }
    out
}

/// Re-packs entries; `name` is written raw into the header, so hostile paths survive.
fn pack(path: &Path, items: &[(&str, tar::EntryType, &[u8], &str)]) {
    let file = std::fs::File::create(path).unwrap();
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    let mut builder = tar::Builder::new(gz);
    for (name, kind, data, link) in items {
        let mut header = tar::Header::new_old();
        header.set_entry_type(*kind);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        let raw = header.as_old_mut();
        raw.name = [0; 100];
        raw.name[..name.len()].copy_from_slice(name.as_bytes());
        raw.linkname = [0; 100];
        raw.linkname[..link.len()].copy_from_slice(link.as_bytes());
        header.set_cksum();
        builder.append(&header, *data).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap();
}

fn bundle_error(err: &anyhow::Error) -> &BundleError {
    err.downcast_ref::<BundleError>()
        .unwrap_or_else(|| panic!("expected a BundleError, got: {err:#}"))
}

#[test]
fn write_then_read_gives_back_the_captures() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.tar.gz");
    let read = load_captures(&path).unwrap();
    assert_eq!(read, as_bundle(captures()));
}

/// Removes every `detail` field, as a bundle written before failures kept one.
fn without_details(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            map.remove("detail");
            map.values_mut().for_each(without_details);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(without_details),
        _ => {}
    }
}

#[test]
fn a_bundle_from_before_failure_details_reads_with_whole_messages() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "new.tar.gz");
    let original = entries(&path);
    let mut manifest: serde_json::Value = serde_json::from_slice(&original[0].2).unwrap();
    assert_eq!(
        manifest["hosts"][2]["error"]["detail"],
        "every authentication method was refused (tried publickey, keyboard-interactive)"
    );
    without_details(&mut manifest);
    let old_manifest = serde_json::to_vec_pretty(&manifest).unwrap();
    let old_sum = format!("{}  manifest.json\n", sha256_hex(&old_manifest));
    let items: Vec<_> = original
        .iter()
        .map(|(p, k, d)| match p.as_str() {
            "manifest.json" => (p.as_str(), *k, old_manifest.as_slice(), ""),
            "manifest.json.sha256" => (p.as_str(), *k, old_sum.as_bytes(), ""),
            _ => (p.as_str(), *k, d.as_slice(), ""),
        })
        .collect();
    let old = dir.path().join("old.tar.gz");
    pack(&old, &items);
    // The same captures, each failure with its whole message and no detail.
    let mut want = as_bundle(captures());
    for c in &mut want {
        let outputs = c.outputs.values_mut().filter_map(|o| o.failure.as_mut());
        let failures = c.error.iter_mut().chain(c.missing.values_mut()).chain(outputs);
        failures.for_each(|f| f.detail = None);
    }
    let read = load_captures(&old).unwrap();
    assert_eq!(read, want);
    let auth = read[2].error.as_ref().unwrap();
    assert_eq!(
        auth.message,
        "esx03: every authentication method was refused (tried publickey, keyboard-interactive)"
    );
}

#[test]
fn a_bundle_from_before_the_html_page_reads_as_before() {
    // Bundles written before the page carry report.json and report.txt only: the page is
    // not part of what a bundle must hold, so they still read, checksums and all.
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "new.tar.gz");
    let original = entries(&path);
    let mut manifest: serde_json::Value = serde_json::from_slice(&original[0].2).unwrap();
    let files = manifest["files"].as_array_mut().unwrap();
    let before = files.len();
    files.retain(|f| f["path"] != "report.html");
    assert_eq!(files.len(), before - 1, "the page was listed");
    let old_manifest = serde_json::to_vec_pretty(&manifest).unwrap();
    let old_sum = format!("{}  manifest.json\n", sha256_hex(&old_manifest));
    let items: Vec<_> = original
        .iter()
        .filter(|(p, ..)| p != "report.html")
        .map(|(p, k, d)| match p.as_str() {
            "manifest.json" => (p.as_str(), *k, old_manifest.as_slice(), ""),
            "manifest.json.sha256" => (p.as_str(), *k, old_sum.as_bytes(), ""),
            _ => (p.as_str(), *k, d.as_slice(), ""),
        })
        .collect();
    let old = dir.path().join("old.tar.gz");
    pack(&old, &items);
    assert_eq!(load_captures(&old).unwrap(), as_bundle(captures()));
    // A page the manifest does not vouch for is refused like any other stray file.
    let stray: Vec<_> = items
        .iter()
        .copied()
        .chain([("report.html", tar::EntryType::Regular, REPORT_HTML.as_bytes(), "")])
        .collect();
    let tampered = dir.path().join("stray.tar.gz");
    pack(&tampered, &stray);
    let err = load_captures(&tampered).unwrap_err();
    assert!(
        matches!(bundle_error(&err), BundleError::NotInManifest { path } if path == "report.html"),
        "{err:#}"
    );
}

#[test]
fn manifest_is_first_and_describes_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.tar.gz");
    let entries = entries(&path);
    assert_eq!(entries[0].0, "manifest.json");
    let manifest: serde_json::Value = serde_json::from_slice(&entries[0].2).unwrap();
    assert_eq!(manifest["tool"], "pvrdma-doctor");
    assert_eq!(manifest["tool_version"], "0.1.0");
    assert_eq!(manifest["command_line"][1], "esx01.lab.example.com");
    assert_eq!(manifest["started"], "2026-11-18T11:06:40.000Z");
    assert_eq!(manifest["finished"], "2026-11-18T11:06:44.250Z");
    assert_eq!(manifest["interrupted"], true);

    let file = |p: &str| {
        entries
            .iter()
            .find(|e| e.0 == p)
            .unwrap_or_else(|| panic!("no entry {p}"))
            .2
            .clone()
    };
    assert_eq!(file("report.json"), REPORT_JSON.as_bytes());
    assert_eq!(file("report.txt"), REPORT_TXT.as_bytes());
    assert_eq!(file("report.html"), REPORT_HTML.as_bytes());
    let listed = manifest["files"].as_array().unwrap();
    let page = listed
        .iter()
        .find(|f| f["path"] == "report.html")
        .expect("report.html in the manifest");
    assert_eq!(page["sha256"], sha256_hex(REPORT_HTML.as_bytes()));

    let hosts = manifest["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 3);
    let esx01 = &hosts[0];
    assert_eq!(esx01["host"], "esx01.lab.example.com");
    // Every command is there, but the firewall ruleset list timed out: not complete.
    assert_eq!(esx01["outcome"], "partial");
    assert!(esx01["error"].is_null());
    assert_eq!(esx01["commands"].as_array().unwrap().len(), CATALOGUE.len());
    let fw = esx01["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == catalogue::FIREWALL_RULESET_LIST)
        .unwrap();
    let stdout = file(&format!(
        "esx01.lab.example.com/{}.txt",
        catalogue::FIREWALL_RULESET_LIST
    ));
    let stderr = file(&format!(
        "esx01.lab.example.com/{}.stderr.txt",
        catalogue::FIREWALL_RULESET_LIST
    ));
    assert_eq!(stderr, b"Warning: ruleset cache is being refreshed\n");
    assert!(!String::from_utf8_lossy(&stdout).contains("Warning"));
    assert_eq!(fw["command"], "esxcli network firewall ruleset list");
    assert_eq!(fw["exit_status"], 1);
    assert_eq!(fw["duration_ms"], 30_000);
    assert_eq!(fw["stdout_bytes"], stdout.len() as u64);
    assert_eq!(fw["stderr_bytes"], stderr.len() as u64);
    assert_eq!(fw["stdout_sha256"], sha256_hex(&stdout));
    assert_eq!(fw["stderr_sha256"], sha256_hex(&stderr));
    assert_eq!(fw["truncated"], true);
    assert_eq!(fw["timeout_hit"], true);
    assert_eq!(fw["outcome"]["kind"], "timed-out");
    assert_eq!(
        file(&format!(
            "esx01.lab.example.com/{}.exit",
            catalogue::FIREWALL_RULESET_LIST
        )),
        b"1\n"
    );

    let esx02 = &hosts[1];
    assert_eq!(esx02["outcome"], "partial");
    assert_eq!(esx02["error"]["kind"], "interrupted");
    let missing = esx02["missing"].as_array().unwrap();
    assert_eq!(missing.len(), CATALOGUE.len() - 2);
    assert!(missing.iter().all(|m| m["reason"]["kind"] == "interrupted"));

    let esx03 = &hosts[2];
    assert_eq!(esx03["outcome"], "failed");
    assert_eq!(esx03["error"]["kind"], "auth");
    assert!(esx03["commands"].as_array().unwrap().is_empty());
    let host_error: serde_json::Value = serde_json::from_slice(&file("esx03/host-error.json")).unwrap();
    assert_eq!(host_error["kind"], "auth");

    // Every entry but the manifest is listed with its sha256.
    let listed = manifest["files"].as_array().unwrap();
    let files: Vec<_> = entries
        .iter()
        .filter(|e| e.1 == tar::EntryType::Regular && !e.0.starts_with("manifest.json"))
        .collect();
    assert_eq!(listed.len(), files.len());
    for (path, _, data) in files {
        let row = listed.iter().find(|f| f["path"] == path.as_str()).unwrap();
        assert_eq!(row["sha256"], sha256_hex(data));
        assert_eq!(row["bytes"], data.len() as u64);
    }
}

#[test]
fn manifest_explains_missing_commands_even_when_the_collector_did_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.tar.gz");
    let timeout = Failure::new(ErrorKind::Timeout, "esx09: connect timed out after 10s");
    let failed = HostCapture::failed("esx09", CaptureSource::Live, timeout.clone());
    let mut sparse = HostCapture::new("esx10", CaptureSource::Live);
    sparse.outputs.insert(
        catalogue::SYSTEM_VERSION.to_string(),
        output(catalogue::SYSTEM_VERSION, &sample_stdout(catalogue::SYSTEM_VERSION)),
    );
    let hosts = [failed, sparse];
    write_bundle(&path, &hosts, &meta(), "{}", "", "", false).unwrap();

    let manifest: serde_json::Value = serde_json::from_slice(&entries(&path)[0].2).unwrap();
    let missing = |n: usize| manifest["hosts"][n]["missing"].as_array().unwrap().clone();
    assert_eq!(missing(0).len(), CATALOGUE.len());
    for m in missing(0) {
        assert_eq!(m["reason"]["kind"], "timeout");
        assert_eq!(m["reason"]["message"], "esx09: connect timed out after 10s");
        assert_eq!(m["inferred"], true);
    }
    assert_eq!(missing(1).len(), CATALOGUE.len() - 1);
    assert!(missing(1)
        .iter()
        .all(|m| m["reason"]["message"] == "no output was captured for it"));
    assert_eq!(manifest["hosts"][1]["outcome"], "partial");

    // Inferred reasons stay in the manifest; the captures read back as they were.
    assert_eq!(load_captures(&path).unwrap(), as_bundle(hosts.to_vec()));
}

#[test]
fn existing_file_is_refused_without_force_and_replaced_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.tar.gz");
    std::fs::write(&path, b"precious").unwrap();
    let err = write_bundle(&path, &captures(), &meta(), REPORT_JSON, REPORT_TXT, REPORT_HTML, false).unwrap_err();
    assert!(matches!(bundle_error(&err), BundleError::Exists(_)));
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
    write_bundle(&path, &captures(), &meta(), REPORT_JSON, REPORT_TXT, REPORT_HTML, true).unwrap();
    assert_eq!(load_captures(&path).unwrap(), as_bundle(captures()));
}

#[test]
fn a_failure_midway_leaves_nothing_under_the_final_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.tar.gz");
    // The second host's name cannot be a folder: writing stops after the first host.
    let mut bad = captures();
    bad[1].host = "../escape".to_string();
    let err = write_bundle(&path, &bad, &meta(), REPORT_JSON, REPORT_TXT, REPORT_HTML, false).unwrap_err();
    assert!(matches!(bundle_error(&err), BundleError::BadHostName(_)));
    assert!(!path.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    // With --force over an existing bundle, a failure keeps the old one intact.
    std::fs::write(&path, b"old bundle").unwrap();
    write_bundle(&path, &bad, &meta(), REPORT_JSON, REPORT_TXT, REPORT_HTML, true).unwrap_err();
    assert_eq!(std::fs::read(&path).unwrap(), b"old bundle");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // A folder that does not exist.
    let nowhere = dir.path().join("no/such/dir/run.tar.gz");
    write_bundle(
        &nowhere,
        &captures(),
        &meta(),
        REPORT_JSON,
        REPORT_TXT,
        REPORT_HTML,
        false,
    )
    .unwrap_err();
    assert!(!nowhere.exists());
}

#[test]
fn tampered_entry_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.tar.gz");
    let original = entries(&path);
    let victim = format!("esx01.lab.example.com/{}.txt", catalogue::PVRDMA_PROPERTIES);
    let tampered: Vec<(String, tar::EntryType, Vec<u8>)> = original
        .iter()
        .map(|(p, k, d)| {
            let data = if *p == victim {
                String::from_utf8_lossy(d)
                    .replace("Physical HCA available:1", "Physical HCA available:0")
                    .into_bytes()
            } else {
                d.clone()
            };
            (p.clone(), *k, data)
        })
        .collect();
    assert_ne!(tampered, original);
    let bad = dir.path().join("tampered.tar.gz");
    let items: Vec<_> = tampered
        .iter()
        .map(|(p, k, d)| (p.as_str(), *k, d.as_slice(), ""))
        .collect();
    pack(&bad, &items);
    let err = load_captures(&bad).unwrap_err();
    match bundle_error(&err) {
        BundleError::ChecksumMismatch { path } => assert_eq!(*path, victim),
        other => panic!("wrong error {other:?}"),
    }

    // An entry slipped in after writing.
    let good: Vec<_> = original
        .iter()
        .map(|(p, k, d)| (p.as_str(), *k, d.as_slice(), ""))
        .collect();
    let mut extra = good.clone();
    extra.push((
        "esx02/esxcli_rdma_device_protocol_list.txt",
        tar::EntryType::Regular,
        b"x",
        "",
    ));
    pack(&bad, &extra);
    let err = load_captures(&bad).unwrap_err();
    assert!(matches!(bundle_error(&err), BundleError::NotInManifest { .. }));

    // An entry removed.
    let fewer: Vec<_> = good.iter().filter(|i| i.0 != "report.txt").cloned().collect();
    pack(&bad, &fewer);
    let err = load_captures(&bad).unwrap_err();
    assert!(matches!(bundle_error(&err), BundleError::MissingEntry { .. }));

    // The manifest itself edited (an exit status flipped): its own checksum catches it.
    let manifest = String::from_utf8(original[0].2.clone()).unwrap();
    let edited = manifest.replacen("\"exit_status\": 1", "\"exit_status\": 0", 1);
    assert_ne!(edited, manifest);
    let mut items = good.clone();
    items[0] = ("manifest.json", tar::EntryType::Regular, edited.as_bytes(), "");
    pack(&bad, &items);
    let err = load_captures(&bad).unwrap_err();
    match bundle_error(&err) {
        BundleError::ChecksumMismatch { path } => assert_eq!(path, "manifest.json"),
        other => panic!("wrong error {other:?}"),
    }
    // And without that checksum the bundle is incomplete.
    let unsummed: Vec<_> = good.iter().filter(|i| i.0 != "manifest.json.sha256").cloned().collect();
    pack(&bad, &unsummed);
    let err = load_captures(&bad).unwrap_err();
    assert!(
        matches!(bundle_error(&err), BundleError::MissingEntry { .. }),
        "{err:#}"
    );
}

fn manifest_bytes(dir: &Path) -> Vec<u8> {
    let path = write(dir, "good.tar.gz");
    entries(&path).remove(0).2
}

#[test]
fn paths_that_escape_and_links_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest_bytes(dir.path());
    let bad = dir.path().join("bad.tar.gz");
    let cases: [(&str, tar::EntryType, &str); 5] = [
        ("../evil.txt", tar::EntryType::Regular, ""),
        ("esx01/../../evil.txt", tar::EntryType::Regular, ""),
        ("/etc/cron.d/evil", tar::EntryType::Regular, ""),
        ("esx01/link", tar::EntryType::Symlink, "/etc/shadow"),
        ("esx01/hard", tar::EntryType::Link, "/etc/shadow"),
    ];
    for (name, kind, link) in cases {
        pack(
            &bad,
            &[
                ("manifest.json", tar::EntryType::Regular, &manifest, ""),
                (name, kind, b"", link),
            ],
        );
        let err = load_captures(&bad).unwrap_err();
        let ok = match bundle_error(&err) {
            BundleError::PathEscape { path } => kind == tar::EntryType::Regular && path == name,
            BundleError::Link { path, .. } => kind != tar::EntryType::Regular && path == name,
            _ => false,
        };
        assert!(ok, "{name}: wrong error {err:#}");
    }
}

#[test]
fn manifest_must_come_first() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest_bytes(dir.path());
    let bad = dir.path().join("bad.tar.gz");
    pack(
        &bad,
        &[
            ("report.txt", tar::EntryType::Regular, b"x", ""),
            ("manifest.json", tar::EntryType::Regular, &manifest, ""),
        ],
    );
    let err = load_captures(&bad).unwrap_err();
    // Not starting with a manifest nor an esx-… folder, it is no bundle at all.
    assert!(matches!(bundle_error(&err), BundleError::NotABundle(_)), "{err:#}");
}

#[test]
fn expansion_beyond_the_caps_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = manifest_bytes(dir.path());
    let bomb = dir.path().join("bomb.tar.gz");

    // Many entries, each under the entry cap, that together expand past the stream cap.
    let zeros = vec![0u8; 512 * 1024];
    let names: Vec<String> = (0..16).map(|n| format!("esx01/pad{n}.txt")).collect();
    let mut items = vec![("manifest.json", tar::EntryType::Regular, manifest.as_slice(), "")];
    for name in &names {
        items.push((name.as_str(), tar::EntryType::Regular, zeros.as_slice(), ""));
    }
    pack(&bomb, &items);
    let compressed = std::fs::metadata(&bomb).unwrap().len();
    assert!(compressed < 64 * 1024, "not a bomb: {compressed} bytes");
    let limits = ReadLimits {
        max_entry_bytes: 1024 * 1024,
        max_kept_bytes: 64 * 1024 * 1024,
        max_bundle_bytes: 4 * 1024 * 1024,
        ..ReadLimits::default()
    };
    let err = load_captures_with(&bomb, &limits).unwrap_err();
    match bundle_error(&err) {
        BundleError::TooLarge { cap, .. } => assert_eq!(*cap, 4 * 1024 * 1024),
        other => panic!("wrong error {other:?}"),
    }

    // One entry over the per-entry cap.
    let big = vec![0u8; 2 * 1024 * 1024];
    pack(
        &bomb,
        &[
            ("manifest.json", tar::EntryType::Regular, &manifest, ""),
            ("esx01/big.txt", tar::EntryType::Regular, &big, ""),
        ],
    );
    let err = load_captures_with(&bomb, &limits).unwrap_err();
    assert!(matches!(bundle_error(&err), BundleError::TooLarge { .. }));

    // With the default limits: a header announcing 100 GiB is refused before reading.
    let file = std::fs::File::create(&bomb).unwrap();
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    {
        let mut builder = tar::Builder::new(&mut gz);
        let mut header = tar::Header::new_gnu();
        header.set_size(manifest.len() as u64);
        header.set_mode(0o644);
        builder
            .append_data(&mut header, "manifest.json", manifest.as_slice())
            .unwrap();
        let mut header = tar::Header::new_gnu();
        header.set_size(100 * 1024 * 1024 * 1024);
        header.set_path("esx01/huge.txt").unwrap();
        header.set_cksum();
        use std::io::Write;
        builder.get_mut().write_all(header.as_bytes()).unwrap();
    }
    gz.finish().unwrap();
    let err = load_captures(&bomb).unwrap_err();
    assert!(matches!(bundle_error(&err), BundleError::TooLarge { .. }), "{err:#}");
}

#[test]
fn unpacked_bundle_folder_reads_the_same_and_refuses_links() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.tar.gz");
    let out = dir.path().join("unpacked");
    std::fs::create_dir(&out).unwrap();
    tar::Archive::new(flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()))
        .unpack(&out)
        .unwrap();
    assert_eq!(load_captures(&out).unwrap(), as_bundle(captures()));

    std::os::unix::fs::symlink("/etc/hostname", out.join("esx02/extra.txt")).unwrap();
    let err = load_captures(&out).unwrap_err();
    assert!(matches!(bundle_error(&err), BundleError::Link { .. }), "{err:#}");
}

#[test]
fn a_gzip_that_is_no_bundle_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.tar.gz");
    pack(&path, &[("notes/readme.txt", tar::EntryType::Regular, b"hello", "")]);
    let err = load_captures(&path).unwrap_err();
    assert!(matches!(bundle_error(&err), BundleError::NotABundle(_)));
    std::fs::write(&path, b"plain text, not gzip").unwrap();
    let err = load_captures(&path).unwrap_err();
    assert!(matches!(bundle_error(&err), BundleError::NotABundle(_)));
}

#[test]
fn output_beyond_the_cap_is_cut_and_marked_truncated() {
    use pvrdma_engine::capture::OUTPUT_CAP;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.tar.gz");
    let mut host = HostCapture::new("esx01", CaptureSource::Live);
    let line = "vmnic0  0000:1c:00.0  i40en  Up  Up  1000  Full  3c:ec:ef:05:48:18  1500  x\n";
    let big = line.repeat(OUTPUT_CAP / line.len() + 10);
    assert!(big.len() > OUTPUT_CAP);
    host.outputs
        .insert(catalogue::NIC_LIST.to_string(), output(catalogue::NIC_LIST, &big));
    write_bundle(&path, &[host], &meta(), "{}", "", "", false).unwrap();
    let read = load_captures(&path).unwrap();
    let nic = &read[0].outputs[catalogue::NIC_LIST];
    assert!(nic.truncated);
    assert_eq!(nic.stdout.len(), OUTPUT_CAP);
    assert!(big.starts_with(&nic.stdout));
    let manifest: serde_json::Value = serde_json::from_slice(&entries(&path)[0].2).unwrap();
    let cmd = &manifest["hosts"][0]["commands"][0];
    assert_eq!(cmd["truncated"], true);
    assert_eq!(cmd["stdout_bytes"], OUTPUT_CAP as u64);
}

#[test]
fn a_truncated_archive_is_an_error_not_a_partial_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.tar.gz");
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.tar.gz");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let err = load_captures(&cut).unwrap_err();
    assert!(format!("{err:#}").contains("damaged archive"), "{err:#}");
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    fn tar_bytes(path: &Path) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Damage anywhere in the tar stream (headers, sizes, names, data, manifest) gives
        /// an answer or a typed error; it never panics and never reads a changed byte as
        /// trusted data.
        #[test]
        fn damaged_tar_streams(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
            let dir = tempfile::tempdir().unwrap();
            let good = write(dir.path(), "good.tar.gz");
            let mut tar = tar_bytes(&good);
            for (at, byte) in &flips {
                let i = at.index(tar.len());
                tar[i] = *byte;
            }
            let damaged = dir.path().join("damaged.tar.gz");
            let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(&damaged).unwrap(), flate2::Compression::fast());
            std::io::Write::write_all(&mut gz, &tar).unwrap();
            gz.finish().unwrap();
            if let Ok(read) = load_captures(&damaged) {
                // Only damage outside every verified byte (padding, unused header fields)
                // may pass, and then the captures are exactly the original ones.
                prop_assert_eq!(read, as_bundle(captures()));
            }
        }
    }
}

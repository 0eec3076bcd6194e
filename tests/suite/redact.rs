//! `--redact` as a customer relies on it: not one original host name, address, MAC, VM
//! name, UUID or datastore survives anywhere in the bundle, and the diagnosis of the
//! redacted bundle reaches the same verdicts as the original, for every sample scenario.
use pvrdma_doctor::bundle::{write_bundle, BundleMeta};
use pvrdma_doctor::offline::load_captures;
use pvrdma_doctor::redact::{redact_command_line, Redactor};
use pvrdma_engine::capture::HostCapture;
use pvrdma_engine::diagnose::{self, Diagnosis};
use pvrdma_engine::report::{self, Format};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

fn scenarios() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    assert!(out.len() > 5, "scenario samples missing: {out:?}");
    out
}

/// What a verdict-minded reader compares: host status, every check's status, every adapter
/// verdict, every pair's transport, the exit code. Names are left out on purpose (they are
/// what redaction changes); the order is kept, since tokens are given in capture order.
fn verdicts(d: &Diagnosis) -> String {
    let mut out = format!("exit {}\n", d.exit_code());
    for h in &d.hosts {
        out.push_str(&format!(
            "host {:?} error={:?}\n",
            h.status,
            h.error.as_ref().map(|e| e.kind)
        ));
        for c in &h.checks {
            out.push_str(&format!("  {} {:?}\n", c.id, c.status));
        }
        for vm in &h.vms {
            for a in &vm.adapters {
                out.push_str(&format!(
                    "  adapter {} {:?} roce={:?} mtu={:?} port={}\n",
                    a.index,
                    a.verdict,
                    a.roce_version,
                    a.active_mtu,
                    a.port.is_some()
                ));
            }
        }
    }
    for c in &d.fleet_checks {
        out.push_str(&format!("fleet {} {:?}\n", c.id, c.status));
    }
    out.push_str(&format!("transport {:?}\n", d.transport.totals));
    for hp in &d.transport.host_pairs {
        out.push_str(&format!("host pair {:?}\n", hp.pairs));
    }
    for e in &d.transport.exceptions {
        out.push_str(&format!("exception {:?} {}\n", e.pairs, e.reasons.len()));
    }
    let s = &d.summary;
    out.push_str(&format!(
        "summary {} {} {} {} {} {} {} {} {} {}\n",
        s.hosts,
        s.healthy,
        s.problems,
        s.incomplete,
        s.unreachable,
        s.error,
        s.adapters,
        s.hca,
        s.tcp_fallback,
        s.unknown
    ));
    out
}

fn meta(args: &[String]) -> BundleMeta {
    let started = UNIX_EPOCH + Duration::from_secs(1_795_000_000);
    BundleMeta {
        tool_version: "0.1.0".to_string(),
        command_line: redact_command_line(args),
        started,
        finished: started + Duration::from_secs(3),
        interrupted: false,
        redacted: true,
        vm_scope: None,
        vm_scope_left_out: Vec::new(),
    }
}

fn entries(path: &Path) -> Vec<(String, Vec<u8>)> {
    let file = std::fs::File::open(path).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    archive
        .entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let path = e.path().unwrap().to_string_lossy().into_owned();
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            (path, data)
        })
        .collect()
}

fn redacted_bundle(captures: &[HostCapture], dir: &Path) -> (Redactor, PathBuf, Diagnosis) {
    let mut redactor = Redactor::new();
    let redacted = redactor.redact_captures(captures).unwrap();
    let diagnosis = diagnose::diagnose(&redacted);
    let path = dir.join("redacted.tar.gz");
    let hosts: Vec<String> = captures.iter().map(|c| c.host.clone()).collect();
    let mut args = vec!["pvrdma-doctor".to_string()];
    args.extend(hosts);
    args.extend([
        "--bundle".to_string(),
        path.display().to_string(),
        "--redact".to_string(),
    ]);
    write_bundle(
        &path,
        &redacted,
        &meta(&args),
        &report::render(&diagnosis, Format::Json, false),
        &report::render(&diagnosis, Format::Human, false),
        &report::render(&diagnosis, Format::Html, false),
        false,
    )
    .unwrap();
    redactor.write_map(&path, false).unwrap();
    (redactor, path, diagnosis)
}

#[test]
fn redacted_bundles_keep_the_verdicts_and_hold_no_original_value() {
    let mut checked_originals = 0;
    for scenario in scenarios() {
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        let captures = load_captures(&scenario).unwrap();
        let original = diagnose::diagnose(&captures);
        let dir = tempfile::tempdir().unwrap();
        let (redactor, bundle, redacted_diagnosis) = redacted_bundle(&captures, dir.path());

        assert_eq!(
            verdicts(&redacted_diagnosis),
            verdicts(&original),
            "{name}: redaction changed the verdicts"
        );
        // And again after the round trip through the archive, as `analyze` would see it.
        let reread = diagnose::diagnose(&load_captures(&bundle).unwrap());
        assert_eq!(verdicts(&reread), verdicts(&original), "{name}: after reading back");

        // The values to hunt for are found independently of the redactor.
        let originals = sensitive_values(&captures);
        assert_eq!(injective_failures(&redactor), Vec::<String>::new(), "{name}");
        for (path, data) in entries(&bundle) {
            let haystack = String::from_utf8_lossy(&data).to_ascii_lowercase();
            let path_lower = path.to_ascii_lowercase();
            for value in &originals {
                let needle = value.to_ascii_lowercase();
                assert!(
                    !haystack.contains(&needle) && !path_lower.contains(&needle),
                    "{name}: {value:?} survives in {path}"
                );
            }
        }
        // The mapping is beside the bundle, never in it.
        let map = PathBuf::from(format!("{}.redaction-map.json", bundle.display()));
        assert!(map.is_file());
        assert!(entries(&bundle).iter().all(|(p, _)| !p.contains("redaction-map")));
        checked_originals += originals.len();
    }
    assert!(checked_originals > 50, "too few values checked: {checked_originals}");
}

#[test]
fn the_page_in_a_redacted_bundle_is_made_from_the_redacted_captures_only() {
    // The bundle a run writes with --redact (the path the command line takes): its HTML
    // page, outputs behind the findings included, holds no original value, escaped or not.
    let mut pages_with_outputs = 0;
    for scenario in scenarios() {
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        let captures = load_captures(&scenario).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join("r.tar.gz");
        let args = pvrdma_doctor::cli::BundleArgs {
            bundle: Some(bundle.clone()),
            redact: true,
            force: false,
        };
        let start = UNIX_EPOCH + Duration::from_secs(1_790_000_000);
        let clear = diagnose::diagnose(&captures);
        pvrdma_doctor::app::write_support_bundle(&args, &captures, &clear, start, start, false).unwrap();
        let (_, page) = entries(&bundle)
            .into_iter()
            .find(|(p, _)| p == "report.html")
            .unwrap_or_else(|| panic!("{name}: no report.html in the bundle"));
        let page = String::from_utf8(page).unwrap().to_ascii_lowercase();
        for value in sensitive_values(&captures) {
            let escaped = html_escaped(&value).to_ascii_lowercase();
            let value = value.to_ascii_lowercase();
            assert!(
                !page.contains(&value) && !page.contains(&escaped),
                "{name}: {value:?} survives in report.html"
            );
        }
        assert!(
            page.contains("<dt>redacted</dt>"),
            "{name}: the page says it is redacted"
        );
        if page.contains("class=\"outputs\"") {
            pages_with_outputs += 1;
        }
    }
    assert!(
        pages_with_outputs > 5,
        "too few pages carry outputs: {pages_with_outputs}"
    );
}

/// `value` as the page writes a host's text.
fn html_escaped(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Host names, VM names (from the real `vm process list` parser and `.vmx` files),
/// datastores (from config paths), and every IPv4, MAC and UUID-looking string, found with
/// simple scanners of their own so a redactor blind spot cannot hide itself.
fn sensitive_values(captures: &[HostCapture]) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for c in captures {
        out.insert(c.host.clone());
        let mut texts: Vec<String> = Vec::new();
        for o in c.outputs.values() {
            texts.push(o.stdout.clone());
            texts.push(o.stderr.clone());
        }
        if let Some(vms) = c
            .outputs
            .get(pvrdma_engine::catalogue::VM_PROCESS_LIST)
            .and_then(|o| pvrdma_parsers::parse_vm_process_list(&o.stdout).ok())
        {
            for vm in vms {
                out.insert(vm.display_name.clone());
                if let Some(ds) = vm
                    .config_file
                    .as_deref()
                    .and_then(|p| p.strip_prefix("/vmfs/volumes/"))
                    .and_then(|p| p.split('/').next())
                {
                    out.insert(ds.to_string());
                }
            }
        }
        for vmx in &c.vmx_files {
            texts.push(vmx.content.clone());
            if let Ok(cfg) = pvrdma_parsers::parse_vmx(&vmx.content) {
                out.extend(cfg.display_name);
            }
            if let Some(ds) = vmx.path.strip_prefix("vmfs/volumes/").and_then(|p| p.split('/').next()) {
                out.insert(ds.to_string());
            }
        }
        for text in texts {
            for word in text.split(|ch: char| ch.is_whitespace() || ch == '"' || ch == ',' || ch == '=' || ch == '/') {
                let word = word.trim_matches(|ch: char| ch == '.' || ch == '(' || ch == ')');
                // key:value (vsish) glues the key on.
                let word = word.rsplit_once("address:").map_or(word, |(_, v)| v);
                if let Ok(ip) = word.parse::<std::net::Ipv4Addr>() {
                    let bits = u32::from(ip);
                    let mask = bits != 0 && bits.leading_ones() + bits.trailing_zeros() == 32;
                    if !(ip.is_unspecified() || ip.is_loopback() || ip.is_broadcast() || mask) {
                        out.insert(word.to_string());
                    }
                }
                let hex_pairs: Vec<&str> = word.split(':').collect();
                if hex_pairs.len() == 6
                    && hex_pairs
                        .iter()
                        .all(|p| p.len() == 2 && p.chars().all(|ch| ch.is_ascii_hexdigit()))
                    && word != "00:00:00:00:00:00"
                    && !word.eq_ignore_ascii_case("ff:ff:ff:ff:ff:ff")
                {
                    out.insert(word.to_string());
                }
                let groups: Vec<&str> = word.split('-').collect();
                let dashed = groups.len() >= 2
                    && groups
                        .iter()
                        .all(|g| g.len() >= 4 && g.chars().all(|ch| ch.is_ascii_hexdigit()))
                    && groups.iter().map(|g| g.len()).sum::<usize>() == 32;
                if dashed {
                    out.insert(word.to_string());
                }
            }
            // ESXi's spaced UUID form.
            for line in text.lines() {
                if let Some((_, v)) = line.split_once("UUID: ").or_else(|| line.split_once("VDS ID: ")) {
                    if v.len() == 47 && v.chars().filter(|ch| ch.is_ascii_hexdigit()).count() == 32 {
                        out.insert(v.to_string());
                    }
                }
            }
        }
    }
    out.into_iter().filter(|v| !v.is_empty()).collect()
}

/// Two different values must never share a token, or joins (MAC to port, IP to subnet)
/// would connect things that are not connected.
fn injective_failures(r: &Redactor) -> Vec<String> {
    let m = r.map();
    let mut failures = Vec::new();
    type Canon = fn(&str) -> String;
    let same: Canon = |v| v.to_string();
    let folded: Canon = |v| v.to_ascii_lowercase();
    let categories = [
        ("ipv4", &m.ipv4, same),
        ("mac", &m.macs, folded),
        ("uuid", &m.uuids, folded),
        ("vm", &m.vm_names, same),
    ];
    for (what, map, canon) in categories {
        let mut by_token: std::collections::BTreeMap<&str, std::collections::BTreeSet<String>> = Default::default();
        for (original, token) in map {
            by_token.entry(token).or_default().insert(canon(original));
        }
        for (token, originals) in by_token {
            if originals.len() > 1 {
                failures.push(format!("{what} token {token} stands for {originals:?}"));
            }
        }
    }
    failures
}

#[test]
fn the_map_holds_every_category_the_samples_contain() {
    let healthy = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/vm-support");
    let captures = load_captures(&healthy).unwrap();
    let mut redactor = Redactor::new();
    let redacted = redactor.redact_captures(&captures).unwrap();
    let map = redactor.map();
    assert_eq!(map.hosts.get("esx01").map(String::as_str), Some("host-001"));
    assert_eq!(map.vm_names.get("hpc01").map(String::as_str), Some("vm-001"));
    assert_eq!(
        map.datastores
            .get("5cce4874-40c5c88e-a836-003048fc4ffe")
            .map(String::as_str),
        Some("datastore-001")
    );
    assert!(map.ipv4.contains_key("147.75.201.186"));
    assert!(map.macs.contains_key("b8:ce:f6:dc:74:22"));
    assert!(map
        .uuids
        .contains_key("56 4d 70 ad 43 f1 5e 25-8a 12 a0 e2 18 2e 38 ec"));
    // The redacted vm-support capture still names its PVRDMA VM, under its token.
    let vmx = redacted[0]
        .vmx_files
        .iter()
        .find(|v| v.content.contains("vrdma"))
        .unwrap();
    assert_eq!(vmx.path, "vmfs/volumes/datastore-001/vm-001/vm-001.vmx");
    let config = pvrdma_parsers::parse_vmx(&vmx.content).unwrap();
    assert_eq!(config.display_name.as_deref(), Some("vm-001"));
    assert_eq!(config.pvrdma_adapters.len(), 1);
}

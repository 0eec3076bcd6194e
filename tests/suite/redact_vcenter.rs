//! `--redact` of hosts read through vCenter: the bundle keeps vCenter's answers as it
//! wrote them, XML in which a name holding `&`, `<`, `>`, `'` or `"` is written with
//! entities (`R&amp;D`, `o&#39;brennan`). Such a name must be hidden there too, not only
//! where it is spelled plainly, and the redacted bundle must still diagnose the same.
use crate::no_ssh::{configured, no_ssh, vm, SshPort};
use crate::support::client::Doctor;
use crate::support::vcsim::{Spec, Vcsim};
use serde_json::Value;
use std::io::Read;
use std::path::Path;

/// Names vSphere allows and XML must escape.
const HOST: &str = "esxlabeast&west'01 <r>";
const VMS: [&str; 2] = ["cfdsolver & mpirank <0> o'brennan", "\"quotedvm\" >x"];

/// Every way an XML writer may spell `name` (vCenter, hostd and Go's encoding/xml differ
/// in how they write quotes), and its words, none of which may survive.
fn spellings(name: &str) -> Vec<String> {
    let mut out = vec![name.to_string()];
    for (apos, quot) in [("&apos;", "&quot;"), ("&#39;", "&#34;"), ("'", "\"")] {
        for gt in ["&gt;", ">"] {
            out.push(
                name.replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', gt)
                    .replace('\'', apos)
                    .replace('"', quot),
            );
        }
    }
    out.extend(
        name.split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.len() >= 6)
            .map(str::to_string),
    );
    out
}

/// Every file of a bundle, by path.
fn files(bundle: &Path) -> Vec<(String, String)> {
    let file = std::fs::File::open(bundle).expect("bundle");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    archive
        .entries()
        .expect("entries")
        .map(|e| {
            let mut e = e.expect("entry");
            let path = e.path().expect("path").to_string_lossy().into_owned();
            let mut text = String::new();
            e.read_to_string(&mut text).expect("UTF-8");
            (path, text)
        })
        .collect()
}

fn statuses(report: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for h in report["hosts"].as_array().into_iter().flatten() {
        out.push(("host".into(), h["status"].to_string()));
        for c in h["checks"].as_array().into_iter().flatten() {
            out.push((c["id"].to_string(), c["status"].to_string()));
        }
        for vm in h["vms"].as_array().into_iter().flatten() {
            for a in vm["adapters"].as_array().into_iter().flatten() {
                out.push(("adapter".into(), a["verdict"].to_string()));
            }
        }
    }
    out
}

#[test]
#[ignore = "needs the vSphere simulator (golang-go, golang-github-vmware-govmomi-dev): scripts/test.sh runs it"]
fn a_name_vcenter_wrote_with_entities_is_hidden_in_the_bundles_raw_answers_too() {
    let mut sim = Vcsim::start(&Spec::one_cluster(
        "Lab",
        "HPC",
        vec![
            configured(HOST, 11, |_| {}),
            configured("esx02", 12, |p| p.firewall = false),
        ],
        vec![
            vm(VMS[0], HOST, "vmx-19", true, &["rocev2"]),
            vm(VMS[1], "esx02", "vmx-19", true, &["rocev2"]),
        ],
    ));
    let trap = SshPort::trap();
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = dir.path().join("plain.tar.gz");
    let out = no_ssh(
        &sim,
        &trap,
        &["--cluster", "HPC", "--bundle", plain.to_str().expect("path")],
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    // The raw answers hold the names as vCenter wrote them: with entities.
    let raw: String = files(&plain).into_iter().map(|(_, text)| text).collect();
    for escaped in ["esxlabeast&amp;west", "cfdsolver &amp; mpirank &lt;0&gt;"] {
        assert!(raw.contains(escaped), "{escaped} is how the answer holds it");
    }

    let redacted = dir.path().join("redacted.tar.gz");
    let out = no_ssh(
        &sim,
        &trap,
        &[
            "--cluster",
            "HPC",
            "--bundle",
            redacted.to_str().expect("path"),
            "--redact",
        ],
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let bundled = files(&redacted);
    assert!(
        bundled.iter().any(|(path, _)| path.ends_with("/vsphere_vm_config.txt")),
        "the raw answers are in the bundle: {:?}",
        bundled.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for name in std::iter::once(HOST).chain(VMS) {
        for spelling in spellings(name) {
            for (path, text) in &bundled {
                assert!(!text.contains(&spelling), "{path} keeps `{spelling}` of {name:?}");
            }
        }
    }
    let map: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("redacted.tar.gz.redaction-map.json")).expect("the map"),
    )
    .expect("JSON");
    assert!(map["hosts"][HOST].is_string(), "{map:#}");
    for name in VMS {
        assert!(map["vm_names"][name].is_string(), "{map:#}");
    }

    // What the redacted answers say is what the originals say: the same verdicts.
    let analyze = |bundle: &Path| {
        let out = Doctor::new().args(["analyze", "--format", "json"]).arg(bundle).run();
        serde_json::from_str::<Value>(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stderr))
    };
    let (was, now) = (analyze(&plain), analyze(&redacted));
    assert_eq!(statuses(&now), statuses(&was));
    let vm_names: Vec<&str> = now["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|h| h["vms"].as_array().into_iter().flatten())
        .filter_map(|vm| vm["name"].as_str())
        .collect();
    assert_eq!(vm_names, ["vm-001", "vm-002"], "{now:#}");
    assert_eq!(sim.sessions(), 0);
}

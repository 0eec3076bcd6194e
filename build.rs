//! Embeds the demo's default scenarios (`samples/<scenario>/`) in the binary, so
//! `pvrdma-doctor demo` (and `demo --probe`) work from any directory on a fresh machine.
use std::fmt::Write as _;
use std::path::Path;

/// Preferred default scenario; `healthy-cluster` stands in while it is not in the tree.
const SCENARIOS: &[&str] = &["esxi80-mixed-fleet", "healthy-cluster"];
/// The default scenario of `demo --probe`: a healthy path, an MTU problem, an unreachable
/// vmknic (see samples/README.md).
const PROBE_SCENARIOS: &[&str] = &["probe-paths"];

fn main() {
    println!("cargo:rerun-if-changed=samples");
    // Read when the script runs, not baked in when it compiles: a script compiled in
    // another checkout (a copied target directory) must not embed that checkout's samples.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let root = Path::new(&manifest_dir).join("samples");
    let mut out = String::new();
    embed(&mut out, &root, SCENARIOS, "EMBEDDED_SCENARIO", "EMBEDDED_FILES");
    embed(
        &mut out,
        &root,
        PROBE_SCENARIOS,
        "EMBEDDED_PROBE_SCENARIO",
        "EMBEDDED_PROBE_FILES",
    );
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into())).join("demo_scenario.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        println!("cargo:warning=cannot write {}: {e}", dest.display());
        std::process::exit(1);
    }
}

/// Writes `NAME: &str` (the chosen scenario) and `FILES: &[(host, file, content)]` (every
/// file directly in its host folders) for the first of `candidates` that exists.
fn embed(out: &mut String, root: &Path, candidates: &[&str], name_const: &str, files_const: &str) {
    let chosen = candidates.iter().find(|s| root.join(s).is_dir());
    let name = chosen.copied().unwrap_or("");
    writeln!(out, "/// Name of the embedded scenario.").ok();
    writeln!(out, "pub const {name_const}: &str = {name:?};").ok();
    writeln!(
        out,
        "/// (host, file name, content) of every file of the embedded scenario."
    )
    .ok();
    writeln!(out, "pub static {files_const}: &[(&str, &str, &str)] = &[").ok();
    if let Some(s) = chosen {
        let dir = root.join(s);
        println!("cargo:rerun-if-changed={}", dir.display());
        let mut hosts: Vec<_> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        hosts.sort();
        for h in hosts {
            println!("cargo:rerun-if-changed={}", h.display());
            let host = h
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut files: Vec<_> = std::fs::read_dir(&h)
                .map(|rd| {
                    rd.filter_map(Result::ok)
                        .map(|e| e.path())
                        .filter(|p| p.is_file())
                        .collect()
                })
                .unwrap_or_default();
            files.sort();
            for f in files {
                let file = f
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                writeln!(
                    out,
                    "    ({host:?}, {file:?}, include_str!({:?})),",
                    f.display().to_string()
                )
                .ok();
            }
        }
    }
    writeln!(out, "];").ok();
}

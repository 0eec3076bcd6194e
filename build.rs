//! Embeds the demo's default scenario (`samples/<scenario>/`) in the binary, so
//! `pvrdma-doctor demo` works from any directory on a fresh machine.
use std::fmt::Write as _;
use std::path::Path;

/// Preferred default scenario; `healthy-cluster` stands in while it is not in the tree.
const SCENARIOS: &[&str] = &["esxi80-mixed-fleet", "healthy-cluster"];

fn main() {
    println!("cargo:rerun-if-changed=samples");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut out = String::new();
    let chosen = SCENARIOS.iter().find(|s| root.join(s).is_dir());
    let name = chosen.copied().unwrap_or("");
    writeln!(out, "/// Name of the embedded scenario.").ok();
    writeln!(out, "pub const EMBEDDED_SCENARIO: &str = {name:?};").ok();
    writeln!(
        out,
        "/// (host, file name, content) of every file of the embedded scenario."
    )
    .ok();
    writeln!(out, "pub static EMBEDDED_FILES: &[(&str, &str, &str)] = &[").ok();
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
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into())).join("demo_scenario.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        println!("cargo:warning=cannot write {}: {e}", dest.display());
        std::process::exit(1);
    }
}

//! The README's check table is generated from the check registry
//! (`engine/src/diagnose/checks/registry.rs`), so the two cannot drift. After changing a check,
//! run `PVRDMA_UPDATE_README=1 cargo test --test suite readme` and review the diff.
use pvrdma_engine::diagnose::{CheckId, Family};
use std::path::Path;

const BEGIN: &str = "<!-- check table: generated from engine/src/diagnose/checks/registry.rs (PVRDMA_UPDATE_README=1 cargo test --test suite readme) -->\n";
const END: &str = "<!-- end of check table -->\n";

/// The table, one row per registered check in registry order.
fn table() -> String {
    let mut out = String::from("| id | passes when |\n|---|---|\n");
    for c in CheckId::ALL {
        let scope = match c.family() {
            Family::Fleet => " (across hosts)",
            Family::Probe => " (across hosts, `--probe` only)",
            _ => "",
        };
        out.push_str(&format!("| `{}`{scope} | {} |\n", c.id(), c.passes_when()));
    }
    out
}

#[test]
fn readme_check_table_comes_from_the_registry() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let text = std::fs::read_to_string(&path).expect("read README.md");
    let start = text.find(BEGIN).expect("README.md has the check table's begin marker") + BEGIN.len();
    let end = start
        + text[start..]
            .find(END)
            .expect("README.md has the check table's end marker");
    let generated = table();
    if std::env::var_os("PVRDMA_UPDATE_README").is_some() {
        let updated = format!("{}{generated}{}", &text[..start], &text[end..]);
        std::fs::write(&path, updated).expect("write README.md");
        return;
    }
    assert!(
        text[start..end] == generated,
        "the check table in {} is out of date: run `PVRDMA_UPDATE_README=1 cargo test --test suite readme` and review the diff",
        path.display()
    );
}

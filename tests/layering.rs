//! The top-level modules of `src/` form no cycle (so each stage of the pipeline can be
//! read, tested and moved on its own): a module is `src/<name>.rs`
//! or `src/<name>/`, and an edge is any `crate::<name>` reference in its files (code,
//! doc links and all). A cycle found is printed with the files that make each edge.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The names following `crate::` in `text`, `crate::{a, b::c}` included.
fn referenced(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in text.match_indices("crate::") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for part in group.split(',') {
                let name = ident(part.trim());
                if !name.is_empty() {
                    names.insert(name);
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

/// Edges between top-level modules: (from, to) → files making the edge.
fn edges() -> BTreeMap<(String, String), BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(&src).ok()?;
            let first = rel.components().next()?.as_os_str().to_str()?.to_string();
            Some(first.trim_end_matches(".rs").to_string())
        })
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut edges: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let from = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        if !modules.contains(&from) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for to in referenced(&text) {
            if to != from && modules.contains(&to) {
                edges
                    .entry((from.clone(), to))
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    edges
}

/// Every cycle's modules, found by depth-first search (each strongly connected group once).
fn cycles(edges: &BTreeMap<(String, String), BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from.as_str()).or_default().push(to.as_str());
    }
    let reach = |start: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start.to_string()];
        while let Some(m) = stack.pop() {
            for n in next.get(m.as_str()).into_iter().flatten() {
                if seen.insert(n.to_string()) {
                    stack.push(n.to_string());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&str, BTreeSet<String>> = next.keys().map(|m| (*m, reach(m))).collect();
    let mut found: BTreeSet<Vec<String>> = BTreeSet::new();
    for (m, r) in &reachable {
        if r.contains(*m) {
            let group: Vec<String> = r
                .iter()
                .filter(|n| reachable.get(n.as_str()).is_some_and(|back| back.contains(*m)))
                .cloned()
                .collect();
            found.insert(group);
        }
    }
    found.into_iter().collect()
}

#[test]
fn the_reference_scanner_reads_paths_and_groups() {
    let names = referenced("use crate::collect::{A, B};\nuse crate::{probe, diagnose::x};\n$crate::no\nmycrate::no");
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(names, ["collect", "diagnose", "probe"]);
}

#[test]
fn top_level_modules_have_no_cycle() {
    let edges = edges();
    let cycles = cycles(&edges);
    let mut report = String::new();
    for group in &cycles {
        report.push_str(&format!("cycle among {group:?}:\n"));
        for ((from, to), files) in &edges {
            if group.contains(from) && group.contains(to) {
                report.push_str(&format!("  {from} -> {to}: {files:?}\n"));
            }
        }
    }
    assert!(cycles.is_empty(), "{report}");
}

//! No import cycle between the files of one module, at any depth: within `src/serve/`,
//! `scrape.rs` may use `metrics.rs` or the other way round, not both, directly or through
//! a third file. A module's children are its files and folders (`serve/scrape.rs`,
//! `serve/vcenter/`); an edge from one child to another is any path in the first's files
//! (code, doc links and all) that resolves to the second: `crate::serve::metrics::…`,
//! `super::metrics::…`, `super::super::…` as the compiler reads them from that file. A
//! parent naming its own children is not an edge (it declares them), nor is a child naming
//! its parent's items; inline `#[cfg(test)]` modules are left out, their `super` being
//! another module's. A cycle found is printed with the files that make each edge.
use super::{cycles, rust_files};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The module path of a file of the crate rooted at `src`: `serve/scrape.rs` and
/// `serve/scrape/mod.rs` are `["serve", "scrape"]`; `lib.rs` and `main.rs` the root.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut path: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().trim_end_matches(".rs").to_string())
        .collect();
    if path.len() == 1 && matches!(path[0].as_str(), "lib" | "main") {
        path.clear();
    }
    if path.last().is_some_and(|l| l == "mod") {
        path.pop();
    }
    path
}

/// The text the compiler reads as this file's own module: an inline `#[cfg(test)]`
/// module (always last) is another module, whose `super` is this one.
pub(super) fn own_text(text: &str) -> &str {
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]") {
        let at = from + at;
        let after = text[at + "#[cfg(test)]".len()..].trim_start();
        let inline = after
            .strip_prefix("mod ")
            .map(|rest| rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_'))
            .is_some_and(|rest| rest.trim_start().starts_with('{'));
        if inline {
            return &text[..at];
        }
        from = at + 1;
    }
    text
}

/// Every module path `text` names from module `here`: each `crate::`, `super::` and
/// `self::` path resolved, `{a, b::c}` groups included.
fn resolved_paths(text: &str, here: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for prefix in ["crate::", "super::", "self::"] {
        for (at, _) in text.match_indices(prefix) {
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | ':')) {
                continue;
            }
            let base: Vec<String> = match prefix {
                "crate::" => Vec::new(),
                "super::" => here[..here.len().saturating_sub(1)].to_vec(),
                _ => here.to_vec(),
            };
            tree(&text[at + prefix.len()..], base, &mut out);
        }
    }
    out
}

/// Reads one path (or group of paths) of a `use` tree from `rest`, below `base`.
fn tree(rest: &str, mut base: Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0usize;
        let mut part = String::new();
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    tree(part.trim(), base.clone(), out);
                    part.clear();
                    continue;
                }
                _ => {}
            }
            part.push(c);
        }
        tree(part.trim(), base, out);
        return;
    }
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    match name.as_str() {
        "" => {}
        "super" => {
            base.pop();
        }
        "self" => {}
        _ => base.push(name.clone()),
    }
    match rest[name.len()..].strip_prefix("::") {
        Some(next) if !name.is_empty() => tree(next, base, out),
        _ => out.push(base),
    }
}

/// The child modules of the module whose directory is `dir`: its files but `mod.rs`
/// (and, at the root, `lib.rs` and `main.rs`), and its folders.
fn children(dir: &Path, root: bool) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            if p.is_dir() {
                return Some(name);
            }
            let stem = name.strip_suffix(".rs")?;
            let own = stem == "mod" || (root && matches!(stem, "lib" | "main"));
            (!own).then(|| stem.to_string())
        })
        .collect()
}

/// Edges between sibling modules, by the module that holds them: parent → (from, to) →
/// the files making the edge.
type Edges = BTreeMap<(String, String), BTreeSet<String>>;

fn edges_within(src: &Path) -> BTreeMap<Vec<String>, Edges> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut by_parent: BTreeMap<Vec<String>, Edges> = BTreeMap::new();
    let mut kids: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let here = module_of(src, file);
        let text = std::fs::read_to_string(file).unwrap();
        for target in resolved_paths(own_text(&text), &here) {
            // Each module holding both the file and the target, from the root down.
            for depth in 0..here.len().min(target.len()) {
                if here[..depth] != target[..depth] {
                    break;
                }
                let (from, to) = (&here[depth], &target[depth]);
                let parent = here[..depth].to_vec();
                let known = kids
                    .entry(parent.clone())
                    .or_insert_with(|| children(&src.join(parent.join("/")), parent.is_empty()));
                if from != to && known.contains(to) {
                    let rel = file.strip_prefix(src).unwrap().display().to_string();
                    by_parent
                        .entry(parent)
                        .or_default()
                        .entry((from.clone(), to.clone()))
                        .or_default()
                        .insert(rel);
                }
            }
        }
    }
    by_parent
}

/// The cycles among the children of any module below the crate root in `src`, worded
/// with the files that make each edge.
fn cycles_within(src: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for (parent, edges) in edges_within(src) {
        if parent.is_empty() {
            continue; // the crate's top-level modules: `top_level_modules_have_no_cycle`
        }
        for group in cycles(&edges) {
            let mut text = format!("in {}: cycle among {group:?}:\n", parent.join("::"));
            for ((from, to), files) in &edges {
                if group.contains(from) && group.contains(to) {
                    text.push_str(&format!("  {from} -> {to}: {files:?}\n"));
                }
            }
            found.push(text);
        }
    }
    found
}

const CRATES: [&str; 6] = [
    "src",
    "engine/src",
    "parsers/src",
    "nodeset/src",
    "ssh-config/src",
    "vsphere/src",
];

#[test]
fn no_module_has_a_cycle_among_its_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let mut seen = 0;
    for krate in CRATES {
        let src = root.join(krate);
        seen += edges_within(&src)
            .iter()
            .filter(|(p, _)| !p.is_empty())
            .map(|(_, e)| e.len())
            .sum::<usize>();
        found.extend(cycles_within(&src));
    }
    // The check can fail: files of one module do use each other.
    assert!(seen > 20, "only {seen} edges within modules: the scan is broken");
    assert!(found.is_empty(), "{}", found.join(""));
}

/// Writes `files` (path, text) under a fresh `src`.
fn planted(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    for (path, text) in files {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    (dir, src)
}

#[test]
fn a_cycle_between_files_of_one_module_is_found_however_it_is_written() {
    // As the exporter once had it: scrape uses metrics, metrics names a constant of
    // scrape in a doc link, and a child of a third file reaches scrape through `super`.
    let (_dir, src) = planted(&[
        ("lib.rs", "pub mod serve;\n"),
        (
            "serve/mod.rs",
            "pub mod metrics;\npub mod scrape;\npub mod vcenter;\nuse scrape::Exporter;\n",
        ),
        (
            "serve/metrics.rs",
            "/// See [`super::scrape::RESTART_ONLY`].\npub struct Metrics;\n",
        ),
        (
            "serve/scrape.rs",
            "use super::{config::X, metrics::Metrics};\npub struct Exporter;\n",
        ),
        ("serve/vcenter.rs", "mod configs;\npub struct Fleet;\n"),
        (
            "serve/vcenter/configs.rs",
            "use super::super::scrape::Exporter;\nuse super::Fleet;\n",
        ),
    ]);
    let found = cycles_within(&src).join("");
    assert!(
        found.contains("in serve: cycle among [\"metrics\", \"scrape\"]"),
        "{found}"
    );
    assert!(found.contains("metrics -> scrape: {\"serve/metrics.rs\"}"), "{found}");
    // vcenter -> scrape is an edge but no cycle; mod.rs naming its children is none.
    assert!(!found.contains("vcenter"), "{found}");
    let edges = edges_within(&src);
    assert!(edges[&vec!["serve".to_string()]].contains_key(&("vcenter".into(), "scrape".into())));

    // Through `crate::` paths and a group, three files round.
    let (_dir, src) = planted(&[
        ("lib.rs", "mod a;\n"),
        ("a/mod.rs", "mod x;\nmod y;\nmod z;\n"),
        ("a/x.rs", "use crate::a::{y::Y, self};\n"),
        ("a/y.rs", "fn f() -> crate::a::z::Z { todo!() }\n"),
        (
            "a/z.rs",
            "use super::x;\n#[cfg(test)]\nmod tests {\n    use super::super::y;\n}\n",
        ),
    ]);
    let found = cycles_within(&src).join("");
    assert!(found.contains("in a: cycle among [\"x\", \"y\", \"z\"]"), "{found}");

    // Without the closing edge there is none; an inline test module's `super` is not
    // read as the file's own.
    let (_dir, src) = planted(&[
        ("lib.rs", "mod a;\n"),
        ("a/mod.rs", "mod x;\nmod y;\n"),
        ("a/x.rs", "use super::y::Y;\n"),
        (
            "a/y.rs",
            "pub struct Y;\n#[cfg(test)]\nmod tests {\n    use super::super::x;\n}\n",
        ),
    ]);
    assert!(cycles_within(&src).is_empty(), "{:?}", cycles_within(&src));
}

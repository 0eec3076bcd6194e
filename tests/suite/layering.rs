//! The layers stay apart. The engine crate (`engine/`: capture model, catalogue, facts,
//! diagnose, report, baseline) reaches none of the front-end crates (russh, tokio, clap,
//! indicatif), directly or through another dependency, so a second front end or the fuzz
//! harness can use it without them. Within each crate the top-level modules form no
//! cycle: a module is `src/<name>.rs` or `src/<name>/`, and an edge is any
//! `crate::<name>` reference in its files (code, doc links and all). A cycle found is
//! printed with the files that make each edge.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod function_length;
mod setup_getters;
mod within_modules;

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

/// Edges between the top-level modules of the crate whose sources are in `src`:
/// (from, to) → files making the edge.
fn edges(src: &Path) -> BTreeMap<(String, String), BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(src).ok()?;
            let first = rel.components().next()?.as_os_str().to_str()?.to_string();
            Some(first.trim_end_matches(".rs").to_string())
        })
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut edges: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(src).unwrap();
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for src in [root.join("src"), root.join("engine/src")] {
        assert_no_cycle(&src);
    }
}

fn assert_no_cycle(src: &Path) {
    let edges = edges(src);
    assert!(!edges.is_empty(), "no module edge found under {}", src.display());
    let cycles = cycles(&edges);
    let mut report = format!("in {}:\n", src.display());
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

/// Each package of `Cargo.lock` with the names of the packages it depends on (normal, build
/// and dev dependencies alike: the lock file does not tell them apart, which only makes
/// the check below stricter).
fn lock_graph(lock: &str) -> BTreeMap<String, Vec<String>> {
    let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for block in lock.split("[[package]]").skip(1) {
        let mut name = None;
        let mut deps = Vec::new();
        let mut in_deps = false;
        for line in block.lines() {
            let line = line.trim();
            if let Some(v) = line.strip_prefix("name = ") {
                name = Some(v.trim_matches('"').to_string());
            } else if line.starts_with("dependencies = [") {
                in_deps = !line.ends_with(']');
            } else if in_deps && line == "]" {
                in_deps = false;
            } else if in_deps {
                // `"name"` or `"name version"` or `"name version (source)"`.
                let dep = line.trim_end_matches(',').trim_matches('"');
                deps.push(dep.split(' ').next().unwrap_or(dep).to_string());
            }
        }
        if let Some(name) = name {
            graph.entry(name).or_default().extend(deps);
        }
    }
    graph
}

/// Every package `from` reaches in the lock graph.
fn reachable(graph: &BTreeMap<String, Vec<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(p) = stack.pop() {
        for dep in graph.get(&p).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
    seen
}

const FRONT_END_CRATES: [&str; 4] = ["russh", "tokio", "clap", "indicatif"];

#[test]
fn the_engine_reaches_no_front_end_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graph = lock_graph(&std::fs::read_to_string(root.join("Cargo.lock")).unwrap());
    let engine = reachable(&graph, "pvrdma-engine");
    assert!(
        engine.contains("pvrdma-parsers"),
        "the lock file was not read: {engine:?}"
    );
    let found: Vec<&str> = FRONT_END_CRATES.into_iter().filter(|c| engine.contains(*c)).collect();
    assert!(found.is_empty(), "pvrdma-engine depends on {found:?}");
    // The check can fail: the main crate does reach them.
    let main = reachable(&graph, "pvrdma-doctor");
    assert!(FRONT_END_CRATES.iter().all(|c| main.contains(*c)), "{main:?}");
    // Nor does the engine name them in its sources (a path dependency on the main crate or
    // a macro re-export would not show in the lock file).
    let mut files = Vec::new();
    rust_files(&root.join("engine/src"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for name in FRONT_END_CRATES.iter().chain(&["pvrdma_doctor"]) {
            assert!(!text.contains(&format!("{name}::")), "{} names {name}", file.display());
        }
    }
}

/// The front end names the engine by its own name (`pvrdma_engine::…`), so its edges into
/// the engine can be seen, and checked: the collection side (hosts in, raw outputs out)
/// never reaches the stages after it, so a capture is the same whatever the diagnosis or
/// the renderers do with it, and a bundle or a test sample goes through the same code.
#[test]
fn collection_reaches_no_stage_after_it_and_names_the_engine_by_its_name() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let collection = [
        "collect",
        "live",
        "ssh",
        "hosts",
        "archive.rs",
        "offline.rs",
        "vmsupport.rs",
        "bundle",
    ];
    let later = [
        "pvrdma_engine::diagnose",
        "pvrdma_engine::report",
        "pvrdma_engine::baseline",
    ];
    let mut seen_engine = 0;
    for module in collection {
        let path = root.join("src").join(module);
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path.clone());
        }
        assert!(!files.is_empty(), "{} is gone: update this list", path.display());
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            seen_engine += text.matches("pvrdma_engine::").count();
            for stage in later {
                assert!(!text.contains(stage), "{} reaches {stage}", file.display());
            }
        }
    }
    // The check can fail: the collection side does use the engine (catalogue, capture).
    assert!(seen_engine > 0, "no pvrdma_engine:: path found: the scan is broken");
    // No module of the front end reaches the engine under another name.
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for old in [
            "crate::diagnose",
            "crate::report",
            "crate::catalogue",
            "crate::exit",
            "crate::baseline",
            "crate::nodeset",
        ] {
            let hit = text.match_indices(old).any(|(at, _)| {
                let after = text[at + old.len()..].chars().next();
                let before = text[..at].chars().next_back();
                !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && !before.is_some_and(|c| c == '$' || c.is_alphanumeric() || c == '_')
            });
            assert!(!hit, "{} names the engine as {old}", file.display());
        }
        // Nor gives an engine item a second path by re-exporting it.
        for line in text.lines() {
            let line = line.trim_start();
            let exported = line.starts_with("pub ") || line.starts_with("pub(");
            assert!(
                !(exported && line.contains("use pvrdma_engine::")),
                "{} re-exports the engine: {line}",
                file.display()
            );
        }
    }
}

#[test]
fn the_node_set_crate_reaches_neither_the_engine_nor_a_front_end_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graph = lock_graph(&std::fs::read_to_string(root.join("Cargo.lock")).unwrap());
    let nodeset = reachable(&graph, "pvrdma-nodeset");
    let found: Vec<&str> = FRONT_END_CRATES.into_iter().filter(|c| nodeset.contains(*c)).collect();
    assert!(found.is_empty(), "pvrdma-nodeset depends on {found:?}");
    assert!(
        !nodeset.contains("pvrdma-engine"),
        "pvrdma-nodeset depends on the engine"
    );
    assert!(
        reachable(&graph, "pvrdma-engine").contains("pvrdma-nodeset"),
        "the lock file was not read"
    );
}

#[test]
fn the_ssh_config_crate_reaches_neither_the_engine_nor_a_front_end_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graph = lock_graph(&std::fs::read_to_string(root.join("Cargo.lock")).unwrap());
    let reader = reachable(&graph, "pvrdma-ssh-config");
    assert!(reader.contains("libc"), "the lock file was not read");
    for other in FRONT_END_CRATES.into_iter().chain(["pvrdma-engine", "pvrdma-doctor"]) {
        assert!(!reader.contains(other), "pvrdma-ssh-config depends on {other}");
    }
}

/// The vCenter client is a library of its own: no SSH, no diagnosis, no command line; and
/// its modules form no cycle.
#[test]
fn the_vsphere_crate_reaches_neither_the_engine_nor_ssh_nor_a_command_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graph = lock_graph(&std::fs::read_to_string(root.join("Cargo.lock")).unwrap());
    let client = reachable(&graph, "pvrdma-vsphere");
    assert!(client.contains("quick-xml"), "the lock file was not read");
    for other in ["russh", "clap", "indicatif", "pvrdma-engine", "pvrdma-doctor"] {
        assert!(!client.contains(other), "pvrdma-vsphere depends on {other}");
    }
    assert_no_cycle(&root.join("vsphere/src"));
}

/// The workspace's own packages: the root package and each `members` entry's crate, by the
/// `name` in its manifest.
fn workspace_packages(root: &Path) -> BTreeSet<String> {
    let name = |manifest: &Path| -> String {
        let text = std::fs::read_to_string(manifest).unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with("name = "))
            .unwrap_or_else(|| panic!("{} names no package", manifest.display()));
        line["name = ".len()..].trim_matches('"').to_string()
    };
    let top = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = top
        .lines()
        .find_map(|l| l.strip_prefix("members = "))
        .expect("the workspace lists its members on one line");
    let mut names: BTreeSet<String> = members
        .trim_matches(['[', ']'])
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| name(&root.join(m).join("Cargo.toml")))
        .collect();
    names.insert(name(&root.join("Cargo.toml")));
    names
}

/// Every dependency comes from crates.io, so `cargo update` bumps it and an advisory scanner
/// (cargo-audit, cargo-deny, Dependabot) reads its version from the lock file: a package
/// with no `source` (a path: a vendored copy or a `[patch]`) must be a workspace member, and
/// no package comes from git or another registry.
#[test]
fn every_dependency_comes_from_the_registry() {
    const CRATES_IO: &str = "registry+https://github.com/rust-lang/crates.io-index";
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
    let members = workspace_packages(root);
    assert!(members.contains("pvrdma-engine"), "members not read: {members:?}");
    let mut from_registry = BTreeSet::new();
    let mut elsewhere = Vec::new();
    for block in lock.split("[[package]]").skip(1) {
        let field = |key: &str| {
            block
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim_matches('"').to_string())
        };
        let name = field("name = ").expect("a package without a name");
        match field("source = ") {
            Some(source) if source == CRATES_IO => {
                from_registry.insert(name);
            }
            Some(source) => elsewhere.push(format!("{name} from {source}")),
            None if members.contains(&name) => {}
            None => elsewhere.push(format!("{name} from a path outside the workspace")),
        }
    }
    assert!(elsewhere.is_empty(), "not from crates.io: {elsewhere:#?}");
    for dependency in ["russh", "ring", "tokio"] {
        assert!(
            from_registry.contains(dependency),
            "{dependency} is not in the lock file from crates.io"
        );
    }
}

/// Every run of the binary in a test goes through the harness (`tests/support/client.rs`),
/// which keeps the user's agent and password out and bounds the run; only it names the
/// binary.
#[test]
fn every_binary_run_goes_through_the_harness() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let harness = tests.join("support/client.rs");
    let mut files = Vec::new();
    rust_files(&tests, &mut files);
    assert!(
        files.contains(&harness),
        "{} is gone: update this test",
        harness.display()
    );
    // Spelt in two halves, so this file does not name them.
    let names = [concat!("CARGO_BIN_EXE_", "pvrdma-doctor"), concat!("cargo_bin", "(")];
    for file in files.iter().filter(|f| **f != harness) {
        let text = std::fs::read_to_string(file).unwrap();
        for name in names {
            assert!(
                !text.contains(name),
                "{} runs the binary by hand ({name}): use support::client::Doctor",
                file.display()
            );
        }
    }
}

/// No source file grows past 1,000 lines. Files end where their concern does, not at a
/// count; this is the backstop for one that has grown several (inline tests go to the
/// module's `tests.rs` first).
#[test]
fn no_source_file_is_over_1000_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "src",
        "engine/src",
        "parsers/src",
        "nodeset/src",
        "ssh-config/src",
        "vsphere/src",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "only {} files found: the scan is broken", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            (lines > 1000).then(|| format!("{} ({lines} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "files over 1,000 lines: {long:#?}");
}

//! Golden tests: every sample output under `samples/` through its parser, typed result (or
//! the rendered error, for the malformed samples) compared with a reviewed snapshot.
//!
//! The file stem is the catalogue id, as in a support bundle, so a new sample needs no
//! code here; a new catalogue id needs one line in `pvrdma_parsers::by_id`.
use pvrdma_parsers as p;
use serde::Serialize;

/// What a sample parses to: the typed facts, or the error a user would see.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum Outcome<T> {
    Parsed(T),
    Error { message: String, error: p::ParseError },
}

/// Snapshots one result under the name `parse`; `glob!` adds the sample's path to it.
fn check<T: Serialize>(r: Result<T, p::ParseError>) {
    let outcome = match r {
        Ok(v) => Outcome::Parsed(v),
        Err(e) => Outcome::Error {
            message: e.to_string(),
            error: e,
        },
    };
    insta::assert_yaml_snapshot!("parse", outcome);
}

/// Snapshots a sample's parse (see [`check`]).
struct Snapshot;

impl p::by_id::Visitor for Snapshot {
    type Output = ();
    fn visit<T: Serialize + std::fmt::Debug>(self, r: Result<T, p::ParseError>) {
        check(r)
    }
}

/// The typed result of a sample, in a comparable form.
struct DebugOf;

impl p::by_id::Visitor for DebugOf {
    type Output = String;
    fn visit<T: Serialize + std::fmt::Debug>(self, r: Result<T, p::ParseError>) -> String {
        format!("{r:?}")
    }
}

#[test]
fn every_sample_parses_as_reviewed() {
    insta::glob!("../../samples", "**/*.txt", |path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.ends_with(".stderr.txt") {
            return;
        }
        // samples/vm-support*/ mimic ESXi vm-support bundles: its files are named by
        // vm-support's rule (localcli_...), not by catalogue id; tests/vmsupport.rs covers it.
        if path
            .components()
            .any(|c| c.as_os_str().to_str().is_some_and(|s| s.starts_with("vm-support")))
        {
            return;
        }
        let id = name.trim_end_matches(".txt");
        let text = std::fs::read_to_string(path).unwrap();
        // `<host>/vmkping/<peer>.txt`: a `--probe` capture, named by the peer it pinged.
        if path
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == "vmkping")
        {
            check(p::parse_vmkping_probe(&text));
            return;
        }
        assert!(
            p::parse_by_id(id, &text, Snapshot).is_some(),
            "{}: no parser for catalogue id {id:?}",
            path.display()
        );
    });
}

/// Output saved on Windows (or passed through a tool that adds CRs) must mean the same:
/// same facts, and for malformed samples the same error at the same line and column.
#[test]
fn crlf_copies_of_every_sample_parse_the_same() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let mut checked = 0;
    let dirs = |p: &std::path::Path| -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(p).unwrap().map(|e| e.unwrap().path()).collect();
        v.sort();
        v
    };
    for scenario in dirs(&root).iter().filter(|p| p.is_dir()) {
        for host in dirs(scenario).iter().filter(|p| p.is_dir()) {
            for path in dirs(host) {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                let Some(id) = name.strip_suffix(".txt") else {
                    continue;
                };
                let text = std::fs::read_to_string(&path).unwrap();
                let Some(lf) = p::parse_by_id(id, &text, DebugOf) else {
                    continue;
                };
                let crlf = p::parse_by_id(id, &text.replace('\n', "\r\n"), DebugOf);
                assert_eq!(Some(lf), crlf, "{}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked > 200, "only {checked} samples found");
}

//! No parser panics, whatever a host (or a damaged bundle) prints, and every error points
//! inside the text it was given. Inputs: arbitrary strings, strings over the characters the
//! grammars care about, and the real sample files cut, with lines dropped or duplicated,
//! and with bytes flipped.
use proptest::prelude::*;
use pvrdma_parsers as p;
use std::path::{Path, PathBuf};

/// The error of a parse, whatever the parser's value type.
struct ErrorOf;

impl p::by_id::Visitor for ErrorOf {
    type Output = Option<p::ParseError>;
    fn visit<T: serde::Serialize + std::fmt::Debug>(self, result: Result<T, p::ParseError>) -> Option<p::ParseError> {
        result.err()
    }
}

/// The entry points that are no catalogue command's parser (single-output forms of the
/// batches, the record-by-record process list, a `.vmx` file, the probe, the vSphere
/// API's host and VM configuration until the catalogue reads them): every other
/// one is reached through the parser table, so a new command's parser is tested here the
/// moment it is in the table.
fn other_parsers(input: &str) -> [Option<p::ParseError>; 9] {
    [
        p::parse_vm_port_list(input).err(),
        p::parse_pvrdma_properties(input).err(),
        p::parse_vm_process_records(input).err(),
        p::vmx::parse_vmx(input).err(),
        p::parse_vmkping(input).err(),
        p::parse_vmkping_probe(input).err(),
        p::nic_stats::parse_nic_stats(input).err(),
        p::parse_vsphere_host_config(input).err(),
        p::parse_vsphere_vm_config(input).err(),
    ]
}

/// Runs every entry point on `input` and checks each error's position.
fn all_parsers(input: &str) -> Result<(), TestCaseError> {
    let mut errors: Vec<Option<p::ParseError>> = p::by_id::IDS
        .iter()
        .map(|id| p::by_id::parse_by_id(id, input, ErrorOf).flatten())
        .collect();
    errors.extend(other_parsers(input));
    let line_count = input.split('\n').count();
    for e in errors.into_iter().flatten() {
        prop_assert!(
            e.line >= 1 && e.line <= line_count,
            "{e} (input has {line_count} lines)"
        );
        let line = input.split('\n').nth(e.line - 1).unwrap_or("");
        prop_assert!(
            e.column >= 1 && e.column <= line.chars().count() + 1,
            "{e} (line is {line:?})"
        );
        prop_assert!(e.snippet.chars().count() <= 80, "{e}");
        prop_assert!(!e.expected.is_empty());
    }
    Ok(())
}

fn sample_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sample_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "txt") {
            out.push(path);
        }
    }
}

/// The sample texts, read once for all cases.
fn samples() -> &'static [String] {
    static SAMPLES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SAMPLES.get_or_init(read_samples)
}

fn read_samples() -> Vec<String> {
    let mut files = Vec::new();
    sample_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples"), &mut files);
    files.sort();
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .filter(|t| !t.is_empty())
        .collect();
    assert!(texts.len() > 100, "samples/ not found or nearly empty");
    texts
}

#[derive(Debug, Clone)]
enum Mutation {
    CutAt(usize),
    DropLine(usize),
    DuplicateLine(usize),
    FlipByte(usize, u8),
    CrLf,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::CutAt),
        any::<usize>().prop_map(Mutation::DropLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::FlipByte(i, b)),
        Just(Mutation::CrLf),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    match *m {
        Mutation::CutAt(i) => {
            let mut at = i % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text[..at].to_string()
        }
        Mutation::DropLine(i) => {
            let skip = i % lines.len().max(1);
            lines
                .iter()
                .enumerate()
                .filter(|(n, _)| *n != skip)
                .map(|(_, l)| *l)
                .collect()
        }
        Mutation::DuplicateLine(i) => {
            let dup = i % lines.len().max(1);
            let mut out = String::new();
            for (n, l) in lines.iter().enumerate() {
                out.push_str(l);
                if n == dup {
                    out.push_str(l);
                }
            }
            out
        }
        Mutation::FlipByte(i, b) => {
            let mut bytes = text.as_bytes().to_vec();
            if !bytes.is_empty() {
                let at = i % bytes.len();
                bytes[at] ^= b | 1;
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Mutation::CrLf => text.replace('\n', "\r\n"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(input in any::<String>()) {
        all_parsers(&input)?;
    }

    #[test]
    fn grammar_alphabet_never_panics(input in "[ \t\r\na-z0-9:_/{}=<>,.-]{0,300}") {
        all_parsers(&input)?;
    }

    #[test]
    fn mutated_samples_never_panic(
        pick in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let all = samples();
        let mut text = pick.get(all).clone();
        for m in &mutations {
            text = apply(&text, m);
        }
        all_parsers(&text)?;
    }
}

/// Every public `parse_*` function of the crate is run above: through the parser table or
/// in [`other_parsers`]. A parser added outside both fails here.
#[test]
fn every_parser_is_run() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let table = std::fs::read_to_string(src.join("by_id.rs")).expect("by_id.rs");
    let this = include_str!("no_panic.rs");
    let listed = this
        .split("fn other_parsers")
        .nth(1)
        .and_then(|rest| rest.split("\n}\n").next())
        .expect("other_parsers");
    let mut missing = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&src)
        .expect("src")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("source");
        for rest in text.split("pub fn parse_").skip(1) {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let name = format!("parse_{name}");
            let used = |t: &str| t.contains(&format!("{name} in \"")) || t.contains(&format!("{name}(input)"));
            if name != "parse_by_id" && !used(&table) && !used(listed) {
                missing.push(name);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "parsers neither in by_id.rs nor in other_parsers: {missing:?}"
    );
}

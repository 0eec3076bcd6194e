//! Setup state is data: no I/O is reachable from a getter of it. What the command line
//! resolves into (every `…Setup` type) and what the exporter's configuration file
//! resolves into (the `Config` of a `config.rs`), with every type their fields hold, is
//! set up before any I/O; reading a password, a file or a certificate, or opening a
//! connection, is a step of the run: a function that is handed the setup, never a `&self`
//! method of it (a getter) that does it behind the caller's back.
//!
//! A getter is any `&self` method in an `impl` of such a type. What it reaches is its body
//! and, transitively, the bodies of the functions it calls that the scanned crates
//! define: free functions by name, `Type::name` by its type, `self.name` by the getter's
//! own type (a method called on another value is not followed). I/O is any of the
//! markers below. A field holding an `Arc` is a handle the run shares (a cache, a budget,
//! a callback), not a value the setup says, and is not followed.
use super::rust_files;
use super::within_modules::own_text;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What does I/O: the file system, the terminal, the network and TLS, and waiting on
/// futures that do.
const IO_MARKERS: [&str; 16] = [
    "std::fs::",
    "fs::read",
    "File::open",
    "File::create",
    "OpenOptions",
    "read_dir(",
    "stdin()",
    "prompt_password",
    "TcpStream",
    "TcpListener",
    "tokio::net",
    "tokio_rustls",
    "TlsConnector",
    "pem_file_iter",
    "load_native_certs",
    "block_on(",
];

/// A function the scanned sources define: the type of its `impl` (`None`: a free
/// function), its receiver, its body, and where it is.
struct Function {
    owner: Option<String>,
    by_ref_self: bool,
    body: String,
    at: String,
}

/// The scanned sources: every function by name, and every struct and enum by name with
/// the types its fields name (`Arc` fields left out).
#[derive(Default)]
struct Sources {
    functions: BTreeMap<String, Vec<Function>>,
    fields: BTreeMap<String, BTreeSet<String>>,
}

/// The text from `open` (a `{` or `(`) to its matching close, brackets in strings and
/// comments included (good enough for the shapes scanned: a field list, a body).
fn block(text: &str, open: usize) -> &str {
    let bytes = text.as_bytes();
    let (o, c) = (bytes[open], if bytes[open] == b'{' { b'}' } else { b')' });
    let mut depth = 0usize;
    for (i, b) in bytes.iter().enumerate().skip(open) {
        if *b == o {
            depth += 1;
        } else if *b == c {
            depth -= 1;
            if depth == 0 {
                return &text[open..=i];
            }
        }
    }
    &text[open..]
}

fn ident_at(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The capitalised names (types) in `text`.
fn type_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find(|c: char| c.is_ascii_uppercase()) {
        let before = rest[..i].chars().next_back();
        let word = ident_at(&rest[i..]);
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            names.insert(word.clone());
        }
        rest = &rest[i + word.len().max(1)..];
    }
    names
}

/// The top-level comma-separated parts of a bracketed list (`{ … }`, `( … )`), each
/// without its comment and attribute lines.
fn parts(list: &str) -> Vec<String> {
    let inner = &list[1..list.len().saturating_sub(1)];
    let code: String = inner
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && !l.starts_with("#["))
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = Vec::new();
    let (mut depth, mut part) = (0i32, String::new());
    for c in code.chars() {
        match c {
            '<' | '(' | '{' | '[' => depth += 1,
            '>' | ')' | '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut part));
                continue;
            }
            _ => {}
        }
        part.push(c);
    }
    out.push(part);
    out.into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// The types a struct's field list (or an enum's variants) names; an `Arc` field is left
/// out, and so are the variants' own names.
fn field_types(fields: &str, variants: bool) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for part in parts(fields) {
        let part = if variants {
            let name = ident_at(&part);
            part[name.len()..].to_string()
        } else {
            part
        };
        let ty = part.split_once(':').map_or(part.as_str(), |(_, t)| t);
        if ty.contains("Arc<") && !variants {
            continue;
        }
        if variants && (ty.starts_with('{') || ty.starts_with('(')) {
            names.extend(field_types(ty.split('=').next().unwrap_or(ty).trim(), false));
            continue;
        }
        names.extend(type_names(ty));
    }
    names
}

impl Sources {
    fn read(dirs: &[PathBuf]) -> Sources {
        let mut sources = Sources::default();
        for dir in dirs {
            let mut files = Vec::new();
            rust_files(dir, &mut files);
            for file in files {
                let text = std::fs::read_to_string(&file).unwrap();
                sources.add(own_text(&text), &file.display().to_string());
            }
        }
        sources
    }

    fn add(&mut self, text: &str, file: &str) {
        for kind in ["struct ", "enum "] {
            for (at, _) in text.match_indices(kind) {
                if text[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric())
                {
                    continue;
                }
                let name = ident_at(&text[at + kind.len()..]);
                let Some(open) = text[at..].find(['{', '(', ';']).map(|i| at + i) else {
                    continue;
                };
                let fields = if text.as_bytes()[open] == b';' {
                    BTreeSet::new()
                } else {
                    field_types(block(text, open), kind == "enum ")
                };
                self.fields.entry(name).or_default().extend(fields);
            }
        }
        let impls = impl_ranges(text);
        for (at, _) in text.match_indices("fn ") {
            if text[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                continue;
            }
            let name = ident_at(&text[at + 3..]);
            let Some(open) = text[at..].find(['{', ';']).map(|i| at + i) else {
                continue;
            };
            if text.as_bytes()[open] == b';' {
                continue;
            }
            let signature = &text[at..open];
            let owner = impls
                .iter()
                .find(|(range, _)| range.contains(&at))
                .map(|(_, owner)| owner.clone());
            self.functions.entry(name).or_default().push(Function {
                owner,
                by_ref_self: signature.contains("(&self") || signature.contains("(&'"),
                body: block(text, open).to_string(),
                at: format!("{file}:{}", text[..at].lines().count() + 1),
            });
        }
    }

    /// The setup types: the roots and every type their fields name, transitively.
    fn setup_types(&self, roots: &BTreeSet<String>) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<String> = roots.iter().cloned().collect();
        while let Some(t) = stack.pop() {
            if !self.fields.contains_key(&t) || !seen.insert(t.clone()) {
                continue;
            }
            stack.extend(self.fields[&t].iter().cloned());
        }
        seen
    }

    /// The functions a body calls that the sources define: free functions by name,
    /// `Type::name` by type, `self.name` by `owner`.
    fn callees<'a>(&'a self, body: &str, owner: Option<&str>) -> Vec<&'a Function> {
        let mut found = Vec::new();
        for (at, _) in body.match_indices('(') {
            let head = &body[..at];
            let name: String = head
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let Some(fns) = (!name.is_empty()).then(|| self.functions.get(&name)).flatten() else {
                continue;
            };
            let before = &head[..head.len() - name.len()];
            let wanted: Option<Option<String>> = if let Some(path) = before.strip_suffix("::") {
                let ty: String = path
                    .chars()
                    .rev()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                // `Type::name` is a method of Type (`Self`: the caller's); `module::name` a
                // free function.
                match ty.as_str() {
                    "Self" => Some(owner.map(str::to_string)),
                    t if t.starts_with(|c: char| c.is_ascii_uppercase()) => Some(Some(ty)),
                    _ => Some(None),
                }
            } else if before.ends_with("self.") {
                Some(owner.map(str::to_string))
            } else if before.ends_with('.') || before.ends_with('!') {
                None
            } else {
                Some(None)
            };
            let Some(wanted) = wanted else {
                continue;
            };
            found.extend(fns.iter().filter(|f| f.owner == wanted));
        }
        found
    }

    /// The I/O a getter reaches: (marker, where) pairs, the first found along each path.
    fn io_reached(&self, getter: &Function) -> Vec<String> {
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut stack = vec![getter];
        let mut found = Vec::new();
        while let Some(f) = stack.pop() {
            if !seen.insert(f.at.clone()) {
                continue;
            }
            for marker in IO_MARKERS {
                if f.body.contains(marker) {
                    found.push(format!("{marker} at {}", f.at));
                }
            }
            stack.extend(self.callees(&f.body, f.owner.as_deref()));
        }
        found
    }
}

/// Each `impl … for Type` or `impl Type` block: its byte range and `Type`.
fn impl_ranges(text: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("impl") {
        let after = &text[at + 4..];
        if !after.starts_with([' ', '<'])
            || text[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric())
        {
            continue;
        }
        let Some(open) = after.find('{').map(|i| at + 4 + i) else {
            continue;
        };
        let mut head = text[at + 4..open].trim();
        // `impl<'a, T: X>`: the generics first.
        if head.starts_with('<') {
            let mut depth = 0;
            let end = head
                .char_indices()
                .find(|(_, c)| {
                    depth += match c {
                        '<' => 1,
                        '>' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(head.len(), |(i, _)| i + 1);
            head = &head[end..];
        }
        let head = head.split(" where ").next().unwrap_or(head);
        let ty_part = head.rsplit(" for ").next().unwrap_or(head).trim();
        let path = ty_part.split('<').next().unwrap_or(ty_part);
        let ty = Some(ident_at(path.rsplit("::").next().unwrap_or(path).trim())).filter(|t| !t.is_empty());
        if let Some(ty) = ty {
            out.push((open..open + block(text, open).len(), ty));
        }
    }
    out
}

/// The getters of setup state that reach I/O, each with what it reaches.
fn violations(dirs: &[PathBuf]) -> Vec<String> {
    let sources = Sources::read(dirs);
    let roots: BTreeSet<String> = sources
        .fields
        .keys()
        .filter(|t| t.ends_with("Setup"))
        .cloned()
        .chain(config_roots(dirs))
        .collect();
    let setup = sources.setup_types(&roots);
    let mut found = Vec::new();
    for (name, fns) in &sources.functions {
        for f in fns.iter().filter(|f| f.by_ref_self) {
            let Some(owner) = f.owner.as_deref().filter(|o| setup.contains(*o)) else {
                continue;
            };
            let io = sources.io_reached(f);
            if !io.is_empty() {
                found.push(format!("{owner}::{name} ({}) reaches {}", f.at, io.join(", ")));
            }
        }
    }
    found
}

/// What a configuration file resolves into: each `Config` a `config.rs` defines.
fn config_roots(dirs: &[PathBuf]) -> Vec<String> {
    let mut files = Vec::new();
    for dir in dirs {
        rust_files(dir, &mut files);
    }
    let defines_config = |f: &Path| {
        std::fs::read_to_string(f).is_ok_and(|t| t.contains("pub struct Config ") || t.contains("pub struct Config{"))
    };
    files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "config.rs") && defines_config(f))
        .map(|_| "Config".to_string())
        .collect()
}

#[test]
fn no_getter_of_setup_state_reaches_io() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs = [root.join("src"), root.join("vsphere/src")];
    let sources = Sources::read(&dirs);
    // The check can fail: the setup types and their getters are found.
    let setup = sources.setup_types(&["Setup".to_string()].into());
    for t in ["Job", "ReportSetup", "VcenterSetup", "LiveOptions", "Selection"] {
        assert!(setup.contains(t), "{t} not found among the setup types: {setup:?}");
    }
    assert!(
        config_roots(&dirs).contains(&"Config".to_string()),
        "the exporter's Config is gone"
    );
    let found = violations(&dirs);
    assert!(
        found.is_empty(),
        "getters of setup state that do I/O:\n{}",
        found.join("\n")
    );
}

/// Writes `files` (path, text) under a fresh `src`.
fn planted(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join("src").join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let src = dir.path().join("src");
    (dir, vec![src])
}

#[test]
fn a_getter_that_reads_a_file_or_opens_a_connection_is_found_however_deep() {
    // As the vCenter setup once had it: a getter that reads the password file through a
    // free function, and a field's type whose getter connects.
    let (_dir, dirs) = planted(&[(
        "lib.rs",
        "pub struct RunSetup { pub vcenter: VcSetup, pub peer: Peer, cache: Option<Arc<Cache>> }\n\
         pub struct VcSetup { file: PathBuf }\n\
         pub struct Peer { addr: String }\n\
         pub struct Cache;\n\
         impl VcSetup {\n    pub fn config(&self) -> String {\n        read_password(&self.file)\n    }\n}\n\
         fn read_password(p: &Path) -> String {\n    std::fs::read_to_string(p).unwrap()\n}\n\
         impl Peer {\n    fn label(&self) -> &str {\n        &self.addr\n    }\n    fn ping(&self) {\n        self.open();\n    }\n    fn open(&self) {\n        TcpStream::connect(&self.addr);\n    }\n}\n\
         impl Cache {\n    fn get(&self) {\n        std::fs::read(\"x\");\n    }\n}\n",
    )]);
    let found = violations(&dirs).join("\n");
    assert!(
        found.contains("VcSetup::config") && found.contains("std::fs::"),
        "{found}"
    );
    assert!(found.contains("Peer::ping") && found.contains("TcpStream"), "{found}");
    assert!(!found.contains("label"), "{found}");
    // A shared handle (`Arc`) is the run's, not the setup's.
    assert!(!found.contains("Cache::get"), "{found}");

    // The same reading as a step of the run, a function handed the setup: none.
    let (_dir, dirs) = planted(&[(
        "lib.rs",
        "pub struct VcSetup { file: PathBuf }\n\
         impl VcSetup {\n    pub fn file(&self) -> &Path {\n        &self.file\n    }\n}\n\
         pub fn login_config(setup: &VcSetup) -> String {\n    std::fs::read_to_string(setup.file()).unwrap()\n}\n",
    )]);
    assert!(violations(&dirs).is_empty(), "{:?}", violations(&dirs));
}

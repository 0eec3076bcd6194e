//! No production function runs over [`MAX_LINES`] lines, counted from its `fn` to its
//! closing brace, comments included: past that a function holds more than one concern, and
//! is split where each ends. The one exception is a table of arms (a `match` or a list
//! with one arm per keyword, metric or check, and little else), which reads the same at
//! any length; at most [`MAX_TABLES`] of them, each named in [`TABLES`] with its reason.
//!
//! Test code is left out: `#[cfg(test)]` items (inline modules and modules in files of
//! their own), `tests.rs`, `*_tests.rs` and `tests/` folders. Lines are counted on the
//! text as written; braces are found by a small lexer that skips comments, strings (raw
//! ones too) and char literals, so a `{` in any of them never counts.
use super::rust_files;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 100;

const MAX_TABLES: usize = 5;

/// The functions allowed past [`MAX_LINES`]: (file, function, why it is a table of arms).
const TABLES: &[(&str, &str, &str)] = &[];

/// The crates' sources, as the file backstop reads them.
const SOURCES: [&str; 6] = [
    "src",
    "engine/src",
    "parsers/src",
    "nodeset/src",
    "ssh-config/src",
    "vsphere/src",
];

#[test]
fn no_production_function_is_over_100_lines_but_the_named_tables() {
    assert!(
        TABLES.len() <= MAX_TABLES,
        "more than {MAX_TABLES} tables of arms: {TABLES:#?}"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (long, scanned) = long_functions(root);
    assert!(scanned > 500, "only {scanned} functions found: the scan is broken");
    let named = |file: &str, name: &str| TABLES.iter().any(|(f, n, _)| *f == file && *n == name);
    let mut problems: Vec<String> = long
        .iter()
        .filter(|(file, f)| !named(file, &f.name))
        .map(|(file, f)| {
            format!(
                "{file}: fn {} is {} lines (from line {}): split it where its concerns end, or, \
                 for a table of arms only, name it in TABLES with its reason",
                f.name,
                f.lines(),
                f.first
            )
        })
        .collect();
    for (file, name, why) in TABLES {
        if why.trim().is_empty() {
            problems.push(format!("{file}: fn {name} is named in TABLES without a reason"));
        }
        if !long.iter().any(|(f, l)| f == file && l.name == *name) {
            problems.push(format!(
                "{file}: fn {name} is named in TABLES but is not over {MAX_LINES} lines: remove it"
            ));
        }
    }
    assert!(problems.is_empty(), "functions over {MAX_LINES} lines: {problems:#?}");
}

/// Every function with a body over [`MAX_LINES`] lines in the production code under the
/// [`SOURCES`] of `root` (file relative to `root`, `/`-separated), and how many functions
/// were looked at.
fn long_functions(root: &Path) -> (Vec<(String, FnSpan)>, usize) {
    let mut files = Vec::new();
    for dir in SOURCES {
        rust_files(&root.join(dir), &mut files);
    }
    let outlines: Vec<(PathBuf, Outline)> = files
        .into_iter()
        .map(|f| {
            let outline = outline(&std::fs::read_to_string(&f).unwrap());
            (f, outline)
        })
        .collect();
    let test_modules: BTreeSet<PathBuf> = outlines
        .iter()
        .flat_map(|(f, o)| o.test_modules.iter().map(move |m| module_path(f, m)))
        .collect();
    let mut long = Vec::new();
    let mut scanned = 0;
    for (file, outline) in outlines {
        let relative = file.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        if is_test_file(&relative) || test_modules.iter().any(|m| file.starts_with(m)) {
            continue;
        }
        scanned += outline.functions.len();
        long.extend(
            outline
                .functions
                .into_iter()
                .filter(|f| f.lines() > MAX_LINES)
                .map(|f| (relative.clone(), f)),
        );
    }
    (long, scanned)
}

/// `tests.rs`, `*_tests.rs`, or anything under a `tests/` folder.
fn is_test_file(relative: &str) -> bool {
    let name = relative.rsplit('/').next().unwrap_or(relative);
    name == "tests.rs" || name.ends_with("_tests.rs") || relative.split('/').any(|part| part == "tests")
}

/// Where the module `file` declares as `mod name;` lives: `#[path]` is relative to the
/// declaring file's folder; else `name.rs` (or `name/`) in the folder of its children,
/// which is its own folder for `mod.rs`, `lib.rs` and `main.rs`, else `<stem>/`.
fn module_path(file: &Path, (name, path): &(String, Option<String>)) -> PathBuf {
    let folder = file.parent().unwrap();
    if let Some(path) = path {
        return folder.join(path);
    }
    let stem = file.file_stem().unwrap().to_string_lossy();
    let children = if matches!(stem.as_ref(), "mod" | "lib" | "main") {
        folder.to_path_buf()
    } else {
        folder.join(stem.as_ref())
    };
    let file = children.join(format!("{name}.rs"));
    if file.exists() {
        file
    } else {
        children.join(name)
    }
}

/// What the rule needs of Rust source: words, punctuation and string literals.
#[derive(Debug, PartialEq)]
enum Tok {
    Word(String),
    Punct(char),
    Str(String),
}

struct Token {
    tok: Tok,
    line: usize,
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits `src` into tokens. A string (plain, byte, C, raw with any number of `#`) becomes
/// one `Str`; char and byte literals are dropped (`'{'` is a char, `'a` a lifetime, whose
/// name reads as a word); comments, nested block comments included, are dropped.
fn lex(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let mut line_at = Vec::with_capacity(c.len() + 1);
    let mut line = 1;
    for &ch in &c {
        line_at.push(line);
        if ch == '\n' {
            line += 1;
        }
    }
    line_at.push(line);
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let start = i;
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            i += 1;
            let mut text = String::new();
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    text.push(c[i]);
                    i += 1;
                }
                text.push(at(i));
                i += 1;
            }
            i += 1;
            tokens.push(Token {
                tok: Tok::Str(text),
                line: line_at[start],
            });
        } else if ch == '\'' {
            if at(i + 1) == '\\' {
                // An escape: `'\''`, `'\n'`, `'\u{7b}'`; its closing quote comes after.
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if is_ident(ch) {
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let hashes = c[i..].iter().take_while(|&&h| h == '#').count();
            if matches!(word.as_str(), "r" | "br" | "cr") && at(i + hashes) == '"' {
                i += hashes + 1;
                let body = i;
                while i < c.len() && !(c[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#')) {
                    i += 1;
                }
                let text: String = c[body..i.min(c.len())].iter().collect();
                i += 1 + hashes;
                tokens.push(Token {
                    tok: Tok::Str(text),
                    line: line_at[start],
                });
            } else if !(matches!(word.as_str(), "b" | "c") && at(i) == '"') {
                // (A `b"` or `c"` prefix: the string itself is read on the next turn.)
                tokens.push(Token {
                    tok: Tok::Word(word),
                    line: line_at[start],
                });
            }
        } else {
            tokens.push(Token {
                tok: Tok::Punct(ch),
                line: line_at[start],
            });
            i += 1;
        }
    }
    tokens
}

/// A function with a body, from the line of its `fn` to the line of its closing brace.
#[derive(Debug, PartialEq)]
struct FnSpan {
    name: String,
    first: usize,
    last: usize,
}

impl FnSpan {
    fn lines(&self) -> usize {
        self.last - self.first + 1
    }
}

/// What one file holds: its functions outside `#[cfg(test)]` items, and the modules it
/// declares under `#[cfg(test)]` in files of their own (name, `#[path]` if any).
#[derive(Debug, Default)]
struct Outline {
    functions: Vec<FnSpan>,
    test_modules: Vec<(String, Option<String>)>,
}

/// A `{` not yet closed: the function whose body it opens (name, first line), whether it
/// opens a `#[cfg(test)]` item, and the parentheses open around it.
struct Open {
    function: Option<(String, usize)>,
    test: bool,
    parens: usize,
}

fn outline(src: &str) -> Outline {
    let tokens = lex(src);
    let punct = |k: usize, p: char| matches!(tokens.get(k), Some(Token { tok: Tok::Punct(x), .. }) if *x == p);
    let word = |k: usize| match tokens.get(k) {
        Some(Token { tok: Tok::Word(w), .. }) => Some(w.as_str()),
        _ => None,
    };
    let mut out = Outline::default();
    let mut open: Vec<Open> = Vec::new();
    // Parentheses and brackets open in the current braces: a `{` inside them (a pattern,
    // a closure's body) opens no function body.
    let mut parens = 0usize;
    // The last `fn name` seen, until its body or its `;`.
    let mut pending_fn: Option<(String, usize)> = None;
    // A `#[cfg(test)]` seen, until the item it marks opens or ends.
    let mut pending_test = false;
    let mut pending_path: Option<String> = None;
    let mut k = 0;
    while k < tokens.len() {
        let t = &tokens[k];
        match &t.tok {
            Tok::Punct('#') if punct(k + 1, '[') => {
                if word(k + 2) == Some("cfg")
                    && punct(k + 3, '(')
                    && word(k + 4) == Some("test")
                    && punct(k + 5, ')')
                    && punct(k + 6, ']')
                {
                    pending_test = true;
                    k += 7;
                    continue;
                }
                if let (
                    Some("path"),
                    true,
                    Some(Token {
                        tok: Tok::Str(path), ..
                    }),
                ) = (word(k + 2), punct(k + 3, '='), tokens.get(k + 4))
                {
                    pending_path = Some(path.clone());
                }
            }
            Tok::Word(w) if w == "fn" => {
                // `fn(u8) -> u8` is a type, not an item.
                if let Some(name) = word(k + 1) {
                    pending_fn = Some((name.to_string(), t.line));
                }
            }
            Tok::Word(w) if w == "mod" && pending_test => {
                if let (Some(name), true) = (word(k + 1), punct(k + 2, ';')) {
                    out.test_modules.push((name.to_string(), pending_path.take()));
                }
            }
            Tok::Punct('(' | '[') => parens += 1,
            Tok::Punct(')' | ']') => parens = parens.saturating_sub(1),
            Tok::Punct(';') if parens == 0 => {
                pending_fn = None;
                pending_test = false;
                pending_path = None;
            }
            Tok::Punct('{') => {
                let item = parens == 0;
                open.push(Open {
                    function: if item { pending_fn.take() } else { None },
                    test: item && std::mem::take(&mut pending_test),
                    parens,
                });
                parens = 0;
            }
            Tok::Punct('}') => {
                if let Some(closed) = open.pop() {
                    parens = closed.parens;
                    let in_test = closed.test || open.iter().any(|o| o.test);
                    if let (Some((name, first)), false) = (closed.function, in_test) {
                        out.functions.push(FnSpan {
                            name,
                            first,
                            last: t.line,
                        });
                    }
                }
                pending_test = false;
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// The functions the scanner finds in `src`: (name, lines).
fn spans(src: &str) -> Vec<(String, usize)> {
    outline(src)
        .functions
        .iter()
        .map(|f| (f.name.clone(), f.lines()))
        .collect()
}

#[test]
fn a_function_counts_from_its_fn_to_its_closing_brace_comments_included() {
    let src = "/// Doc lines are not counted.\npub(crate) async fn f(\n    a: u8,\n) -> u8 {\n    // a comment counts\n    a\n}\n\nfn g() {}\n";
    assert_eq!(spans(src), [("f".to_string(), 6), ("g".to_string(), 1)]);
    // A nested function counts in its own right and in the one around it.
    let nested = "fn outer() {\n    fn inner() {\n        1;\n    }\n}\n";
    assert_eq!(spans(nested), [("inner".to_string(), 3), ("outer".to_string(), 5)]);
}

#[test]
fn braces_in_strings_chars_comments_and_raw_strings_do_not_count() {
    let src = r####"fn tricky() {
    let a = "{ \" {";
    let b = '{';
    let c = '\'';
    let d = '\u{7b}';
    let e = b'{';
    let f = r#"}" { "#;
    let g = r##"a "# } still inside"##;
    let h = br"}";
    // } a closing brace in a comment
    /* { /* nested } */ } */
    let i: &'static str = "x";
    'outer: loop { break 'outer; }
}
fn after() {
    1;
}
"####;
    assert_eq!(spans(src), [("tricky".to_string(), 14), ("after".to_string(), 3)]);
}

#[test]
fn declarations_types_and_patterns_are_no_bodies() {
    let src = "trait T {\n    fn declared(&self);\n    fn given(&self) {}\n}\nstruct S { f: fn(u8) -> u8 }\nfn pattern(P { x, y }: P) -> u8 {\n    x + y\n}\nfn closure() {\n    run(|| { 1 });\n}\n";
    assert_eq!(
        spans(src),
        [
            ("given".to_string(), 1),
            ("pattern".to_string(), 3),
            ("closure".to_string(), 3)
        ]
    );
}

#[test]
fn test_code_is_left_out() {
    let src = "fn kept() {}\n#[cfg(test)]\nmod tests {\n    fn helper() {}\n    #[test]\n    fn a_test() {}\n}\n#[cfg(test)]\npub fn fixture() {}\n#[cfg(test)]\n#[path = \"x_tests.rs\"]\nmod x;\n#[cfg(test)]\npub mod fixtures;\nmod real;\n";
    let o = outline(src);
    assert_eq!(
        o.functions.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        ["kept"]
    );
    assert_eq!(
        o.test_modules,
        [
            ("x".to_string(), Some("x_tests.rs".to_string())),
            ("fixtures".to_string(), None)
        ]
    );
    for file in [
        "src/app/tests.rs",
        "vsphere/src/soap_tests.rs",
        "engine/src/tests/more.rs",
    ] {
        assert!(is_test_file(file), "{file}");
    }
    assert!(!is_test_file("src/collect/ssh.rs"));
}

#[test]
fn a_function_one_line_over_is_named() {
    let root = tempfile::tempdir().unwrap();
    for dir in SOURCES {
        std::fs::create_dir_all(root.path().join(dir)).unwrap();
    }
    let src = root.path().join("src");
    let body = "    step();\n".repeat(MAX_LINES - 2);
    std::fs::write(src.join("lib.rs"), format!("fn fits() {{\n{body}}}\n")).unwrap();
    std::fs::write(
        src.join("long.rs"),
        format!("fn too_long() {{\n{body}    step();\n}}\n"),
    )
    .unwrap();
    std::fs::write(
        src.join("tests.rs"),
        format!("fn also_long() {{\n{body}    step();\n}}\n"),
    )
    .unwrap();
    let (long, scanned) = long_functions(root.path());
    assert_eq!(scanned, 2);
    let named: Vec<(&str, &str, usize)> = long
        .iter()
        .map(|(file, f)| (file.as_str(), f.name.as_str(), f.lines()))
        .collect();
    assert_eq!(named, [("src/long.rs", "too_long", MAX_LINES + 1)]);
}

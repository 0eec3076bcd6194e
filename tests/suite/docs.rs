//! The documentation stays honest wherever it lives: every relative link in the README and
//! the guides under `docs/` reaches a file (and a heading, when it names one), and every
//! `pvrdma-doctor …` command line they show is one the command line accepts.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The Markdown pages a user reads: the README, the guides, and the other READMEs.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for extra in ["CONTRIBUTING.md", "samples/README.md", "fuzz/README.md"] {
        if root.join(extra).exists() {
            pages.push(root.join(extra));
        }
    }
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces
/// turned into dashes.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of `text` outside fenced code blocks, and those inside them, apart.
fn prose_and_code(text: &str) -> (Vec<&str>, Vec<&str>) {
    let (mut prose, mut code) = (Vec::new(), Vec::new());
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if fenced {
            code.push(line);
        } else {
            prose.push(line);
        }
    }
    (prose, code)
}

fn anchors(text: &str) -> BTreeSet<String> {
    let (prose, _) = prose_and_code(text);
    prose
        .iter()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

/// The targets of the Markdown links `[text](target)` in `line`.
fn link_targets(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        out.push(after[..end].trim());
        rest = &after[end..];
    }
    out
}

#[test]
fn the_slug_is_githubs() {
    assert_eq!(
        slug(" ssh_config, read as OpenSSH reads it"),
        "ssh_config-read-as-openssh-reads-it"
    );
    assert_eq!(slug("Path probe (`--probe`)"), "path-probe---probe");
}

#[test]
fn every_relative_link_reaches_its_file_and_heading() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let (prose, _) = prose_and_code(&text);
        for line in prose {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
                    continue;
                }
                checked += 1;
                let (file, anchor) = match target.split_once('#') {
                    Some((f, a)) => (f, Some(a)),
                    None => (target, None),
                };
                let dest = if file.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(file)
                };
                if !dest.exists() {
                    broken.push(format!("{}: {target}: no such file", page.display()));
                    continue;
                }
                if let Some(anchor) = anchor {
                    let is_md = dest.extension().is_some_and(|e| e == "md");
                    if is_md && !anchors(&std::fs::read_to_string(&dest).unwrap()).contains(anchor) {
                        broken.push(format!("{}: {target}: no such heading", page.display()));
                    }
                }
            }
        }
    }
    assert!(checked > 3, "only {checked} links found: the scanner is broken");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Splits a shell command line into words: single and double quotes, backslash escapes,
/// and the end at a comment or at the first operator that ends the command.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            '#' if !in_word => break,
            '|' | '>' | '<' | ';' | '&' => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[test]
fn shell_words_reads_quotes_and_stops_at_operators() {
    assert_eq!(
        shell_words(r#"pvrdma-doctor 'esx[01-16/2],db01' -o "A=b c" x\ y > out.json # comment"#),
        ["pvrdma-doctor", "esx[01-16/2],db01", "-o", "A=b c", "x y"]
    );
    assert_eq!(shell_words("pvrdma-doctor esx01 | jq ."), ["pvrdma-doctor", "esx01"]);
}

/// Every `pvrdma-doctor …` command in a code block of the documentation, with the page it
/// is on. A line may start with a prompt (`$ `), follow a pipe, or set variables first.
fn examples() -> Vec<(PathBuf, String, Vec<String>)> {
    let mut out = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let (_, code) = prose_and_code(&text);
        for line in code {
            // Where pvrdma-doctor itself is the command: at the start, after a prompt, a
            // pipe or `sudo`/`exec`, never as a word of another command's arguments.
            let Some(at) = line.match_indices("pvrdma-doctor ").map(|(i, _)| i).find(|&i| {
                // A word of its own, not the end of a path (`/path/to/pvrdma-doctor`).
                if line[..i].chars().next_back().is_some_and(|c| !c.is_whitespace()) {
                    return false;
                }
                let before = line[..i].trim_end();
                before.is_empty()
                    || before.ends_with('|')
                    || before.ends_with('$')
                    || before.ends_with("&&")
                    || before.ends_with("sudo")
                    || before.ends_with("exec")
                    || before
                        .split_whitespace()
                        .all(|w| w.contains('=') && !w.starts_with('-'))
            }) else {
                continue;
            };
            // Placeholders (`<host>`, `$HOSTS`, `…`) stay: they must parse as the words
            // they stand in for would.
            let words = shell_words(&line[at..]);
            out.push((page.clone(), line.to_string(), words));
        }
    }
    out
}

#[test]
fn every_command_line_shown_is_accepted() {
    let examples = examples();
    assert!(
        examples.len() > 20,
        "only {} examples found: the scanner is broken",
        examples.len()
    );
    let mut refused = Vec::new();
    for (page, line, words) in &examples {
        if let Err(e) = parses(words) {
            refused.push(format!(
                "{}: `{}`\n    {}",
                page.file_name().unwrap().to_string_lossy(),
                line.trim(),
                e.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
            ));
        }
    }
    assert!(
        refused.is_empty(),
        "command lines the documentation shows but pvrdma-doctor refuses:\n{}",
        refused.join("\n")
    );
}

/// `words` as the command line reads them: clap's matching on the real command tree, then
/// the checks the command line adds (options idle without `--format nagios`, …). Only a
/// refusal is an error: help and version are what was asked for. Nothing is run.
fn parses(words: &[String]) -> Result<(), String> {
    use clap::error::ErrorKind;
    match pvrdma_doctor::cli::try_parse_from(words) {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => Ok(()),
        Err(e) => Err(e.render().to_string()),
    }
}

#[test]
fn a_refused_command_line_is_noticed() {
    // The check above can fail: an unknown option, and what `--help` used to hide (clap
    // answers help before it checks requirements and conflicts).
    let words = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<String>>();
    for args in [
        &["pvrdma-doctor", "esx01", "--no-such-option"][..],
        &["pvrdma-doctor", "--format", "nagios", "demo", "--no-such-option"],
    ] {
        assert!(parses(&words(args)).is_err(), "{args:?} parses");
    }
    for args in [
        &["pvrdma-doctor", "esx01", "--probe-sample", "4"][..],
        &["pvrdma-doctor", "esx01", "-w", "1"],
    ] {
        assert!(parses(&words(args)).is_err(), "{args:?} parses");
        let helped = [args, &["--help"]].concat();
        assert!(parses(&words(&helped)).is_ok(), "{helped:?} is refused");
    }
    assert!(parses(&["pvrdma-doctor".into(), "esx01".into()]).is_ok());
}

/// The files under `dirs` (recursively), as paths relative to `root` with `/` separators.
fn repo_files(root: &Path, dirs: &[&str]) -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            if path.is_dir() {
                out.push(format!("{rel}/"));
                walk(&path, root, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    for d in dirs {
        walk(&root.join(d), root, &mut out);
    }
    out
}

/// docs/architecture.md tells where things live: every path it shows in backticks exists.
/// A path from the top of the repository must be there (up to its first `<placeholder>`);
/// a shorter one (`checks/registry.rs`, `human/`) must be the end of a path in a crate.
#[test]
fn every_path_the_architecture_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let sources = repo_files(
        root,
        &["src", "engine", "parsers", "nodeset", "ssh-config", "fuzz", "tests"],
    );
    let mut missing = Vec::new();
    let mut checked = 0;
    for token in text.split('`').skip(1).step_by(2) {
        let looks_like_a_path = token.contains('/')
            && !token.contains(char::is_whitespace)
            && !token.starts_with(['<', '/', '.', '-'])
            && !token.contains("://")
            && token.chars().all(|c| c.is_alphanumeric() || "/_.-<>".contains(c));
        if !looks_like_a_path {
            continue;
        }
        checked += 1;
        // Up to the folder that holds the first placeholder.
        let known = match token.find('<') {
            Some(at) => &token[..token[..at].rfind('/').map_or(0, |i| i + 1)],
            None => token,
        };
        let top = known.split('/').next().unwrap();
        let exists = if !top.is_empty() && root.join(top).exists() {
            root.join(known).exists()
        } else {
            // A path inside something else (`<host>/<id>.txt` of a capture folder,
            // `commands/…` of a vm-support bundle) is not the repository's.
            known != token || sources.iter().any(|f| f.ends_with(&format!("/{known}")))
        };
        if !exists {
            missing.push(token.to_string());
        }
    }
    assert!(checked > 30, "only {checked} paths found: the scan is broken");
    assert!(
        missing.is_empty(),
        "docs/architecture.md names paths that do not exist: {missing:#?}"
    );
}

/// `scripts/changelog.py check` on `path`: (exit code, stderr).
fn changelog_check(path: &Path) -> (i32, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("python3")
        .arg(root.join("scripts/changelog.py"))
        .arg("check")
        .arg(path)
        .output()
        .expect("python3 runs scripts/changelog.py");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_changelog_keeps_the_layout_the_packages_are_written_from() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (code, stderr) = changelog_check(&root.join("CHANGELOG.md"));
    assert_eq!(code, 0, "CHANGELOG.md: {stderr}");
    // The check can fail: a group Keep a Changelog does not have, and a release without
    // its date, are refused with the line that holds them.
    let dir = tempfile::tempdir().expect("temp dir");
    for (text, line, said) in [
        ("## [Unreleased]\n\n### Improved\n- a thing\n", 3, "unknown group"),
        ("## [0.2.0]\n\n### Added\n- a thing\n", 1, "has no date"),
    ] {
        let bad = dir.path().join("CHANGELOG.md");
        std::fs::write(&bad, text).expect("write");
        let (code, stderr) = changelog_check(&bad);
        assert_eq!(code, 1, "{text}");
        assert!(
            stderr.contains(said) && stderr.contains(&format!("CHANGELOG.md:{line}:")),
            "{stderr}"
        );
    }
}

//! What `groups.conf` needs of Python: `ConfigParser` (sections, `key: value` or
//! `key = value`, indented continuation lines, `#`/`;` comments, `[DEFAULT]`, `%%`
//! interpolation, later files overriding earlier ones), `shlex.split` and
//! `os.path.normpath`.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Sections in file order; keys lower-cased; values joined with newlines.
#[derive(Debug, Default)]
pub(super) struct Ini {
    pub(super) sections: Vec<(String, Vec<(String, String)>)>,
    defaults: Vec<(String, String)>,
}

impl Ini {
    fn section(&self, name: &str) -> Option<&Vec<(String, String)>> {
        self.sections.iter().find(|(n, _)| n == name).map(|(_, o)| o)
    }

    pub(super) fn get_raw(&self, section: &str, key: &str) -> Option<String> {
        let s = self.section(section)?;
        s.iter()
            .chain(&self.defaults)
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    /// `get` with BasicInterpolation (`%%`, `%(name)s`).
    pub(super) fn get(&self, section: &str, key: &str) -> std::result::Result<Option<String>, String> {
        let Some(raw) = self.get_raw(section, key) else {
            return Ok(None);
        };
        let mut out = String::new();
        let mut rest = raw.as_str();
        while let Some(i) = rest.find('%') {
            out.push_str(rest.get(..i).unwrap_or(""));
            let after = rest.get(i + 1..).unwrap_or("");
            if let Some(r) = after.strip_prefix('%') {
                out.push('%');
                rest = r;
            } else if let Some(r) = after.strip_prefix('(') {
                let Some((name, r2)) = r.split_once(")s") else {
                    return Err(format!("[{section}] {key}: bad interpolation in {raw:?}"));
                };
                out.push_str(&self.get_raw(section, &name.to_lowercase()).unwrap_or_default());
                rest = r2;
            } else {
                return Err(format!("[{section}] {key}: '%' must be written '%%' in {raw:?}"));
            }
        }
        out.push_str(rest);
        Ok(Some(out))
    }

    /// Reads one file into this configuration (`ConfigParser.read`): `Ok(false)` when it
    /// cannot be opened (skipped, as Python does).
    pub(super) fn read(&mut self, path: &Path) -> std::result::Result<bool, String> {
        let Ok(bytes) = std::fs::read(path) else {
            return Ok(false);
        };
        let text = String::from_utf8_lossy(&bytes);
        let shown = path.display();
        let mut added: Vec<(String, Option<String>)> = Vec::new();
        // (section index or None for DEFAULT) and current option.
        let mut cur: Option<Option<usize>> = None;
        let mut opt: Option<String> = None;
        let mut indent_level = 0usize;
        let mut values: HashMap<(Option<usize>, String), Vec<String>> = HashMap::new();
        let mut order: Vec<(Option<usize>, String)> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let lineno = n + 1;
            let stripped = line.trim();
            let is_comment = stripped.starts_with('#') || stripped.starts_with(';');
            let value = if is_comment { "" } else { stripped };
            if value.is_empty() {
                if !is_comment {
                    if let (Some(c), Some(o)) = (cur, &opt) {
                        if let Some(v) = values.get_mut(&(c, o.clone())) {
                            v.push(String::new());
                        }
                    }
                }
                continue;
            }
            let cur_indent = line.len() - line.trim_start().len();
            if let (Some(c), Some(o)) = (cur, &opt) {
                if cur_indent > indent_level {
                    if let Some(v) = values.get_mut(&(c, o.clone())) {
                        v.push(value.to_string());
                    }
                    continue;
                }
            }
            indent_level = cur_indent;
            if let Some(inner) = value
                .strip_prefix('[')
                .and_then(|v| v.rfind(']').map(|i| v.get(..i).unwrap_or("")))
            {
                if !inner.is_empty() {
                    let name = inner.to_string();
                    if name == "DEFAULT" {
                        cur = Some(None);
                    } else {
                        if added.iter().any(|(s, o)| *s == name && o.is_none()) {
                            return Err(format!("{shown}, line {lineno}: section [{name}] appears twice"));
                        }
                        added.push((name.clone(), None));
                        let idx = match self.sections.iter().position(|(s, _)| *s == name) {
                            Some(i) => i,
                            None => {
                                self.sections.push((name, Vec::new()));
                                self.sections.len() - 1
                            }
                        };
                        cur = Some(Some(idx));
                    }
                    opt = None;
                    continue;
                }
            }
            let Some(c) = cur else {
                return Err(format!("{shown}, line {lineno}: no [section] header before {line:?}"));
            };
            let Some(d) = value.find(['=', ':']) else {
                return Err(format!("{shown}, line {lineno}: not 'key: value': {line:?}"));
            };
            let key = value.get(..d).unwrap_or("").trim_end().to_lowercase();
            if key.is_empty() {
                return Err(format!("{shown}, line {lineno}: no key before '=' or ':': {line:?}"));
            }
            let section_name = c.and_then(|i| self.sections.get(i).map(|(s, _)| s.clone()));
            let marker = (
                section_name.clone().unwrap_or_else(|| "DEFAULT".into()),
                Some(key.clone()),
            );
            if added.contains(&marker) {
                return Err(format!(
                    "{shown}, line {lineno}: option {key:?} appears twice in its section"
                ));
            }
            added.push(marker);
            let v = value.get(d + 1..).unwrap_or("").trim().to_string();
            if !order.contains(&(c, key.clone())) {
                order.push((c, key.clone()));
            }
            values.insert((c, key.clone()), vec![v]);
            opt = Some(key);
        }
        for (c, key) in order {
            let joined = values.remove(&(c, key.clone())).unwrap_or_default().join("\n");
            let joined = joined.trim_end().to_string();
            let target = match c {
                None => &mut self.defaults,
                Some(i) => match self.sections.get_mut(i) {
                    Some((_, opts)) => opts,
                    None => continue,
                },
            };
            match target.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = joined,
                None => target.push((key, joined)),
            }
        }
        Ok(true)
    }

    pub(super) fn has(&self, section: &str, key: &str) -> bool {
        self.get_raw(section, key).is_some()
    }
}

/// `shlex.split` for directory lists: blanks separate, quotes and backslashes escape.
pub(super) fn shell_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
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
                        '\\' => {
                            if let Some(e) = chars.next() {
                                if !matches!(e, '"' | '\\' | '$' | '`') {
                                    word.push('\\');
                                }
                                word.push(e);
                            }
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(e) = chars.next() {
                    word.push(e);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
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
        out.push(word);
    }
    out
}

/// `os.path.normpath`, lexically.
pub(super) fn normpath(p: &str) -> PathBuf {
    let absolute = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    PathBuf::from(match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    })
}

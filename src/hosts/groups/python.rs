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
        let mut file = FileRead {
            shown: path.display().to_string(),
            ..FileRead::default()
        };
        for (n, line) in text.lines().enumerate() {
            file.line(self, n + 1, line)?;
        }
        file.merge_into(self);
        Ok(true)
    }

    pub(super) fn has(&self, section: &str, key: &str) -> bool {
        self.get_raw(section, key).is_some()
    }
}

/// A section: its index in [`Ini::sections`], or `None` for `[DEFAULT]`.
type SectionRef = Option<usize>;

/// One file being read (`ConfigParser._read`): its values are merged into the
/// configuration once the whole file is read.
#[derive(Default)]
struct FileRead {
    shown: String,
    /// The sections and options this file gave, for its duplicates: (section, None) for a
    /// header, (section, Some(key)) for an option.
    added: Vec<(String, Option<String>)>,
    /// The current section, once a header was read, and its current option.
    cur: Option<SectionRef>,
    opt: Option<String>,
    indent_level: usize,
    values: HashMap<(SectionRef, String), Vec<String>>,
    order: Vec<(SectionRef, String)>,
}

impl FileRead {
    /// One line: blank or a comment, a continuation of the current option, a section
    /// header or a `key: value` option.
    fn line(&mut self, ini: &mut Ini, lineno: usize, line: &str) -> std::result::Result<(), String> {
        let stripped = line.trim();
        let is_comment = stripped.starts_with('#') || stripped.starts_with(';');
        let value = if is_comment { "" } else { stripped };
        if value.is_empty() {
            if !is_comment {
                self.continue_option(String::new());
            }
            return Ok(());
        }
        let cur_indent = line.len() - line.trim_start().len();
        if self.cur.is_some() && self.opt.is_some() && cur_indent > self.indent_level {
            self.continue_option(value.to_string());
            return Ok(());
        }
        self.indent_level = cur_indent;
        if let Some(inner) = value
            .strip_prefix('[')
            .and_then(|v| v.rfind(']').map(|i| v.get(..i).unwrap_or("")))
        {
            if !inner.is_empty() {
                return self.header(ini, lineno, inner);
            }
        }
        self.option(ini, lineno, line, value)
    }

    /// A line more of the current option's value, if there is one.
    fn continue_option(&mut self, text: String) {
        if let (Some(c), Some(o)) = (self.cur, &self.opt) {
            if let Some(v) = self.values.get_mut(&(c, o.clone())) {
                v.push(text);
            }
        }
    }

    /// `[name]`: the section options go to from here on (made when new).
    fn header(&mut self, ini: &mut Ini, lineno: usize, name: &str) -> std::result::Result<(), String> {
        let shown = &self.shown;
        let name = name.to_string();
        if name == "DEFAULT" {
            self.cur = Some(None);
        } else {
            if self.added.iter().any(|(s, o)| *s == name && o.is_none()) {
                return Err(format!("{shown}, line {lineno}: section [{name}] appears twice"));
            }
            self.added.push((name.clone(), None));
            let idx = match ini.sections.iter().position(|(s, _)| *s == name) {
                Some(i) => i,
                None => {
                    ini.sections.push((name, Vec::new()));
                    ini.sections.len() - 1
                }
            };
            self.cur = Some(Some(idx));
        }
        self.opt = None;
        Ok(())
    }

    /// `key: value` or `key = value` in the current section.
    fn option(&mut self, ini: &Ini, lineno: usize, line: &str, value: &str) -> std::result::Result<(), String> {
        let shown = &self.shown;
        let Some(c) = self.cur else {
            return Err(format!("{shown}, line {lineno}: no [section] header before {line:?}"));
        };
        let Some(d) = value.find(['=', ':']) else {
            return Err(format!("{shown}, line {lineno}: not 'key: value': {line:?}"));
        };
        let key = value.get(..d).unwrap_or("").trim_end().to_lowercase();
        if key.is_empty() {
            return Err(format!("{shown}, line {lineno}: no key before '=' or ':': {line:?}"));
        }
        let section_name = c.and_then(|i| ini.sections.get(i).map(|(s, _)| s.clone()));
        let marker = (section_name.unwrap_or_else(|| "DEFAULT".into()), Some(key.clone()));
        if self.added.contains(&marker) {
            return Err(format!(
                "{shown}, line {lineno}: option {key:?} appears twice in its section"
            ));
        }
        self.added.push(marker);
        let v = value.get(d + 1..).unwrap_or("").trim().to_string();
        if !self.order.contains(&(c, key.clone())) {
            self.order.push((c, key.clone()));
        }
        self.values.insert((c, key.clone()), vec![v]);
        self.opt = Some(key);
        Ok(())
    }

    /// The file's options into the configuration, each value's lines joined, over what
    /// earlier files set.
    fn merge_into(mut self, ini: &mut Ini) {
        for (c, key) in self.order {
            let joined = self.values.remove(&(c, key.clone())).unwrap_or_default().join("\n");
            let joined = joined.trim_end().to_string();
            let target = match c {
                None => &mut ini.defaults,
                Some(i) => match ini.sections.get_mut(i) {
                    Some((_, opts)) => opts,
                    None => continue,
                },
            };
            match target.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = joined,
                None => target.push((key, joined)),
            }
        }
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

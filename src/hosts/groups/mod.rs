//! ClusterShell node groups (`@esxi`, `@source:group`, `@*`, `@@source`), read from
//! ClusterShell's own configuration exactly where `nodeset` and `clush` read it:
//! `groups.conf` in `/etc/clustershell`, `~/.local/etc/clustershell`,
//! `$XDG_CONFIG_HOME/clustershell` (default `~/.config/clustershell`) and
//! `$CLUSTERSHELL_CFGDIR`, merged in that order (later files override keys); its
//! `confdir` holds more `*.conf` sources, its `autodir` holds `*.yaml` group files. A
//! `.conf` source runs its `map`, `mapall`, `all` and `list` shell commands (`$GROUP`,
//! `$SOURCE` and `$CFGDIR` substituted, run with `sh -c` in the configuration directory,
//! as ClusterShell's upcalls); a YAML file maps source names to groups to node sets.
//!
//! Configuration is read on first use, so a run that names no group never reads it.
mod python;

use pvrdma_nodeset::{is_py_space, GroupError, Resolver};
use python::{normpath, shell_words, Ini};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

type Result<T> = std::result::Result<T, GroupError>;

/// A group value in a YAML file: a node set text, or something ClusterShell cannot use.
#[derive(Debug, Clone)]
enum Value {
    Text(String),
    Invalid(String),
}

/// A `.conf` source: its commands and what they answered this run.
#[derive(Debug)]
struct Upcalls {
    name: String,
    upcalls: HashMap<&'static str, String>,
    cfgdir: PathBuf,
    map_cache: HashMap<String, String>,
    cache: HashMap<&'static str, String>,
    mapall: Option<(BTreeMap<String, String>, Vec<String>)>,
}

#[derive(Debug)]
enum Source {
    Upcall(Box<Upcalls>),
    File { groups: Vec<(String, Value)> },
}

/// Splits a command's output (or a YAML value) into node set texts, as ClusterShell's
/// `_list_nodes` does: on any white space.
fn words(raw: &str) -> Vec<String> {
    raw.split(is_py_space)
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// `string.Template.safe_substitute`: `$NAME` and `${NAME}` from `vars`, `$$` is `$`,
/// anything else stays as written.
pub(crate) fn substitute(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(i) = rest.find('$') {
        out.push_str(rest.get(..i).unwrap_or(""));
        let after = rest.get(i + 1..).unwrap_or("");
        if let Some(r) = after.strip_prefix('$') {
            out.push('$');
            rest = r;
            continue;
        }
        let ident_len = |s: &str| {
            let mut n = 0;
            for (k, c) in s.char_indices() {
                let ok = c == '_' || c.is_ascii_alphabetic() || (k > 0 && c.is_ascii_digit());
                if !ok {
                    break;
                }
                n = k + c.len_utf8();
            }
            n
        };
        let (name, consumed) = if let Some(b) = after.strip_prefix('{') {
            let n = ident_len(b);
            if n > 0 && b.get(n..).is_some_and(|r| r.starts_with('}')) {
                (b.get(..n), n + 2)
            } else {
                (None, 0)
            }
        } else {
            let n = ident_len(after);
            (after.get(..n).filter(|s| !s.is_empty()), n)
        };
        match name.and_then(|n| vars.iter().find(|(k, _)| *k == n)) {
            Some((_, v)) => {
                out.push_str(v);
                rest = after.get(consumed..).unwrap_or("");
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

impl Source {
    fn upcall(&mut self, which: &'static str, key_group: Option<&str>) -> Result<String> {
        let Source::Upcall(u) = self else {
            return Err(GroupError::NoUpcall(which.into()));
        };
        let Upcalls {
            name,
            upcalls,
            cfgdir,
            map_cache,
            cache,
            ..
        } = &mut **u;
        if let Some(g) = key_group {
            if let Some(v) = map_cache.get(g) {
                return Ok(v.clone());
            }
        } else if let Some(v) = cache.get(which) {
            return Ok(v.clone());
        }
        let Some(template) = upcalls.get(which) else {
            return Err(GroupError::NoUpcall(format!(
                "group source {name} has no '{which}' command in its configuration"
            )));
        };
        let dir = cfgdir.display().to_string();
        let mut vars = vec![("CFGDIR", dir.as_str()), ("SOURCE", name.as_str())];
        if let Some(g) = key_group {
            vars.push(("GROUP", g));
        }
        let cmdline = substitute(template, &vars);
        let output = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(&cmdline)
            .current_dir(&*cfgdir)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::inherit())
            .output()
            .map_err(|e| GroupError::Failed(format!("group source {name}: cannot run {cmdline:?}: {e}")))?;
        if !output.status.success() {
            return Err(GroupError::Failed(format!(
                "group source {name}: {cmdline:?} failed ({})",
                output.status
            )));
        }
        let text = String::from_utf8_lossy(&output.stdout)
            .trim_matches(is_py_space)
            .to_string();
        match key_group {
            Some(g) => map_cache.insert(g.to_string(), text.clone()),
            None => cache.insert(which, text.clone()),
        };
        Ok(text)
    }

    /// Runs `mapall` once and serves `map` and `list` from it when those are absent.
    fn populate_mapall(&mut self) -> Result<()> {
        let needs = matches!(self, Source::Upcall(u) if u.mapall.is_none() && u.upcalls.contains_key("mapall"));
        if !needs {
            return Ok(());
        }
        let content = self.upcall("mapall", None)?;
        let mut map: BTreeMap<String, String> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for line in content.lines() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (group, nodes) = line.split_once(':').unwrap_or((line, ""));
            let group = group.trim();
            if !line.contains(':') || group.is_empty() || group.split_whitespace().count() > 1 {
                return Err(GroupError::Failed(format!(
                    "mapall: invalid line {line:?} (expected 'group: nodes')"
                )));
            }
            let nodes = nodes.trim();
            match map.get_mut(group) {
                Some(existing) => {
                    if !nodes.is_empty() {
                        if !existing.is_empty() {
                            existing.push(',');
                        }
                        existing.push_str(nodes);
                    }
                }
                None => {
                    order.push(group.to_string());
                    map.insert(group.to_string(), nodes.to_string());
                }
            }
        }
        if let Source::Upcall(u) = self {
            u.mapall = Some((map, order));
        }
        Ok(())
    }

    fn resolv_map(&mut self, group: &str) -> Result<String> {
        self.populate_mapall()?;
        match self {
            Source::File { groups } => match groups.iter().find(|(g, _)| g == group) {
                Some((_, Value::Text(t))) => Ok(t.clone()),
                Some((_, Value::Invalid(why))) => Err(GroupError::Failed(why.clone())),
                None => Ok(String::new()),
            },
            Source::Upcall(u) => {
                if !u.upcalls.contains_key("map") {
                    if let Some((map, _)) = &u.mapall {
                        return Ok(map.get(group).cloned().unwrap_or_default());
                    }
                }
                self.upcall("map", Some(group))
            }
        }
    }

    fn resolv_list(&mut self) -> Result<Vec<String>> {
        self.populate_mapall()?;
        let raw = match self {
            Source::File { groups } => groups.iter().map(|(g, _)| g.clone()).collect::<Vec<_>>().join("\n"),
            Source::Upcall(u) => match &u.mapall {
                Some((_, order)) if !u.upcalls.contains_key("list") => order.join(" "),
                _ => self.upcall("list", None)?,
            },
        };
        let names = words(&raw);
        if let Some(bad) = names.iter().find(|n| n.contains(['@', ',', '!', '&', '^', '*'])) {
            return Err(GroupError::Failed(format!(
                "group name {bad:?} holds a character ClusterShell forbids in group names (@ , ! & ^ *)"
            )));
        }
        Ok(names)
    }

    fn resolv_all(&mut self) -> Result<String> {
        match self {
            Source::File { groups } => match groups.iter().find(|(g, _)| g == "all") {
                Some((_, Value::Text(t))) => Ok(t.clone()),
                Some((_, Value::Invalid(why))) => Err(GroupError::Failed(why.clone())),
                None => Err(GroupError::NoUpcall("no 'all' group".into())),
            },
            Source::Upcall(_) => self.upcall("all", None),
        }
    }
}

/// ClusterShell's group configuration, read on first use.
#[derive(Debug)]
pub struct GroupConfig {
    files: Vec<PathBuf>,
    loaded: Option<std::result::Result<Loaded, String>>,
}

#[derive(Debug, Default)]
struct Loaded {
    /// In the order ClusterShell adds them.
    sources: Vec<(String, Source)>,
    default: Option<String>,
    /// The files read, for messages.
    read: Vec<PathBuf>,
}

impl GroupConfig {
    /// The `groups.conf` files ClusterShell would read for this environment (its
    /// `config_paths`, without the Python installation prefix).
    pub fn default_files(home: Option<&Path>, xdg_config_home: Option<&Path>, cfgdir: Option<&Path>) -> Vec<PathBuf> {
        let mut files = vec![PathBuf::from("/etc/clustershell/groups.conf")];
        if let Some(h) = home {
            files.push(h.join(".local/etc/clustershell/groups.conf"));
        }
        match (xdg_config_home, home) {
            (Some(x), _) => files.push(x.join("clustershell/groups.conf")),
            (None, Some(h)) => files.push(h.join(".config/clustershell/groups.conf")),
            (None, None) => {}
        }
        if let Some(c) = cfgdir {
            files.push(c.join("groups.conf"));
        }
        files
    }

    /// From the process environment (`HOME`, `XDG_CONFIG_HOME`, `CLUSTERSHELL_CFGDIR`).
    pub fn from_env() -> Self {
        // As Python's os.environ.get: a variable set but empty is used as it is.
        let var = |k: &str| std::env::var_os(k).map(PathBuf::from);
        GroupConfig::from_files(Self::default_files(
            var("HOME").as_deref(),
            var("XDG_CONFIG_HOME").as_deref(),
            var("CLUSTERSHELL_CFGDIR").as_deref(),
        ))
    }

    pub fn from_files(files: Vec<PathBuf>) -> Self {
        GroupConfig { files, loaded: None }
    }

    fn loaded(&mut self) -> Result<&mut Loaded> {
        if self.loaded.is_none() {
            self.loaded = Some(load(&self.files));
        }
        match self.loaded.as_mut() {
            Some(Ok(l)) => Ok(l),
            Some(Err(e)) => Err(GroupError::Failed(e.clone())),
            None => Err(GroupError::Failed("group configuration not loaded".into())),
        }
    }

    fn source(&mut self, name: Option<&str>) -> Result<&mut Source> {
        let searched = self
            .files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let l = self.loaded()?;
        let wanted = match name.filter(|n| !n.is_empty()) {
            Some(n) => n.to_string(),
            None => match &l.default {
                Some(d) => d.clone(),
                None => {
                    let why = if l.read.is_empty() {
                        format!("no ClusterShell group configuration (groups.conf) in {searched}")
                    } else {
                        "the ClusterShell group configuration defines no group source".to_string()
                    };
                    return Err(GroupError::Failed(why));
                }
            },
        };
        let known: Vec<String> = l.sources.iter().map(|(n, _)| n.clone()).collect();
        match l.sources.iter_mut().find(|(n, _)| *n == wanted) {
            Some((_, s)) => Ok(s),
            None => Err(GroupError::Failed(if known.is_empty() {
                format!("no group source {wanted:?}: no ClusterShell group configuration (groups.conf) in {searched}")
            } else {
                format!("no group source {wanted:?} (known: {})", known.join(", "))
            })),
        }
    }
}

impl Resolver for GroupConfig {
    fn group_nodes(&mut self, group: &str, source: Option<&str>) -> Result<Vec<String>> {
        let raw = self.source(source)?.resolv_map(group)?;
        Ok(words(&raw))
    }

    fn all_nodes(&mut self, source: Option<&str>) -> Result<Vec<String>> {
        let raw = self.source(source)?.resolv_all()?;
        Ok(words(&raw))
    }

    fn grouplist(&mut self, source: Option<&str>) -> Result<Vec<String>> {
        self.source(source)?.resolv_list()
    }
}

/// `glob('DIR/*.EXT')`, sorted, without dot files.
fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| !n.starts_with('.') && n.ends_with(ext))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn add_source(l: &mut Loaded, name: String, source: Source) -> std::result::Result<(), String> {
    if l.sources.iter().any(|(n, _)| *n == name) {
        return Err(format!("group source {name:?} is defined twice"));
    }
    l.sources.push((name, source));
    Ok(())
}

fn sources_from_ini(l: &mut Loaded, ini: &Ini, cfgdir: &Path, file: &Path) -> std::result::Result<(), String> {
    for (section, _) in &ini.sections {
        for name in section.split(',') {
            if name == "Main" {
                continue;
            }
            if !ini.has(section, "map") && !ini.has(section, "mapall") {
                return Err(format!(
                    "{}: section [{section}] has neither 'map' nor 'mapall'",
                    file.display()
                ));
            }
            let mut upcalls = HashMap::new();
            for key in ["map", "mapall", "all", "list", "reverse"] {
                if let Some(v) = ini.get_raw(section, key) {
                    upcalls.insert(key, v);
                }
            }
            if let Some(t) = ini.get_raw(section, "cache_time") {
                if t.trim().parse::<f64>().is_err() {
                    return Err(format!(
                        "{}: [{section}] cache_time {t:?} is not a number",
                        file.display()
                    ));
                }
            }
            add_source(
                l,
                name.to_string(),
                Source::Upcall(Box::new(Upcalls {
                    name: name.to_string(),
                    upcalls,
                    cfgdir: cfgdir.to_path_buf(),
                    map_cache: HashMap::new(),
                    cache: HashMap::new(),
                    mapall: None,
                })),
            )?;
        }
    }
    Ok(())
}

fn sources_from_yaml(l: &mut Loaded, path: &Path) -> std::result::Result<(), String> {
    use yaml_rust2::{Yaml, YamlLoader};
    let shown = path.display();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return Ok(()),
        Err(e) => return Err(format!("{shown}: {e}")),
    };
    let docs = YamlLoader::load_from_str(&text).map_err(|e| format!("{shown}: {e}"))?;
    let Some(Yaml::Hash(root)) = docs.first() else {
        return Err(format!("{shown}: invalid content (base is not a dict)"));
    };
    for (source, groups) in root {
        let Yaml::String(source) = source else {
            return Err(format!(
                "{shown}: group source {source:?} is not a string (add quotes?)"
            ));
        };
        let Yaml::Hash(groups) = groups else {
            return Err(format!(
                "{shown}: invalid content (group source '{source}' is not a dict)"
            ));
        };
        let mut list = Vec::new();
        for (group, nodes) in groups {
            let Yaml::String(group) = group else {
                return Err(format!(
                    "{shown}: {source}: group name {group:?} is not a string (add quotes?)"
                ));
            };
            let bad = || {
                Value::Invalid(format!(
                    "{shown}: {source}: group {group} is not a node set string or a list of them"
                ))
            };
            let value = match nodes {
                Yaml::Null => Value::Text(String::new()),
                Yaml::String(s) => Value::Text(s.clone()),
                Yaml::Array(items) => {
                    let texts: Option<Vec<String>> = items
                        .iter()
                        .map(|i| match i {
                            Yaml::String(s) => Some(s.clone()),
                            _ => None,
                        })
                        .collect();
                    texts.map_or_else(bad, |t| Value::Text(t.join(",")))
                }
                _ => bad(),
            };
            list.push((group.clone(), value));
        }
        add_source(l, source.clone(), Source::File { groups: list })?;
    }
    Ok(())
}

/// `GroupResolverConfig._late_init` and `_parse_config`.
fn load(files: &[PathBuf]) -> std::result::Result<Loaded, String> {
    let mut ini = Ini::default();
    let mut l = Loaded::default();
    for f in files {
        if ini.read(f)? {
            l.read.push(f.clone());
        }
    }
    let Some(last) = l.read.last().cloned() else {
        return Ok(l);
    };
    let cfg_dirname = last.parent().map(Path::to_path_buf).unwrap_or_default();
    let cfg_str = cfg_dirname.display().to_string();
    let dirs = |key: &str| -> std::result::Result<Vec<PathBuf>, String> {
        let Some(list) = ini.get("Main", key)? else {
            return Ok(Vec::new());
        };
        let mut seen: Vec<PathBuf> = Vec::new();
        for d in shell_words(&list) {
            let p = normpath(&substitute(&d, &[("CFGDIR", &cfg_str)]));
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
        Ok(seen)
    };
    let confdir_key = if ini.has("Main", "groupsdir") {
        "groupsdir"
    } else {
        "confdir"
    };
    for dir in dirs(confdir_key)? {
        if !dir.is_dir() {
            if dir.exists() {
                return Err(format!("confdir {} is not a directory", dir.display()));
            }
            continue;
        }
        for f in files_with_extension(&dir, ".conf") {
            let mut part = Ini::default();
            part.read(&f)?;
            sources_from_ini(&mut l, &part, &dir, &f)?;
        }
    }
    for dir in dirs("autodir")? {
        if !dir.is_dir() {
            if dir.exists() {
                return Err(format!("autodir {} is not a directory", dir.display()));
            }
            continue;
        }
        for f in files_with_extension(&dir, ".yaml") {
            sources_from_yaml(&mut l, &f)?;
        }
    }
    sources_from_ini(&mut l, &ini, &cfg_dirname, &last)?;
    if let Some(d) = ini.get("Main", "default")? {
        if l.sources.iter().any(|(n, _)| *n == d) {
            l.default = Some(d);
        } else if !d.is_empty() {
            return Err(format!("default group source not found: {d:?}"));
        }
    }
    if l.default.is_none() {
        l.default = l.sources.first().map(|(n, _)| n.clone());
    }
    Ok(l)
}

#[cfg(test)]
mod tests;

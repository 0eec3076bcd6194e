//! Which hosts to visit: turns what the admin typed (arguments, a hosts file, stdin) into
//! an ordered, de-duplicated list of [`HostSpec`]s before any connection is made.
//!
//! Each argument is a ClusterShell node set, read exactly as `nodeset` and `clush` read it
//! ([`crate::nodeset`]): ranges with their zero padding as written (`esx[01-16]` gives
//! `esx01`, never `esx1`, because the names must resolve), the operators `,` `!` `&` `^`,
//! and groups from ClusterShell's configuration. How a host's user and port go with it:
//!
//! - An argument that starts with `@` is a group expression (`@esxi`, `@esxi!esx03`,
//!   `@source:group`); `user@@esxi` logs in to the group's hosts as `user`.
//! - Otherwise every resulting name is `[user@]host[:port]`: `root@esx[01-04]:2222`.
//!   Only an `@` at the start of an item makes a group, as in ClusterShell.
//! - An argument with a bracketed IPv6 address (`[fe80::1]:22`) is one host, not a set.
//!
//! A name that cannot be a host (a `/`, a second `:` outside brackets) is refused before
//! any DNS lookup.
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::Read;
use std::path::Path;

/// More names than any fleet has; a typo like `esx[1-1000000]` becomes an error instead of
/// a million connection attempts.
pub(crate) const MAX_EXPANDED_HOSTS: usize = crate::nodeset::MAX_NAMES;

/// Names expanded in all, duplicates included: room for a fleet listed a few times over
/// (arguments plus a hosts file), but bounded.
const MAX_EXPANDED_NAMES: usize = 4 * MAX_EXPANDED_HOSTS;

/// One host to visit, as the user named it.
#[derive(Debug, Clone)]
pub struct HostSpec {
    /// Login user given as `user@host`; `None` = `-l`, then ssh_config `User`, then `root`.
    pub(crate) user: Option<String>,
    /// Host name, alias or address (IPv6 without brackets).
    pub(crate) host: String,
    /// Port given as `host:port`; `None` = ssh_config `Port`, then 22.
    pub(crate) port: Option<u16>,
    /// Which host argument it came from (`None`: the hosts file): where it stood among
    /// the options decides whether its `user@`/`:port` or an option's comes first, as
    /// in ssh. Not part of its identity.
    pub(crate) arg: Option<usize>,
}

impl PartialEq for HostSpec {
    fn eq(&self, other: &Self) -> bool {
        (&self.user, &self.host, self.port) == (&other.user, &other.host, other.port)
    }
}

impl Eq for HostSpec {}

impl std::hash::Hash for HostSpec {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (&self.user, &self.host, self.port).hash(state);
    }
}

impl HostSpec {
    /// The name reports use: the host, plus the port when one was given.
    pub(crate) fn label(&self) -> String {
        match (self.port, self.host.contains(':')) {
            (None, _) => self.host.clone(),
            (Some(p), true) => format!("[{}]:{p}", self.host),
            (Some(p), false) => format!("{}:{p}", self.host),
        }
    }
}

impl fmt::Display for HostSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(u) = &self.user {
            write!(f, "{u}@")?;
        }
        f.write_str(&self.label())
    }
}

/// A host argument or hosts-file line that cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("empty host name in {0:?}")]
    EmptyHost(String),
    #[error("bad port in {spec:?}: {port:?} is not a number from 1 to 65535")]
    BadPort { spec: String, port: String },
    #[error("unclosed '[' in {0:?}")]
    UnclosedBracket(String),
    /// Points at the character: a malformed node set or host name.
    #[error("{0}")]
    Syntax(crate::nodeset::SyntaxError),
    #[error("{first} and {second} are the same host for the report ({label}), which names hosts without the user; list each host once")]
    SameLabel {
        label: String,
        first: String,
        second: String,
    },
    #[error("{spec:?} expands to more than {MAX_EXPANDED_HOSTS} hosts")]
    TooMany { spec: String },
    #[error("cannot read hosts from {source_name}: {message}")]
    Read { source_name: String, message: String },
    #[error("no hosts given: name hosts as arguments, with --hosts-file FILE, or '-' to read them from stdin")]
    NoHosts,
    #[error(
        "{spec:?} names no host (ClusterShell evaluates it to an empty set; `nodeset -e {spec:?}` shows the same)"
    )]
    EmptySet { spec: String },
}

/// Parses one already-expanded spec: `host`, `user@host`, `host:port`, `[v6]:port`, `v6`,
/// or the URI form `ssh://[user@]host[:port]` that ssh and ProxyJump accept.
pub fn parse_host_spec(spec: &str) -> Result<HostSpec, TargetError> {
    let trimmed = spec.trim();
    let trimmed = match trimmed.strip_prefix("ssh://") {
        Some(rest) => rest.strip_suffix('/').unwrap_or(rest),
        None => trimmed,
    };
    let parts = split_label(trimmed);
    if parts.unclosed {
        return Err(TargetError::UnclosedBracket(spec.to_string()));
    }
    let port = match parts.port {
        Some(p) => Some(parse_port(spec, p)?),
        None if parts.trailing.is_empty() => None,
        None => {
            return Err(TargetError::BadPort {
                spec: spec.to_string(),
                port: parts.trailing.to_string(),
            })
        }
    };
    let (user, host) = (parts.user.map(str::to_string), parts.host.to_string());
    if host.is_empty() {
        return Err(TargetError::EmptyHost(spec.to_string()));
    }
    check_host_name(spec, &host)?;
    Ok(HostSpec {
        user,
        host,
        port,
        arg: None,
    })
}

/// The pieces of `[user@]host[:port]` or `[user@][v6addr][:port]` as written, unchecked:
/// the one place that knows how a host label is put together. [`parse_host_spec`] checks
/// them; redaction only needs the bare host of a label however odd its port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LabelParts<'a> {
    /// Before the last `@` (as in ssh: user names on some directories contain `@`);
    /// `None` when absent or empty.
    user: Option<&'a str>,
    /// Host name, alias or address, IPv6 without its brackets.
    pub(crate) host: &'a str,
    /// The text after the `:` that ends the host, if any.
    port: Option<&'a str>,
    /// Text after a `]` that is not `:port` (an error for a host argument).
    trailing: &'a str,
    /// A `[` without its `]`: `host` is everything after the `[`.
    unclosed: bool,
}

/// Splits a host label into its [`LabelParts`].
pub(crate) fn split_label(label: &str) -> LabelParts<'_> {
    let (user, rest) = match label.rfind('@') {
        Some(i) => {
            let (u, r) = label.split_at(i);
            (Some(u).filter(|u| !u.is_empty()), r.get(1..).unwrap_or(""))
        }
        None => (None, label),
    };
    let mut parts = LabelParts {
        user,
        host: rest,
        port: None,
        trailing: "",
        unclosed: false,
    };
    if let Some(inner) = rest.strip_prefix('[') {
        match inner.find(']') {
            Some(close) => {
                parts.host = inner.get(..close).unwrap_or("");
                let after = inner.get(close + 1..).unwrap_or("");
                match after.strip_prefix(':') {
                    Some(p) => parts.port = Some(p),
                    None => parts.trailing = after,
                }
            }
            None => {
                parts.host = inner;
                parts.unclosed = true;
            }
        }
    } else if rest.matches(':').count() == 1 {
        // Zero colons: a name. Two or more: a bare IPv6 address without a port.
        let (h, p) = rest.split_once(':').unwrap_or((rest, ""));
        parts.host = h;
        parts.port = Some(p);
    }
    parts
}

/// Refuses what no resolver should see: a path (`samples/esx01`), a second port
/// (`esx01:22:33`), spaces or control characters. The error points at the character.
fn check_host_name(spec: &str, host: &str) -> Result<(), TargetError> {
    let point = |needle: char, reason: &str| {
        let byte = spec.find(needle).unwrap_or(0);
        TargetError::Syntax(crate::nodeset::SyntaxError {
            input: spec.to_string(),
            at: spec.get(..byte).map_or(0, |p| p.chars().count()),
            reason: reason.to_string(),
        })
    };
    if let Some(c) = host.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(point(c, "spaces and control characters are not allowed in a host name"));
    }
    if host.contains('/') {
        return Err(point(
            '/',
            "'/' is not allowed in a host name (to read captured outputs use `pvrdma-doctor analyze PATH`)",
        ));
    }
    if host.contains(':') && host.parse::<std::net::Ipv6Addr>().is_err() {
        // Two colons or more without brackets is only valid as a bare IPv6 address.
        let first = spec.find(':').unwrap_or(0);
        let second = spec
            .get(first + 1..)
            .and_then(|r| r.find(':'))
            .map_or(first, |i| first + 1 + i);
        return Err(TargetError::Syntax(crate::nodeset::SyntaxError {
            input: spec.to_string(),
            at: spec.get(..second).map_or(0, |p| p.chars().count()),
            reason: "a second ':' after the port (write an IPv6 address as [addr]:port)".to_string(),
        }));
    }
    Ok(())
}

fn parse_port(spec: &str, p: &str) -> Result<u16, TargetError> {
    match p.parse::<u16>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(TargetError::BadPort {
            spec: spec.to_string(),
            port: p.to_string(),
        }),
    }
}

/// A user name in front of a group: `root@` in `root@@esxi`.
fn user_before_group(spec: &str) -> Option<(&str, &str)> {
    let (user, rest) = spec.split_once('@')?;
    let plain = !user.is_empty()
        && !user.contains(['[', ']', ',', '!', '&', '^', '*', '?'])
        && !user.contains(char::is_whitespace);
    (plain && rest.starts_with('@')).then_some((user, rest))
}

/// A bracket holding an IPv6 address (`[fe80::1]`, `[fe80::1%eth0]`): one host.
fn has_ipv6_brackets(spec: &str) -> bool {
    let mut rest = spec;
    while let Some(open) = rest.find('[') {
        let after = rest.get(open + 1..).unwrap_or("");
        match after.find(']') {
            Some(close)
                if after.get(..close).is_some_and(|b| {
                    let addr = b.split('%').next().unwrap_or(b);
                    addr.parse::<std::net::Ipv6Addr>().is_ok()
                }) =>
            {
                return true
            }
            Some(close) => rest = after.get(close + 1..).unwrap_or(""),
            None => return false,
        }
    }
    false
}

/// Expands one host argument as a ClusterShell node set (see [`crate::nodeset`]) into
/// `[user@]host[:port]` texts and the user given in front of a group, if any.
fn expand_ranges(
    spec: &str,
    groups: &mut crate::groups::GroupConfig,
) -> Result<(Vec<String>, Option<String>), TargetError> {
    if has_ipv6_brackets(spec) {
        return Ok((vec![spec.to_string()], None));
    }
    let (user, expr, shift) = match user_before_group(spec) {
        Some((u, rest)) => (Some(u.to_string()), rest, u.chars().count() + 1),
        None => (None, spec, 0),
    };
    let names = crate::nodeset::expand_with(expr, groups).map_err(|e| match e {
        crate::nodeset::NodeSetError::Syntax(mut e) => {
            e.input = spec.to_string();
            e.at += shift;
            TargetError::Syntax(e)
        }
        crate::nodeset::NodeSetError::TooMany(_) => TargetError::TooMany { spec: spec.to_string() },
    })?;
    if names.is_empty() {
        return Err(TargetError::EmptySet { spec: spec.to_string() });
    }
    Ok((names, user))
}

/// Reads host specs from text: one per line, `#` starts a comment, blank lines ignored.
/// Several specs on one line are separated by blanks, except blanks that ClusterShell
/// ignores: next to an operator (`esx01, esx02`) or inside brackets (`esx[ 7-18]`).
pub(crate) fn specs_from_text(text: &str) -> Vec<String> {
    let mut specs = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let mut current = String::new();
        let mut depth = 0usize;
        let mut pending_blank = false;
        for c in line.chars() {
            if c.is_whitespace() && depth == 0 {
                pending_blank = !current.is_empty();
                continue;
            }
            let joins = current.ends_with([',', '!', '&', '^']) || matches!(c, ',' | '!' | '&' | '^');
            if pending_blank {
                if joins {
                    current.push(' ');
                } else {
                    specs.push(std::mem::take(&mut current));
                }
            }
            pending_blank = false;
            match c {
                '[' => depth += 1,
                ']' => depth = depth.saturating_sub(1),
                _ => {}
            }
            current.push(c);
        }
        if !current.is_empty() {
            specs.push(current);
        }
    }
    specs
}

/// Builds the target list from positional arguments (`-` = read `stdin`) and an optional
/// hosts file, expanding ranges and dropping duplicates while keeping first-seen order.
pub(crate) fn collect_targets(
    args: &[String],
    hosts_file: Option<&Path>,
    stdin: &mut dyn Read,
) -> Result<Vec<HostSpec>, TargetError> {
    collect_targets_with(args, hosts_file, stdin, &mut crate::groups::GroupConfig::from_env())
}

/// [`collect_targets`] with the given ClusterShell group configuration.
pub(crate) fn collect_targets_with(
    args: &[String],
    hosts_file: Option<&Path>,
    stdin: &mut dyn Read,
    groups: &mut crate::groups::GroupConfig,
) -> Result<Vec<HostSpec>, TargetError> {
    let mut raw: Vec<String> = Vec::new();
    // Which argument each raw spec came from (`None`: the hosts file).
    let mut from_arg: Vec<Option<usize>> = Vec::new();
    // `-` among the hosts and `--hosts-file -` both mean stdin, read once.
    let mut stdin_used = false;
    let mut read_stdin = |raw: &mut Vec<String>| -> Result<(), TargetError> {
        if std::mem::replace(&mut stdin_used, true) {
            return Ok(());
        }
        let mut text = String::new();
        stdin.read_to_string(&mut text).map_err(|e| TargetError::Read {
            source_name: "stdin".into(),
            message: e.to_string(),
        })?;
        raw.extend(specs_from_text(&text));
        Ok(())
    };
    for (i, a) in args.iter().enumerate() {
        if a == "-" {
            read_stdin(&mut raw)?;
        } else {
            raw.push(a.clone());
        }
        from_arg.resize(raw.len(), Some(i));
    }
    if let Some(path) = hosts_file {
        if path == Path::new("-") {
            read_stdin(&mut raw)?;
        } else {
            let text = std::fs::read_to_string(path).map_err(|e| TargetError::Read {
                source_name: path.display().to_string(),
                message: e.to_string(),
            })?;
            raw.extend(specs_from_text(&text));
        }
    }
    let mut out: Vec<HostSpec> = Vec::new();
    let mut seen: HashSet<HostSpec> = HashSet::new();
    // Names expanded so far, duplicates included: repeating a large range many times must
    // stop early rather than expand every copy.
    let mut expanded_total: usize = 0;
    for (spec, arg) in raw.into_iter().zip(from_arg.into_iter().chain(std::iter::repeat(None))) {
        let (names, group_user) = expand_ranges(&spec, groups)?;
        expanded_total = expanded_total.saturating_add(names.len());
        if expanded_total > MAX_EXPANDED_NAMES {
            return Err(TargetError::TooMany { spec });
        }
        for expanded in names {
            let mut h = HostSpec {
                arg,
                ..parse_host_spec(&expanded)?
            };
            if h.user.is_none() {
                h.user.clone_from(&group_user);
            }
            if seen.insert(h.clone()) {
                out.push(h);
            }
            if out.len() > MAX_EXPANDED_HOSTS {
                return Err(TargetError::TooMany { spec });
            }
        }
    }
    if out.is_empty() {
        return Err(TargetError::NoHosts);
    }
    // Reports and support bundles are keyed by label: two specs differing only in the
    // user would collide there (a bundle refuses a host that appears twice).
    let mut labels: HashMap<String, &HostSpec> = HashMap::new();
    for h in &out {
        if let Some(first) = labels.insert(h.label(), h) {
            return Err(TargetError::SameLabel {
                label: h.label(),
                first: first.to_string(),
                second: h.to_string(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn no_groups() -> crate::groups::GroupConfig {
        crate::groups::GroupConfig::from_files(Vec::new())
    }

    fn exp(spec: &str) -> Result<Vec<String>, TargetError> {
        expand_ranges(spec, &mut no_groups()).map(|(n, _)| n)
    }

    fn names(spec: &str) -> Vec<String> {
        exp(spec).unwrap()
    }

    /// A ClusterShell configuration with a `local` source whose `map` reads a file.
    fn groups_in(dir: &Path) -> crate::groups::GroupConfig {
        std::fs::write(
            dir.join("groups.conf"),
            "[Main]\ndefault: local\n[local]\nmap: sed -n 's/^$GROUP: *//p' $CFGDIR/groups.txt\nlist: cut -d: -f1 $CFGDIR/groups.txt\n",
        )
        .unwrap();
        std::fs::write(dir.join("groups.txt"), "esxi: esx[01-03]\nnone:\n").unwrap();
        crate::groups::GroupConfig::from_files(vec![dir.join("groups.conf")])
    }

    #[test]
    fn groups_users_and_ports_around_node_sets() {
        let dir = tempfile::tempdir().unwrap();
        let mut groups = groups_in(dir.path());
        let labels = |args: &[&str], groups: &mut crate::groups::GroupConfig| -> Vec<String> {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            collect_targets_with(&args, None, &mut "".as_bytes(), groups)
                .unwrap()
                .iter()
                .map(HostSpec::to_string)
                .collect()
        };
        assert_eq!(labels(&["@esxi"], &mut groups), ["esx01", "esx02", "esx03"]);
        assert_eq!(labels(&["@esxi!esx02"], &mut groups), ["esx01", "esx03"]);
        assert_eq!(
            labels(&["root@@esxi"], &mut groups),
            ["root@esx01", "root@esx02", "root@esx03"]
        );
        assert_eq!(labels(&["@local:esxi&esx03"], &mut groups), ["esx03"]);
        assert_eq!(
            labels(&["admin@esx[01-02]:2222,esx07"], &mut groups),
            ["admin@esx01:2222", "admin@esx02:2222", "esx07"]
        );
        let args = vec!["@none".to_string()];
        assert!(matches!(
            collect_targets_with(&args, None, &mut "".as_bytes(), &mut groups),
            Err(TargetError::EmptySet { .. })
        ));
        // Without any group configuration, `@esxi` is an error, never a host named esxi.
        let args = vec!["@esxi".to_string()];
        let err = collect_targets_with(&args, None, &mut "".as_bytes(), &mut no_groups()).unwrap_err();
        assert!(err.to_string().contains("groups.conf"), "{err}");
        let args = vec!["root@@esxi".to_string()];
        match collect_targets_with(&args, None, &mut "".as_bytes(), &mut no_groups()) {
            Err(TargetError::Syntax(e)) => assert_eq!(e.at, 5, "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn hosts_files_keep_the_blanks_clustershell_ignores() {
        assert_eq!(
            specs_from_text("esx01, esx02 db1\nesx[ 7-8] ! esx8  # comment\n"),
            ["esx01, esx02", "db1", "esx[ 7-8] ! esx8"]
        );
    }

    #[test]
    fn ranges_keep_zero_padding_and_lists() {
        assert_eq!(names("esx[01-03]"), ["esx01", "esx02", "esx03"]);
        assert_eq!(names("esx[1-3,7]"), ["esx1", "esx2", "esx3", "esx7"]);
        assert_eq!(names("esx[8-10]"), ["esx8", "esx9", "esx10"]);
        assert_eq!(names("esx[098-101]"), ["esx098", "esx099", "esx100", "esx101"]);
        assert_eq!(
            names("r[1-2]n[01-02].lab"),
            ["r1n01.lab", "r1n02.lab", "r2n01.lab", "r2n02.lab"]
        );
        assert_eq!(names("esx01"), ["esx01"]);
    }

    #[test]
    fn ipv6_brackets_are_not_ranges() {
        assert_eq!(names("[fe80::1]:22"), ["[fe80::1]:22"]);
        let h = parse_host_spec("[fe80::1]:22").unwrap();
        assert_eq!((h.host.as_str(), h.port), ("fe80::1", Some(22)));
        let h = parse_host_spec("root@fe80::1").unwrap();
        assert_eq!((h.host.as_str(), h.port), ("fe80::1", None));
    }

    #[test]
    fn host_spec_forms() {
        let h = parse_host_spec("esx01").unwrap();
        assert_eq!(
            h,
            HostSpec {
                user: None,
                host: "esx01".into(),
                port: None,
                arg: None
            }
        );
        let h = parse_host_spec("admin@esx01:2222").unwrap();
        assert_eq!(h.user.as_deref(), Some("admin"));
        assert_eq!(h.port, Some(2222));
        assert_eq!(h.label(), "esx01:2222");
        assert!(matches!(parse_host_spec("esx01:ssh"), Err(TargetError::BadPort { .. })));
        assert!(matches!(parse_host_spec("esx01:0"), Err(TargetError::BadPort { .. })));
        assert!(matches!(parse_host_spec("root@"), Err(TargetError::EmptyHost(_))));
        let h = parse_host_spec("ssh://jumper@bastion:2200").unwrap();
        assert_eq!(
            (h.user.as_deref(), h.host.as_str(), h.port),
            (Some("jumper"), "bastion", Some(2200))
        );
        let h = parse_host_spec("ssh://[fe80::1]:22/").unwrap();
        assert_eq!((h.host.as_str(), h.port), ("fe80::1", Some(22)));
        assert!(matches!(parse_host_spec("ssh://"), Err(TargetError::EmptyHost(_))));
    }

    #[test]
    fn labels_split_without_checking_the_port() {
        let p = split_label("root@esx07.lab:22x");
        assert_eq!((p.user, p.host, p.port), (Some("root"), "esx07.lab", Some("22x")));
        let p = split_label("[fe80::1]junk");
        assert_eq!((p.host, p.port, p.trailing), ("fe80::1", None, "junk"));
        let p = split_label("@[fe80::1");
        assert_eq!((p.user, p.host, p.unclosed), (None, "fe80::1", true));
        assert_eq!(split_label("fe80::1").host, "fe80::1");
    }

    #[test]
    fn names_that_are_not_hosts_never_reach_dns() {
        let at = |s: &str| match parse_host_spec(s) {
            Err(TargetError::Syntax(e)) => e.at,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(at("samples/esx01"), 7);
        assert_eq!(at("user@host:22:33"), 12);
        assert_eq!(at("esx 01"), 3);
        assert!(parse_host_spec("fe80::1").is_ok());
        let err = collect_targets(&["esx[a-c]".to_string()], None, &mut "".as_bytes()).unwrap_err();
        assert!(err.to_string().contains("^"), "{err}");
        let got = collect_targets(&["esx01,esx02".to_string()], None, &mut "".as_bytes()).unwrap();
        assert_eq!(got.len(), 2);
        let got = collect_targets(&[], Some(Path::new("-")), &mut "esx[1-9/4]\n".as_bytes()).unwrap();
        let labels: Vec<String> = got.iter().map(HostSpec::label).collect();
        assert_eq!(labels, ["esx1", "esx5", "esx9"]);
    }

    #[test]
    fn bad_ranges_are_errors() {
        assert!(matches!(exp("esx[5-1]"), Err(TargetError::Syntax(_))));
        assert!(matches!(exp("esx[1-3"), Err(TargetError::Syntax(_))));
        assert!(matches!(exp("esx[1-99999]"), Err(TargetError::TooMany { .. })));
    }

    #[test]
    fn huge_lists_are_refused_before_they_are_built() {
        // 2000 parts of 9999 names: 20 million strings if built before counting.
        let body = vec!["1-9999"; 2000].join(",");
        assert!(matches!(exp(&format!("esx[{body}]")), Err(TargetError::TooMany { .. })));
        // The same full-size range given many times stops once the total is too large.
        let args: Vec<String> = (0..50).map(|_| "esx[1-9000]".to_string()).collect();
        assert!(matches!(
            collect_targets(&args, None, &mut "".as_bytes()),
            Err(TargetError::TooMany { .. })
        ));
        // A fleet listed twice is fine and keeps first-seen order.
        let args = vec!["esx[1-9000]".to_string(), "esx[1-9000]".to_string()];
        let got = collect_targets(&args, None, &mut "".as_bytes()).unwrap();
        assert_eq!(got.len(), 9000);
        assert_eq!(got.first().map(HostSpec::label).as_deref(), Some("esx1"));
        assert_eq!(got.last().map(HostSpec::label).as_deref(), Some("esx9000"));
    }

    #[test]
    fn the_same_host_with_two_users_is_a_usage_error() {
        let args = vec!["root@esx01".to_string(), "admin@esx01".to_string()];
        let err = collect_targets(&args, None, &mut "".as_bytes()).unwrap_err();
        assert_eq!(
            err,
            TargetError::SameLabel {
                label: "esx01".into(),
                first: "root@esx01".into(),
                second: "admin@esx01".into()
            }
        );
        assert!(err.to_string().contains("list each host once"), "{err}");
        let args = vec!["esx01".to_string(), "root@esx01".to_string()];
        assert!(matches!(
            collect_targets(&args, None, &mut "".as_bytes()),
            Err(TargetError::SameLabel { .. })
        ));
        // Another port is another host; the exact same spec twice is just a duplicate.
        let args = vec![
            "root@esx01".to_string(),
            "admin@esx01:2222".to_string(),
            "root@esx01".to_string(),
        ];
        assert_eq!(collect_targets(&args, None, &mut "".as_bytes()).unwrap().len(), 2);
    }

    #[test]
    fn files_stdin_comments_and_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts");
        std::fs::write(&file, "# fleet\nesx[01-02]  # rack 1\n\nesx03\nesx01\n").unwrap();
        let mut stdin = "esx04\nesx02\n".as_bytes();
        let args = vec!["esx02".to_string(), "-".to_string()];
        let got = collect_targets(&args, Some(&file), &mut stdin).unwrap();
        let labels: Vec<String> = got.iter().map(HostSpec::label).collect();
        assert_eq!(labels, ["esx02", "esx04", "esx01", "esx03"]);
        let missing = dir.path().join("nope");
        assert!(matches!(
            collect_targets(&[], Some(&missing), &mut "".as_bytes()),
            Err(TargetError::Read { .. })
        ));
        assert_eq!(
            collect_targets(&[], None, &mut "".as_bytes()),
            Err(TargetError::NoHosts)
        );
    }

    proptest! {
        /// Any zero-padded sequence written as a range (`esx[0098-0120]`) expands back to
        /// exactly the names it was folded from, padding included.
        #[test]
        fn padded_ranges_round_trip(prefix in "[a-z]{1,6}", width in 1u32..5, a in 0u64..10_000, len in 1u64..40) {
            let limit = 10u64.pow(width);
            let start = a % limit;
            let end = (start + len - 1).min(limit - 1);
            let w = width as usize;
            let expected: Vec<String> = (start..=end).map(|n| format!("{prefix}{n:0w$}")).collect();
            let spec = format!("{prefix}[{start:0w$}-{end:0w$}]");
            prop_assert_eq!(exp(&spec).unwrap(), expected);
        }

        /// Expanding never changes a name that has no range in it.
        #[test]
        fn plain_names_are_untouched(name in "[a-z][a-z0-9.-]{0,20}") {
            prop_assert_eq!(exp(&name).unwrap(), vec![name]);
        }
    }
}

//! The host list. Which hosts to visit: turns what the admin typed (arguments, a hosts file, stdin) into
//! an ordered, de-duplicated list of [`HostSpec`]s before any connection is made.
//!
//! Each argument is a ClusterShell node set, read exactly as `nodeset` and `clush` read it
//! ([`pvrdma_nodeset`]): ranges with their zero padding as written (`esx[01-16]` gives
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
pub mod groups;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::Read;
use std::path::Path;

/// More names than any fleet has; a typo like `esx[1-1000000]` becomes an error instead of
/// a million connection attempts.
pub(crate) const MAX_EXPANDED_HOSTS: usize = pvrdma_nodeset::MAX_NAMES;

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
    Syntax(pvrdma_nodeset::SyntaxError),
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
        TargetError::Syntax(pvrdma_nodeset::SyntaxError {
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
        return Err(TargetError::Syntax(pvrdma_nodeset::SyntaxError {
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

/// Expands one host argument as a ClusterShell node set (see [`pvrdma_nodeset`]) into
/// `[user@]host[:port]` texts and the user given in front of a group, if any.
fn expand_ranges(
    spec: &str,
    groups: &mut crate::hosts::groups::GroupConfig,
) -> Result<(Vec<String>, Option<String>), TargetError> {
    if has_ipv6_brackets(spec) {
        return Ok((vec![spec.to_string()], None));
    }
    let (user, expr, shift) = match user_before_group(spec) {
        Some((u, rest)) => (Some(u.to_string()), rest, u.chars().count() + 1),
        None => (None, spec, 0),
    };
    let names = pvrdma_nodeset::expand_with(expr, groups).map_err(|e| match e {
        pvrdma_nodeset::NodeSetError::Syntax(mut e) => {
            e.input = spec.to_string();
            e.at += shift;
            TargetError::Syntax(e)
        }
        pvrdma_nodeset::NodeSetError::TooMany(_) => TargetError::TooMany { spec: spec.to_string() },
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
    collect_targets_with(
        args,
        hosts_file,
        stdin,
        &mut crate::hosts::groups::GroupConfig::from_env(),
    )
}

/// [`collect_targets`] with the given ClusterShell group configuration.
pub(crate) fn collect_targets_with(
    args: &[String],
    hosts_file: Option<&Path>,
    stdin: &mut dyn Read,
    groups: &mut crate::hosts::groups::GroupConfig,
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
mod tests;

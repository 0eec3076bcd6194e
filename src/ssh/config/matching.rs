//! `Host` patterns and `Match` criteria, as ssh_config(5) evaluates them.
/// One `Match` criterion, possibly negated with `!`.
#[derive(Debug, Clone)]
pub(super) struct Criterion {
    pub(super) negated: bool,
    pub(super) kind: CriterionKind,
}

#[derive(Debug, Clone)]
pub(super) enum CriterionKind {
    All,
    /// The host name after `HostName`.
    Host(Vec<String>),
    /// The name as given on the command line.
    OriginalHost(Vec<String>),
    User(Vec<String>),
    /// A criterion this tool does not evaluate (its name as written).
    Unsupported(String),
}

/// What `Match` criteria are checked against, at the point the `Match` line is reached.
pub(super) struct MatchState<'a> {
    pub(super) original_host: &'a str,
    /// `HostName` so far, `%h` expanded.
    pub(super) hostname: Option<String>,
    pub(super) user: &'a str,
}

/// Parses the criteria of a `Match` line.
pub(super) fn parse_match(args: &[String]) -> Result<Vec<Criterion>, String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(word) = it.next() {
        let (negated, name) = match word.strip_prefix('!') {
            Some(n) => (true, n),
            None => (false, word.as_str()),
        };
        let lname = name.to_ascii_lowercase();
        let mut arg = |what: &str| -> Result<Vec<String>, String> {
            it.next()
                .map(|a| a.split(',').map(str::to_string).collect())
                .ok_or_else(|| format!("Match {what} needs an argument"))
        };
        let kind = match lname.as_str() {
            "all" => CriterionKind::All,
            "host" => CriterionKind::Host(arg("host")?),
            "originalhost" => CriterionKind::OriginalHost(arg("originalhost")?),
            "user" => CriterionKind::User(arg("user")?),
            // Criteria without an argument.
            "canonical" | "final" => CriterionKind::Unsupported(lname),
            _ => {
                arg(&lname)?;
                CriterionKind::Unsupported(lname)
            }
        };
        out.push(Criterion { negated, kind });
    }
    if out.is_empty() {
        return Err("Match needs a criterion (all, host, originalhost, user...)".into());
    }
    Ok(out)
}

/// Whether a `Match` block applies: every criterion must hold. `Err(name)` when the
/// criteria this tool checks all hold but another one is present, so the answer would
/// depend on something it does not evaluate.
pub(super) fn match_applies(criteria: &[Criterion], state: &MatchState) -> Result<bool, String> {
    let mut unsupported = None;
    for c in criteria {
        let holds = match &c.kind {
            CriterionKind::All => true,
            CriterionKind::Host(p) => host_patterns_match(p, state.hostname.as_deref().unwrap_or(state.original_host)),
            CriterionKind::OriginalHost(p) => host_patterns_match(p, state.original_host),
            CriterionKind::User(p) => user_patterns_match(p, state.user),
            CriterionKind::Unsupported(name) => {
                unsupported.get_or_insert_with(|| name.clone());
                continue;
            }
        };
        if holds == c.negated {
            return Ok(false);
        }
    }
    match unsupported {
        Some(name) => Err(name),
        None => Ok(true),
    }
}

/// `Match user` patterns: like host patterns but case-sensitive, as user names are.
fn user_patterns_match(patterns: &[String], user: &str) -> bool {
    let mut matched = false;
    for p in patterns {
        if let Some(neg) = p.strip_prefix('!') {
            if wildcard_match(neg, user) {
                return false;
            }
        } else if wildcard_match(p, user) {
            matched = true;
        }
    }
    matched
}

/// `Host` semantics: matches when some pattern matches and no negated pattern does.
/// Patterns may also be comma-separated, as in known_hosts.
pub(crate) fn host_patterns_match(patterns: &[String], host: &str) -> bool {
    let mut matched = false;
    for p in patterns.iter().flat_map(|p| p.split(',')) {
        if let Some(neg) = p.strip_prefix('!') {
            if wildcard_match(&neg.to_ascii_lowercase(), &host.to_ascii_lowercase()) {
                return false;
            }
        } else if wildcard_match(&p.to_ascii_lowercase(), &host.to_ascii_lowercase()) {
            matched = true;
        }
    }
    matched
}

/// Glob with `*` (any run) and `?` (one character), as ssh's `match_pattern`.
pub(crate) fn wildcard_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || Some(&c) == t.get(ti) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..).is_some_and(|rest| rest.iter().all(|&c| c == '*'))
}

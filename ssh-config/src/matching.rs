//! `Host` patterns and `Match` criteria, as OpenSSH evaluates them (match.c and
//! match_cfg_line() in readconf.c).
//!
//! - `Host` compares each word with match_pattern(): case-sensitive, `*` and `?`, a `!`
//!   word that matches turns the block off. Commas are ordinary characters there.
//! - `Match host`/`originalhost` use match_hostname(): the name and the comma-separated
//!   patterns are lowercased, so they are case-insensitive; `Match user`/`localuser`
//!   are case-sensitive pattern lists.
use super::lexer::strdelim;

/// `*` (any run) and `?` (one byte), byte for byte as match_pattern().
pub fn wildcard_match(pattern: &str, text: &str) -> bool {
    match_bytes(pattern.as_bytes(), text.as_bytes())
}

fn match_bytes(p: &[u8], t: &[u8]) -> bool {
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == b'?' || Some(&c) == t.get(ti) => {
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
    p.get(pi..).is_some_and(|rest| rest.iter().all(|&c| c == b'*'))
}

/// match_pattern_list(): comma-separated patterns, `!` negates one; `Some(true)` for a
/// positive match, `Some(false)` for a negated one (which wins), `None` for no match.
fn pattern_list(text: &str, list: &str, lower: bool) -> Option<bool> {
    let mut positive = false;
    for p in list.split(',') {
        let (negated, p) = match p.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, p),
        };
        let p = if lower { p.to_ascii_lowercase() } else { p.to_string() };
        if wildcard_match(&p, text) {
            if negated {
                return Some(false);
            }
            positive = true;
        }
    }
    positive.then_some(true)
}

/// `Match host`/`originalhost`: case-insensitive.
fn hostname_matches(host: &str, list: &str) -> bool {
    pattern_list(&host.to_ascii_lowercase(), list, true) == Some(true)
}

/// `Match user`/`localuser`: case-sensitive.
fn user_matches(user: &str, list: &str) -> bool {
    pattern_list(user, list, false) == Some(true)
}

/// Whether `IgnoreUnknown` (a case-insensitive pattern list) names `keyword`.
pub(super) fn ignored_keyword(list: &str, keyword: &str) -> bool {
    pattern_list(keyword, list, true) == Some(true)
}

/// Whether a `Host` line's words select `host`. `Err` for an empty word.
pub(super) fn host_line_matches(words: &[String], host: &str) -> Result<bool, String> {
    let mut active = false;
    for w in words {
        if w.is_empty() {
            return Err("keyword host empty argument".into());
        }
        match w.strip_prefix('!') {
            Some(neg) => {
                if wildcard_match(neg, host) {
                    return Ok(false);
                }
            }
            None => active |= wildcard_match(w, host),
        }
    }
    Ok(active)
}

/// What the criteria of a `Match` line are checked against when the line is reached.
pub(super) struct MatchState<'a> {
    /// `HostName` so far with `%h` expanded, else the host being resolved.
    pub(super) host: &'a str,
    /// The name given on the command line.
    pub(super) original_host: &'a str,
    /// `User` so far, else the default user.
    pub(super) user: &'a str,
    pub(super) local_user: &'a str,
    /// The second reading of the files (after `Match final`, or canonicalisation).
    pub(super) final_pass: bool,
}

/// What a `Match` line gave.
pub(super) struct MatchOutcome {
    pub(super) applies: bool,
    /// `Match final` was seen: the files are read a second time.
    pub(super) wants_final: bool,
    /// Text left after the criteria (ssh then refuses the line).
    pub(super) leftover: bool,
}

/// match_cfg_line(): evaluates every criterion in order (all must hold). `Err` with the
/// message ssh gives when the line is malformed. `exec` is refused when it would run,
/// since this tool never runs commands from the config.
pub(super) fn match_line(rest: &str, state: &MatchState) -> Result<MatchOutcome, String> {
    let mut cp: Option<&str> = Some(rest);
    let mut result = true;
    let mut attributes = 0usize;
    let mut wants_final = false;
    loop {
        let (attrib, next) = strdelim(cp);
        cp = next;
        let Some(oattrib) = attrib.filter(|a| !a.is_empty()) else {
            break;
        };
        if oattrib.starts_with('#') {
            cp = None;
            break;
        }
        let (negate, attrib) = match oattrib.strip_prefix('!') {
            Some(a) => (true, a.to_string()),
            None => (false, oattrib.clone()),
        };
        let name = attrib.to_ascii_lowercase();
        if name == "all" {
            let (arg, next) = strdelim(cp);
            cp = next;
            let arg_is_more = arg.as_deref().is_some_and(|a| !a.is_empty() && !a.starts_with('#'));
            if attributes > 1 || arg_is_more {
                return Err(format!("'{oattrib}' cannot be combined with other Match attributes"));
            }
            if arg.as_deref().is_some_and(|a| a.starts_with('#')) {
                cp = None;
            }
            if result {
                result = !negate;
            }
            return Ok(MatchOutcome {
                applies: result,
                wants_final,
                leftover: cp.is_some_and(|c| !c.is_empty()),
            });
        }
        attributes += 1;
        if name == "canonical" || name == "final" {
            wants_final |= name == "final";
            if state.final_pass == negate {
                result = false;
            }
            continue;
        }
        let (arg, next) = strdelim(cp);
        cp = next;
        let Some(arg) = arg.filter(|a| !a.is_empty() && !a.starts_with('#')) else {
            return Err(format!("Missing Match criteria for {attrib}"));
        };
        let holds = match name.as_str() {
            "host" => hostname_matches(state.host, &arg),
            "originalhost" => hostname_matches(state.original_host, &arg),
            "user" => user_matches(state.user, &arg),
            "localuser" => user_matches(state.local_user, &arg),
            "exec" => {
                if !result {
                    continue;
                }
                return Err("Match exec is not supported by pvrdma-doctor (it never runs commands from the ssh config); for this host, use a Host block or a separate config file with -F".into());
            }
            _ => return Err(format!("Unsupported Match attribute {attrib}")),
        };
        if holds == negate {
            result = false;
        }
    }
    if attributes == 0 {
        return Err("One or more attributes required for Match".into());
    }
    Ok(MatchOutcome {
        applies: result,
        wants_final,
        leftover: cp.is_some_and(|c| !c.is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(final_pass: bool) -> MatchState<'static> {
        MatchState {
            host: "10.0.0.1",
            original_host: "ESX01",
            user: "root",
            local_user: "alice",
            final_pass,
        }
    }

    fn applies(line: &str) -> Result<bool, String> {
        match_line(line, &state(false)).map(|o| o.applies && !o.leftover)
    }

    #[test]
    fn criteria() {
        assert_eq!(applies("all"), Ok(true));
        assert_eq!(applies("!all"), Ok(false));
        assert_eq!(applies("originalhost esx01"), Ok(true), "case-insensitive");
        assert_eq!(applies("host 10.0.0.*,!10.0.0.2"), Ok(true));
        assert_eq!(applies("host 10.0.0.*,!10.0.0.1"), Ok(false));
        assert_eq!(applies("user ROOT"), Ok(false), "user names are case-sensitive");
        assert_eq!(applies("localuser alice user root"), Ok(true));
        assert_eq!(applies("!localuser alice"), Ok(false));
        assert_eq!(applies("host x # comment about host y"), Ok(false));
        assert_eq!(applies("all # comment"), Ok(true));
        assert_eq!(applies("final"), Ok(false));
        assert!(match_line("final", &state(true)).unwrap().applies);
        assert!(match_line("final", &state(false)).unwrap().wants_final);
        assert!(applies("all host x").is_err());
        assert!(applies("host").is_err());
        assert!(applies("tagged x").is_err());
        assert!(applies("").is_err());
        assert_eq!(
            applies("host nomatch exec false"),
            Ok(false),
            "exec after a false criterion is skipped"
        );
        assert!(applies("exec true").is_err());
    }

    #[test]
    fn host_lines() {
        let w = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(host_line_matches(&w(&["esx*", "!esx02"]), "esx01"), Ok(true));
        assert_eq!(host_line_matches(&w(&["esx*", "!esx02"]), "esx02"), Ok(false));
        assert_eq!(host_line_matches(&w(&["ESX01"]), "esx01"), Ok(false), "case-sensitive");
        assert_eq!(
            host_line_matches(&w(&["esx01,esx02"]), "esx01"),
            Ok(false),
            "commas are literal"
        );
        assert!(host_line_matches(&w(&[""]), "x").is_err());
        assert!(wildcard_match("e?x*", "esx01"));
        assert!(!wildcard_match("esx0?", "esx011"));
    }
}

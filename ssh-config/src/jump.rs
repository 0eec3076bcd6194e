//! `ProxyJump`/`-J` lists, `[user@]host[:port]` and `ssh://` hops, and ports, read as
//! OpenSSH reads them (parse_jump(), parse_user_host_port(), parse_uri(), a2port()).

/// A parsed `ProxyJump` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Jump {
    /// `none`: no jump host, and a later `ProxyJump` does not set one either.
    None,
    /// Connect through `host` (the last hop of the list); the hops before it are
    /// `extra`, which ssh hands to the jump host's own ssh as `-J`.
    Via {
        user: Option<String>,
        host: String,
        port: Option<u16>,
        extra: Option<String>,
    },
}

/// OpenSSH's a2port(): a number from 0 to 65535 (as strtonum reads it), else a TCP
/// service name. `None` when neither; 0 is returned and refused by the callers.
pub(crate) fn a2port(s: &str) -> Option<u16> {
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (negative, digits) = match t.strip_prefix(['+', '-']) {
        Some(d) => (t.starts_with('-'), d),
        None => (false, t),
    };
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let value = digits.trim_start_matches('0');
        if negative {
            if value.is_empty() {
                return Some(0);
            }
        } else if value.len() <= 5 {
            if let Ok(n) = value.parse::<u32>().or(if value.is_empty() { Ok(0) } else { Err(()) }) {
                if let Ok(p) = u16::try_from(n) {
                    return Some(p);
                }
            }
        }
    }
    super::sys::service_port(s)
}

/// ssh's check on a host name given on the command line (the destination, `-J` hops):
/// no shell metacharacters, blanks, control characters or leading `-`.
pub fn valid_hostname(s: &str) -> bool {
    !s.starts_with('-')
        && !s
            .chars()
            .any(|c| "'`\"$\\;&<>|(){},".contains(c) || c.is_ascii_whitespace() || c.is_ascii_control())
}

/// ssh's check on a user name given on the command line (`-l`, `user@`, `-o User`, `-J`).
pub fn valid_ruser(s: &str) -> bool {
    if s.starts_with('-') {
        return false;
    }
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        let next = b.get(i + 1).copied();
        if c.is_ascii_control() || b"'`\";&<>|(){}".contains(&c) {
            return false;
        }
        if (c == b' ' || (b'\t'..=b'\r').contains(&c)) && next == Some(b'-') {
            return false;
        }
        if c == b'\\' && next.is_none() {
            return false;
        }
    }
    true
}

/// One hop: `(user, host, port)`.
type Hop = (Option<String>, String, Option<u16>);

/// `[user@]host[:port]` or `[user@][v6]:port`, as parse_user_host_port(). The user runs
/// to the last `@`; an empty user, an empty host or a bad port is an error.
pub(crate) fn parse_user_host_port(s: &str) -> Option<Hop> {
    let (user, rest) = match s.rfind('@') {
        Some(i) => {
            let u = s.get(..i).unwrap_or("");
            if u.is_empty() {
                return None;
            }
            (Some(u.to_string()), s.get(i + 1..).unwrap_or(""))
        }
        None => (None, s),
    };
    let (host, port_text, delim) = hpdelim2(rest)?;
    if host.is_empty() || delim == Some('/') {
        return None;
    }
    let port = match port_text {
        Some(p) if !p.is_empty() => Some(a2port(p).filter(|&n| n > 0)?),
        _ => None,
    };
    Some((user, clean_hostname(host).to_string(), port))
}

/// hpdelim2(): the host (brackets kept) up to `:` or `/`, what follows, and the
/// delimiter. `None` for an unclosed bracket or text after `]` that is not a delimiter.
fn hpdelim2(s: &str) -> Option<(&str, Option<&str>, Option<char>)> {
    let end = if s.starts_with('[') {
        s.find(']')? + 1
    } else {
        s.find([':', '/']).unwrap_or(s.len())
    };
    let host = s.get(..end).unwrap_or("");
    match s.get(end..).and_then(|r| r.chars().next()) {
        None => Some((host, None, None)),
        Some(d @ (':' | '/')) => Some((host, s.get(end + 1..), Some(d))),
        Some(_) => None,
    }
}

/// `[addr]` without its brackets.
fn clean_hostname(h: &str) -> &str {
    match h.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        Some(inner) => inner,
        None => h,
    }
}

/// `ssh://[user[;params]@]host[:port][/]` as parse_ssh_uri(): `Ok(None)` when `s` is not
/// an ssh URI, `Err` when it is one but malformed (a path is not allowed).
pub(crate) fn parse_ssh_uri(s: &str) -> Result<Option<Hop>, ()> {
    let Some(rest) = s.strip_prefix("ssh://") else {
        return Ok(None);
    };
    let (user, rest) = match rest.find('@') {
        Some(i) => {
            let info = rest.get(..i).unwrap_or("");
            let name = info.split(';').next().unwrap_or("");
            if name.is_empty() {
                return Err(());
            }
            (Some(url_decode(name).ok_or(())?), rest.get(i + 1..).unwrap_or(""))
        }
        None => (None, rest),
    };
    let (host, tail, delim) = hpdelim2(rest).ok_or(())?;
    let host = valid_domain(clean_hostname(host)).ok_or(())?;
    let mut port = None;
    let mut path = tail.filter(|t| !t.is_empty());
    if let (Some(t), Some(':')) = (path, delim) {
        let (p, after) = match t.split_once('/') {
            Some((p, a)) => (p, Some(a)),
            None => (t, None),
        };
        port = Some(a2port(p).filter(|&n| n > 0).ok_or(())?);
        path = after.filter(|a| !a.is_empty());
    }
    if path.is_some() {
        return Err(());
    }
    Ok(Some((user, host.to_string(), port)))
}

/// valid_domain(): starts with a letter or digit, then letters, digits, `-`, `.` and
/// `_`, no `..`. A trailing `.` is dropped from the host, as ssh does.
fn valid_domain(s: &str) -> Option<&str> {
    let first_ok = s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric());
    let chars_ok = s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_');
    (first_ok && chars_ok && !s.contains("..")).then(|| s.strip_suffix('.').unwrap_or(s))
}

fn url_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                let v = u8::from_str_radix(hex, 16).ok().filter(|&v| v != 0)?;
                out.push(v);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// One hop of a jump list, as an ssh URI or `[user@]host[:port]`.
pub(crate) fn parse_hop(s: &str) -> Option<Hop> {
    match parse_ssh_uri(s) {
        Err(()) => None,
        Ok(Some(hop)) => Some(hop),
        Ok(None) => parse_user_host_port(s),
    }
}

/// parse_jump(): `none`, or a comma-separated list whose every hop must parse. A `#`
/// ends the value; so does whitespace after its first character (ssh's rtrim() cuts
/// there). `strict` (command line) also applies ssh's host and user name checks.
pub(crate) fn parse_jump(s: &str, strict: bool) -> Result<Jump, String> {
    if s.eq_ignore_ascii_case("none") {
        return Ok(Jump::None);
    }
    let uncommented = s.split('#').next().unwrap_or("");
    let value = rtrim(uncommented);
    let mut hops = value.rsplit(',');
    let mut last: Option<Hop> = None;
    for hop in hops.by_ref() {
        if hop.is_empty() {
            return Err(if value.len() < s.trim_end().len() {
                "a hop is empty: the list ends at the first blank or '#', so write it without spaces (j1,j2)".into()
            } else {
                "a hop is empty (two commas, or one at an end)".into()
            });
        }
        let (user, host, port) = parse_hop(hop).ok_or_else(|| format!("{hop:?} is not [user@]host[:port]"))?;
        if strict {
            if !valid_hostname(&host) {
                return Err(format!("invalid hostname {host:?}"));
            }
            if let Some(u) = user.as_deref().filter(|u| !valid_ruser(u)) {
                return Err(format!("invalid username {u:?}"));
            }
        }
        last.get_or_insert((user, host, port));
    }
    let (user, host, port) = last.ok_or_else(|| "empty".to_string())?;
    let extra = value.rfind(',').map(|i| value.get(..i).unwrap_or("").to_string());
    Ok(Jump::Via {
        user,
        host,
        port,
        extra,
    })
}

/// OpenSSH's rtrim(): it clears every blank after the first character, which in effect
/// cuts the string at its first blank past position 0.
fn rtrim(s: &str) -> &str {
    match s.char_indices().skip(1).find(|(_, c)| c.is_ascii_whitespace()) {
        Some((i, _)) => s.get(..i).unwrap_or(s),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Via = (Option<String>, String, Option<u16>, Option<String>);

    fn via(s: &str, strict: bool) -> Result<Via, String> {
        match parse_jump(s, strict)? {
            Jump::Via {
                user,
                host,
                port,
                extra,
            } => Ok((user, host, port, extra)),
            Jump::None => Err("none".into()),
        }
    }

    #[test]
    fn jump_lists_as_ssh_reads_them() {
        assert_eq!(parse_jump("NONE", false), Ok(Jump::None));
        assert_eq!(
            via("a,u@b:2200", false).unwrap(),
            (Some("u".into()), "b".into(), Some(2200), Some("a".into()))
        );
        // Whitespace ends the value; a comment too.
        assert_eq!(via("j1 ,j2", false).unwrap().1, "j1");
        assert_eq!(via("j1 # x,y", false).unwrap(), (None, "j1".into(), None, None));
        assert_eq!(via("none # off", false).unwrap().1, "none");
        assert!(via("j1, j2", false).is_err());
        assert!(via("j1,,j2", false).is_err());
        assert!(via("@j1", false).is_err());
        assert!(via("j1:0", false).is_err());
        assert_eq!(via("j1:ssh", false).unwrap().2, Some(22));
        assert_eq!(via("[::1]:2222", false).unwrap().1, "::1");
        assert_eq!(
            via("ssh://u@j:2200", false).unwrap(),
            (Some("u".into()), "j".into(), Some(2200), None)
        );
        assert!(via("ssh://u@j/path", false).is_err());
        assert!(via("j$1", true).is_err());
        assert!(via("j$1", false).is_ok());
        assert!(via(" j2", true).is_err());
    }

    #[test]
    fn ports() {
        assert_eq!(a2port("22"), Some(22));
        assert_eq!(a2port("0022"), Some(22));
        assert_eq!(a2port("+22"), Some(22));
        assert_eq!(a2port("0"), Some(0));
        assert_eq!(a2port("65536"), None);
        assert_eq!(a2port("22x"), None);
        assert_eq!(a2port("-1"), None);
        assert_eq!(a2port("ssh"), Some(22));
    }

    #[test]
    fn names() {
        assert!(valid_hostname("esx01.lab"));
        assert!(!valid_hostname("-oProxyCommand=x"));
        assert!(!valid_hostname("a,b"));
        assert!(valid_ruser("a b"));
        assert!(!valid_ruser("a -b"));
        assert!(!valid_ruser("a;b"));
        assert!(!valid_ruser("a\\"));
    }
}

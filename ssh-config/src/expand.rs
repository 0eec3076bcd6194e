//! `~`, `%` tokens and `${VAR}` in ssh_config values, expanded as OpenSSH's
//! tilde_expand() and percent_dollar_expand() do: an unknown `%x` token or an unset
//! variable is an error (ssh stops), never left in the path.
use std::path::Path;

/// `%` tokens and their values, for one expansion.
pub(super) type Tokens<'a> = [(char, &'a str)];

/// Expands `%x` tokens from `tokens` (`%%` is a `%`) and, with `dollar`, `${VAR}` from
/// the environment.
pub(super) fn percent_expand(s: &str, tokens: &Tokens<'_>, dollar: bool) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if dollar && rest.starts_with("${") {
            let body = rest.get(2..).unwrap_or("");
            let Some(end) = body.find('}') else {
                return Err(format!("environment variable '{body}' missing closing '}}'"));
            };
            let name = body.get(..end).unwrap_or("");
            if name.is_empty() {
                return Err("zero-length environment variable".into());
            }
            match std::env::var(name) {
                Ok(v) => out.push_str(&v),
                Err(_) => return Err(format!("env var ${{{name}}} has no value")),
            }
            rest = body.get(end + 1..).unwrap_or("");
            continue;
        }
        rest = rest.get(c.len_utf8()..).unwrap_or("");
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(t) = rest.chars().next() else {
            return Err("a '%' ends the value (write %% for a percent sign)".into());
        };
        rest = rest.get(t.len_utf8()..).unwrap_or("");
        if t == '%' {
            out.push('%');
            continue;
        }
        match tokens.iter().find(|(k, _)| *k == t) {
            Some((_, v)) => out.push_str(v),
            None => return Err(format!("unknown token %{t} (this option accepts {})", list(tokens))),
        }
    }
    Ok(out)
}

fn list(tokens: &Tokens<'_>) -> String {
    tokens
        .iter()
        .map(|(k, _)| format!("%{k}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `~`, `~/path` (the user's home) and `~user/path` (that user's home from the passwd
/// database), as OpenSSH's tilde_expand(). Other paths are returned as they are.
pub(super) fn tilde_expand(s: &str, home: &Path) -> Result<String, String> {
    let Some(after) = s.strip_prefix('~') else {
        return Ok(s.to_string());
    };
    let (dir, path) = if after.is_empty() || after.starts_with('/') {
        let path = after.trim_start_matches('/');
        (home.to_string_lossy().into_owned(), path)
    } else {
        let (user, path) = match after.split_once('/') {
            Some((u, p)) => (u, p.trim_start_matches('/')),
            None => (after, ""),
        };
        let pw = super::sys::user_named(user).ok_or_else(|| format!("~{user}: no such user"))?;
        (pw.home.to_string_lossy().into_owned(), path)
    };
    let slash = if dir.ends_with('/') { "" } else { "/" };
    Ok(format!("{dir}{slash}{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_percent_signs() {
        let t = [('h', "esx01"), ('p', "22")];
        assert_eq!(percent_expand("%h:%p", &t, false).unwrap(), "esx01:22");
        assert_eq!(percent_expand("100%%", &t, false).unwrap(), "100%");
        assert_eq!(percent_expand("%%h", &t, false).unwrap(), "%h");
        assert!(percent_expand("%x", &t, false).is_err());
        assert!(percent_expand("50%", &t, false).is_err());
        assert_eq!(percent_expand("${}x", &t, false).unwrap(), "${}x");
        assert!(percent_expand("${}x", &t, true).is_err());
        assert!(percent_expand("${PVRDMA_SURELY_UNSET_VARIABLE}", &t, true).is_err());
    }

    #[test]
    fn tildes() {
        let home = Path::new("/home/alice");
        assert_eq!(tilde_expand("~", home).unwrap(), "/home/alice/");
        assert_eq!(tilde_expand("~/.ssh/id", home).unwrap(), "/home/alice/.ssh/id");
        assert_eq!(tilde_expand("~//x", home).unwrap(), "/home/alice/x");
        assert_eq!(tilde_expand("/abs/~", home).unwrap(), "/abs/~");
        assert_eq!(tilde_expand("~root/k", home).unwrap(), "/root/k");
        assert!(tilde_expand("~no-such-user-here/k", home).is_err());
    }
}

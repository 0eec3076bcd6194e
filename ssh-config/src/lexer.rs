//! How ssh cuts a config line into words. Three different cutters are used, as in
//! OpenSSH's readconf.c, and they disagree on purpose-worthy details:
//! - the keyword: [`strdelim`] (whitespace, one `=`, double quotes);
//! - the arguments of most keywords: [`argv_split`] (single and double quotes,
//!   backslash escapes, a word starting with `#` ends the line);
//! - `Match` criteria: [`strdelim`] again, word by word.
//!
//! `ProxyCommand` and `ProxyJump` take the raw rest of the line instead.

/// ssh's WHITESPACE set for keyword and `Match` splitting.
pub(super) const WHITESPACE: &[char] = &[' ', '\t', '\r', '\n'];

/// OpenSSH's `strdelim()`: the next word of `s` and what follows it. `None` as the rest
/// stands for C's NULL (nothing follows at all); `(None, None)` is an unclosed quote.
pub(super) fn strdelim(s: Option<&str>) -> (Option<String>, Option<&str>) {
    let Some(s) = s else {
        return (None, None);
    };
    let Some(i) = s.find([' ', '\t', '\r', '\n', '"', '=']) else {
        return (Some(s.to_string()), None);
    };
    let skip_ws = |t: &'_ str| -> usize { t.len() - t.trim_start_matches(WHITESPACE).len() };
    let head = s.get(..i).unwrap_or("");
    let after = s.get(i + 1..).unwrap_or("");
    if s.as_bytes().get(i) == Some(&b'"') {
        // The opening quote is removed; the word runs to the next quote.
        let Some(j) = after.find('"') else {
            return (None, None);
        };
        let word = format!("{head}{}", after.get(..j).unwrap_or(""));
        let rest = after.get(j + 1..).unwrap_or("");
        return (Some(word), Some(rest.get(skip_ws(rest)..).unwrap_or("")));
    }
    let equals = s.as_bytes().get(i) == Some(&b'=');
    let mut rest = after.get(skip_ws(after)..).unwrap_or("");
    if !equals {
        if let Some(r) = rest.strip_prefix('=') {
            rest = r.get(skip_ws(r)..).unwrap_or("");
        }
    }
    (Some(head.to_string()), Some(rest))
}

/// A config line cut into its lowercased keyword and the raw rest (leading whitespace
/// removed), as process_config_line() does. `Ok(None)`: blank or comment line.
/// `Err(keyword)`: a keyword without any argument.
pub(super) fn keyword_and_rest(raw: &str) -> Result<Option<(String, &str)>, String> {
    // Trailing whitespace (and form feeds) go first.
    let line = raw.trim_end_matches([' ', '\t', '\r', '\n', '\x0c']);
    if line.is_empty() {
        return Ok(None);
    }
    let (mut keyword, mut rest) = strdelim(Some(line));
    if keyword.as_deref() == Some("") {
        (keyword, rest) = strdelim(rest);
    }
    let Some(keyword) = keyword.filter(|k| !k.is_empty() && !k.starts_with(['\n', '#'])) else {
        return Ok(None);
    };
    let keyword = keyword.to_ascii_lowercase();
    let rest = rest.map(|r| r.trim_start_matches(WHITESPACE)).unwrap_or("");
    if rest.is_empty() {
        return Err(keyword);
    }
    Ok(Some((keyword, rest)))
}

/// OpenSSH's `argv_split()` with comments on: words split on spaces and tabs, `'` and
/// `"` quote, a backslash escapes a quote, a backslash or (outside quotes) a space; a
/// `#` at the start of a word ends the line. `Err` on an unclosed quote.
pub(super) fn argv_split(s: &str) -> Result<Vec<String>, ()> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|&c| c == ' ' || c == '\t').is_some() {}
        match chars.peek() {
            None | Some('#') => return Ok(out),
            Some(_) => {}
        }
        let mut word = String::new();
        let mut quote: Option<char> = None;
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.peek() {
                    Some(&n) if n == '\'' || n == '"' || n == '\\' || (quote.is_none() && n == ' ') => {
                        word.push(n);
                        chars.next();
                    }
                    _ => word.push('\\'),
                },
                ' ' | '\t' if quote.is_none() => break,
                '"' | '\'' if quote.is_none() => quote = Some(c),
                c if Some(c) == quote => quote = None,
                c => word.push(c),
            }
        }
        if quote.is_some() {
            return Err(());
        }
        out.push(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyword_forms() {
        let k = |s: &str| keyword_and_rest(s).map(|o| o.map(|(k, r)| (k, r.to_string())));
        assert_eq!(k("Host esx01"), Ok(Some(("host".into(), "esx01".into()))));
        assert_eq!(
            k("  HostName=10.0.0.1"),
            Ok(Some(("hostname".into(), "10.0.0.1".into())))
        );
        assert_eq!(k("Port = 22"), Ok(Some(("port".into(), "22".into()))));
        assert_eq!(k("\"User\" admin"), Ok(Some(("user".into(), "admin".into()))));
        assert_eq!(k("# comment"), Ok(None));
        assert_eq!(k("   "), Ok(None));
        assert_eq!(k("User"), Err("user".into()));
        assert_eq!(k("User   \t"), Err("user".into()));
    }

    #[test]
    fn argv_quotes_escapes_comments() {
        let a = |s: &str| argv_split(s).unwrap();
        assert_eq!(a("'admin'"), ["admin"]);
        assert_eq!(a("\"a b\" c # d e"), ["a b", "c"]);
        assert_eq!(a("a#b"), ["a#b"]);
        assert_eq!(a("a\\ b"), ["a b"]);
        assert_eq!(a("a\\x"), ["a\\x"]);
        assert_eq!(a("\"\""), [""]);
        assert_eq!(a("x'y z'w"), ["xy zw"]);
        assert!(argv_split("\"open").is_err());
        assert_eq!(a("# only a comment"), Vec::<String>::new());
    }

    #[test]
    fn strdelim_words() {
        let (w, r) = strdelim(Some("host \"a b\" user x"));
        assert_eq!((w.as_deref(), r), (Some("host"), Some("\"a b\" user x")));
        let (w, r) = strdelim(r);
        assert_eq!((w.as_deref(), r), (Some("a b"), Some("user x")));
        let (w, r) = strdelim(Some("host=x"));
        assert_eq!((w.as_deref(), r), (Some("host"), Some("x")));
        let (w, r) = strdelim(Some("x"));
        assert_eq!((w.as_deref(), r), (Some("x"), None));
    }
}

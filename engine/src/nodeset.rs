//! ClusterShell node sets: expanding what the admin typed (`esx[01-16,20]`, `esx[1-9/4]`,
//! `r[1-2]n[01-04]`, `esx01,esx02`) into names, and folding names back (`esx[01-20]`) so a
//! fleet report names 40 hosts in one token, as `clush -b` does.
//!
//! The grammar is ClusterShell's `NodeSet` syntax without groups (`@rack1`) and set
//! operators: a comma-separated list of patterns; a pattern is text with bracket groups;
//! a bracket group is a comma-separated list of `N`, `A-B` or `A-B/STEP` of digits. A
//! bound written with a leading zero fixes the width (`[08-10]` gives `08 09 10`). Several
//! groups give their product in written order. Like ClusterShell, letters are not ranges.
//! A bracket holding a `:` is an IPv6 literal (`[fe80::1]:22`) and stays as written.
//!
//! The `nodeset` crate (a ClusterShell port) was weighed: it adds groups and set algebra
//! this tool does not use, while its errors do not point at the offending character and
//! it would not keep IPv6 brackets and `user@host:port` intact. This module is small, has
//! no dependency, and its fold is tested to round-trip through its own expander.
use std::fmt;

/// More names than any fleet has: a typo like `esx[1-1000000]` becomes an error instead
/// of a million connection attempts.
pub const MAX_NAMES: usize = 10_000;

/// A node set that cannot be understood, with the character where it goes wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// What was typed.
    pub input: String,
    /// Character (not byte) index into `input` of the offending character.
    pub at: usize,
    /// What is wrong there.
    pub reason: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The input line and a caret under the character, as compilers do; the input is
        // shown escaped so a control character cannot shift the caret.
        let shown: String = self.input.chars().flat_map(char::escape_debug).collect();
        let caret_at: usize = self.input.chars().take(self.at).map(|c| c.escape_debug().count()).sum();
        write!(
            f,
            "bad host or node set: {} (character {}):\n    {shown}\n    {}^",
            self.reason,
            self.at + 1,
            " ".repeat(caret_at)
        )
    }
}

/// Why a node set does not expand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeSetError {
    #[error("{0}")]
    Syntax(SyntaxError),
    #[error("{0:?} expands to more than {MAX_NAMES} names")]
    TooMany(String),
}

fn syntax(input: &str, at: usize, reason: impl Into<String>) -> NodeSetError {
    NodeSetError::Syntax(SyntaxError {
        input: input.to_string(),
        at,
        reason: reason.into(),
    })
}

/// One piece of a pattern: literal text or the values of a bracket group.
enum Piece {
    Text(String),
    Values(Vec<String>),
}

/// Expands a node set into names, in written order (duplicates kept; the caller dedupes).
pub fn expand(input: &str) -> Result<Vec<String>, NodeSetError> {
    let chars: Vec<char> = input.chars().collect();
    let mut names = Vec::new();
    let mut start = 0;
    let mut depth = 0usize;
    // Split on top-level commas; brackets may hold commas of their own.
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                expand_pattern(input, &chars, start, i, &mut names)?;
                start = i + 1;
            }
            _ => {}
        }
    }
    expand_pattern(input, &chars, start, chars.len(), &mut names)?;
    Ok(names)
}

/// Expands `chars[from..to]`, one comma-free pattern, onto `out`.
fn expand_pattern(
    input: &str,
    chars: &[char],
    from: usize,
    to: usize,
    out: &mut Vec<String>,
) -> Result<(), NodeSetError> {
    let pattern: String = chars.get(from..to).unwrap_or(&[]).iter().collect();
    if pattern.trim().is_empty() {
        return Err(syntax(
            input,
            from.min(chars.len().saturating_sub(1)),
            "empty name in the list",
        ));
    }
    if let Some(i) = pattern.find(char::is_whitespace) {
        let at = from + pattern.get(..i).map_or(0, |p| p.chars().count());
        return Err(syntax(input, at, "white space inside a name"));
    }
    let mut pieces: Vec<Piece> = Vec::new();
    let mut text = String::new();
    let mut i = from;
    while i < to {
        let c = chars.get(i).copied().unwrap_or_default();
        match c {
            '[' => {
                let close = (i + 1..to)
                    .find(|&j| chars.get(j) == Some(&']'))
                    .ok_or_else(|| syntax(input, i, "'[' is never closed"))?;
                let body: String = chars.get(i + 1..close).unwrap_or(&[]).iter().collect();
                if body.contains(':') {
                    // An IPv6 literal, not a range: kept as written.
                    text.push('[');
                    text.push_str(&body);
                    text.push(']');
                } else {
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(Piece::Values(expand_group(input, chars, i + 1, close)?));
                }
                i = close + 1;
            }
            ']' => return Err(syntax(input, i, "']' without a '['")),
            _ => {
                text.push(c);
                i += 1;
            }
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    let mut total: usize = 1;
    for p in &pieces {
        if let Piece::Values(v) = p {
            total = total.saturating_mul(v.len());
        }
    }
    if total.saturating_add(out.len()) > MAX_NAMES {
        return Err(NodeSetError::TooMany(input.to_string()));
    }
    let mut names = vec![String::new()];
    for p in pieces {
        names = match p {
            Piece::Text(t) => names.into_iter().map(|n| n + &t).collect(),
            Piece::Values(values) => names
                .iter()
                .flat_map(|n| values.iter().map(move |v| format!("{n}{v}")))
                .collect(),
        };
    }
    out.extend(names);
    Ok(())
}

/// Expands the inside of one bracket group, `chars[from..to]`.
fn expand_group(input: &str, chars: &[char], from: usize, to: usize) -> Result<Vec<String>, NodeSetError> {
    if from == to {
        return Err(syntax(input, from.saturating_sub(1), "empty '[]'"));
    }
    let mut values = Vec::new();
    let mut total: u64 = 0;
    let mut item_start = from;
    for end in (from..=to).filter(|&j| j == to || chars.get(j) == Some(&',')) {
        let item: String = chars.get(item_start..end).unwrap_or(&[]).iter().collect();
        let (start, stop, step, width) = parse_item(input, &item, item_start)?;
        let count = (stop - start) / step + 1;
        total = total.saturating_add(count);
        if total > MAX_NAMES as u64 {
            return Err(NodeSetError::TooMany(input.to_string()));
        }
        let mut n = start;
        while n <= stop {
            values.push(format!("{n:0width$}"));
            n += step;
        }
        item_start = end + 1;
    }
    Ok(values)
}

/// `N`, `A-B` or `A-B/S` at character `at`: (start, stop, step, width).
fn parse_item(input: &str, item: &str, at: usize) -> Result<(u64, u64, u64, usize), NodeSetError> {
    if item.is_empty() {
        return Err(syntax(input, at.saturating_sub(1), "empty range in '[...]'"));
    }
    // Point at the first character that cannot be part of a range.
    let mut seen_dash = false;
    let mut seen_slash = false;
    for (k, c) in item.chars().enumerate() {
        let ok = match c {
            '0'..='9' => true,
            '-' if !seen_dash && !seen_slash && k > 0 => {
                seen_dash = true;
                true
            }
            '/' if seen_dash && !seen_slash => {
                seen_slash = true;
                true
            }
            _ => false,
        };
        if !ok {
            let reason = if c.is_alphabetic() {
                "only digits make ranges in a node set (ClusterShell has no letter ranges; list the names, e.g. esxa,esxb)"
            } else {
                "expected a digit, '-' or '/STEP' in a range"
            };
            return Err(syntax(input, at + k, reason));
        }
    }
    let (range, step) = match item.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (item, None),
    };
    let (a, b) = range.split_once('-').unwrap_or((range, range));
    let b_at = at + a.chars().count() + 1;
    let number = |text: &str, pos: usize| -> Result<u64, NodeSetError> {
        if text.is_empty() {
            return Err(syntax(input, pos, "missing number"));
        }
        text.parse::<u64>()
            .map_err(|_| syntax(input, pos, format!("{text} is too large")))
    };
    let start = number(a, at)?;
    let stop = number(b, b_at)?;
    if stop < start {
        return Err(syntax(input, at, format!("the range {range} runs backwards")));
    }
    let step = match step {
        Some(s) => {
            let pos = at + range.chars().count() + 1;
            let n = number(s, pos)?;
            if n == 0 {
                return Err(syntax(input, pos, "a step of 0"));
            }
            n
        }
        None => 1,
    };
    // A bound written with a leading zero fixes the width, as in ClusterShell.
    let width = if a.len() > 1 && a.starts_with('0') { a.len() } else { 0 };
    Ok((start, stop, step, width))
}

/// Folds names into a node set string: `esx01..esx20, db1` → `esx[01-20],db1`. Names are
/// grouped on their last run of digits; padding is kept (`esx09,esx10` folds to
/// `esx[09-10]`, `esx9,esx10` to `esx[9-10]`, never mixing the two). Groups come in
/// first-seen order; [`expand`] of the result gives the same names (duplicates removed).
pub fn fold<S: AsRef<str>>(names: &[S]) -> String {
    // (prefix, suffix) → numbers as written; order of first appearance.
    let mut groups: Vec<((String, String), Vec<String>)> = Vec::new();
    let mut plain: Vec<(usize, String)> = Vec::new();
    let mut order: Vec<(usize, bool)> = Vec::new(); // index into groups or plain
    for name in names {
        let name = name.as_ref();
        // Names that would not expand back as themselves are listed literally by the
        // caller's quoting; brackets and commas cannot be folded.
        let foldable = !name.contains(['[', ']', ',']);
        match last_number(name).filter(|_| foldable) {
            Some((prefix, digits, suffix)) => {
                let key = (prefix.to_string(), suffix.to_string());
                match groups.iter_mut().position(|(k, _)| *k == key) {
                    Some(i) => {
                        if let Some((_, v)) = groups.get_mut(i) {
                            v.push(digits.to_string());
                        }
                    }
                    None => {
                        groups.push((key, vec![digits.to_string()]));
                        order.push((groups.len() - 1, true));
                    }
                }
            }
            None => {
                if !plain.iter().any(|(_, p)| p == name) {
                    plain.push((plain.len(), name.to_string()));
                    order.push((plain.len() - 1, false));
                }
            }
        }
    }
    let mut parts = Vec::new();
    for (i, is_group) in order {
        if is_group {
            if let Some(((prefix, suffix), digits)) = groups.get(i) {
                parts.push(fold_group(prefix, suffix, digits));
            }
        } else if let Some((_, name)) = plain.get(i) {
            parts.push(name.clone());
        }
    }
    parts.join(",")
}

/// `esx01.lab` → (`esx`, `01`, `.lab`): the last run of ASCII digits, not counting a
/// `:port` at the end (`esx01:2222` folds on `01`).
fn last_number(name: &str) -> Option<(&str, &str, &str)> {
    let body_end = match name.rsplit_once(':') {
        Some((head, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && !head.contains(':') => {
            head.len()
        }
        _ => name.len(),
    };
    let end = name.get(..body_end)?.rfind(|c: char| c.is_ascii_digit())? + 1;
    let start = name
        .get(..end)?
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    let digits = name.get(start..end)?;
    // A number too large for u64 cannot be a range bound.
    digits.parse::<u64>().ok()?;
    Some((name.get(..start)?, digits, name.get(end..)?))
}

fn fold_group(prefix: &str, suffix: &str, digits: &[String]) -> String {
    let mut values: Vec<(u64, &str)> = digits
        .iter()
        .filter_map(|d| Some((d.parse::<u64>().ok()?, d.as_str())))
        .collect();
    values.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.len().cmp(&b.1.len())));
    values.dedup_by(|a, b| a.1 == b.1);
    if let [(_, only)] = values.as_slice() {
        return format!("{prefix}{only}{suffix}");
    }
    // A form written with a leading zero has its length as width; any other form fits
    // width 0 and, rendered the same, a padded run of its own length (`09-10`).
    // Runs: (width, first, last, first_text, last_text).
    let mut runs: Vec<(usize, u64, u64, String, String)> = Vec::new();
    for (n, text) in values {
        let padded = text.len() > 1 && text.starts_with('0');
        let widths = if padded { vec![text.len()] } else { vec![text.len(), 0] };
        // The padded run first: `09,10` reads as `09-10`.
        let found = widths.iter().find_map(|want| {
            runs.iter().position(|(w, _, last, _, _)| {
                w == want && last.checked_add(1) == Some(n) && format!("{n:0w$}", w = *w) == text
            })
        });
        let extend = found.and_then(|i| runs.get_mut(i));
        match extend {
            Some((_, _, last, _, last_text)) => {
                *last = n;
                *last_text = text.to_string();
            }
            None => runs.push((
                if padded { text.len() } else { 0 },
                n,
                n,
                text.to_string(),
                text.to_string(),
            )),
        }
    }
    runs.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    let body: Vec<String> = runs
        .iter()
        .map(|(_, first, last, first_text, last_text)| {
            if first == last {
                first_text.clone()
            } else {
                format!("{first_text}-{last_text}")
            }
        })
        .collect();
    format!("{prefix}[{}]{suffix}", body.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(s: &str) -> Vec<String> {
        expand(s).unwrap()
    }

    #[test]
    fn clustershell_syntax() {
        assert_eq!(names("esx01,esx02"), ["esx01", "esx02"]);
        assert_eq!(names("esx[1-9/4]"), ["esx1", "esx5", "esx9"]);
        assert_eq!(names("esx[01-10/3]"), ["esx01", "esx04", "esx07", "esx10"]);
        assert_eq!(names("esx[1-2,7],db[1-2]"), ["esx1", "esx2", "esx7", "db1", "db2"]);
        assert_eq!(
            names("r[1-2]n[01-02].lab"),
            ["r1n01.lab", "r1n02.lab", "r2n01.lab", "r2n02.lab"]
        );
        assert_eq!(names("[fe80::1]:22"), ["[fe80::1]:22"]);
        assert_eq!(names("root@esx[1-2]:2222"), ["root@esx1:2222", "root@esx2:2222"]);
    }

    #[test]
    fn errors_point_at_the_character() {
        let err = |s: &str| match expand(s) {
            Err(NodeSetError::Syntax(e)) => e,
            other => panic!("{s}: {other:?}"),
        };
        let e = err("esx[a-c]");
        assert_eq!(e.at, 4);
        assert!(e.reason.contains("letter"), "{e}");
        assert_eq!(err("esx[1-3").at, 3);
        assert_eq!(err("esx1-3]").at, 6);
        assert_eq!(err("esx[5-1]").at, 4);
        assert_eq!(err("esx[1-9/0]").at, 8);
        assert_eq!(err("esx01,,esx02").at, 6);
        assert_eq!(err("esx[1-x]").at, 6);
        assert_eq!(err("esx[]").at, 3);
        let shown = err("esx[1-3,b]").to_string();
        assert_eq!(shown.lines().nth(1), Some("    esx[1-3,b]"));
        assert_eq!(shown.lines().nth(2), Some("            ^"), "{shown}");
        assert!(matches!(expand("esx[1-99999]"), Err(NodeSetError::TooMany(_))));
        assert!(matches!(expand("a[1-200]b[1-200]"), Err(NodeSetError::TooMany(_))));
    }

    #[test]
    fn folding_reads_like_clush() {
        let hosts: Vec<String> = (1..=40).map(|n| format!("esx{n:02}")).collect();
        assert_eq!(fold(&hosts), "esx[01-40]");
        assert_eq!(fold(&["esx01", "esx02", "esx05", "db1"]), "esx[01-02,05],db1");
        assert_eq!(fold(&["esx9", "esx10", "esx11"]), "esx[9-11]");
        assert_eq!(fold(&["esx09", "esx10", "esx9"]), "esx[9,09-10]");
        assert_eq!(fold(&["esx01"]), "esx01");
        assert_eq!(fold(&["bastion", "esx1.lab", "esx2.lab"]), "bastion,esx[1-2].lab");
        assert_eq!(fold(&["esx01:2222", "esx02:2222"]), "esx[01-02]:2222");
    }

    proptest! {
        /// Folding then expanding gives back the same names (as a set).
        #[test]
        fn fold_round_trips(nums in proptest::collection::vec((0u64..300, 0usize..4), 1..40), prefix in "[a-z]{1,4}") {
            let names: Vec<String> = nums.iter().map(|(n, w)| format!("{prefix}{n:0w$}")).collect();
            let folded = fold(&names);
            let mut back = expand(&folded).unwrap();
            back.sort();
            back.dedup();
            let mut want = names.clone();
            want.sort();
            want.dedup();
            prop_assert_eq!(back, want, "folded: {}", folded);
        }
    }
}

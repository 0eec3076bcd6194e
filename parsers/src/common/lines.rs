//! Lines as sub-slices of the input (so errors keep their positions), and the whitespace
//! trims every parser runs on each of them.
use super::error::{end_of, offset_in};

/// The input's lines, each a sub-slice of it without its `\n` (and without the `\r` of a
/// CRLF ending). A final `\n` does not make an extra line; empty input has no lines.
///
/// An iterator over `memchr` (SIMD) instead of nom's `many0(line)`: the same lines, without
/// building a `Vec` first, and without `split_inclusive('\n')`'s memcmp per match.
pub(crate) fn line_iter(input: &str) -> impl Iterator<Item = &str> {
    let mut rest = input;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, next) = split_line(rest);
        rest = next;
        Some(line)
    })
}

/// The first line of `s` (without `\n` or `\r\n`) and what follows its `\n`.
pub(crate) fn split_line(s: &str) -> (&str, &str) {
    let (raw, next) = match memchr::memchr(b'\n', s.as_bytes()) {
        // `\n` is ASCII, so both sides are on character boundaries.
        Some(n) => (s.get(..n).unwrap_or(""), s.get(n + 1..).unwrap_or("")),
        None => (s, end_of(s)),
    };
    let line = match raw.len().checked_sub(1) {
        Some(n) if raw.as_bytes().last() == Some(&b'\r') => raw.get(..n).unwrap_or(raw),
        _ => raw,
    };
    (line, next)
}

pub(crate) fn is_blank(l: &str) -> bool {
    trim_start(l).is_empty()
}

/// The ASCII characters `char::is_whitespace` accepts. Not `u8::is_ascii_whitespace`,
/// which leaves out the vertical tab (0x0B) that `str::trim` removes.
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

/// `str::trim_start`, byte-wise while the characters are ASCII (the usual esxcli text);
/// a non-ASCII character at the edge is left to `str::trim_start`. Same result.
pub(crate) fn trim_start(s: &str) -> &str {
    let at = s.bytes().position(|b| !is_ascii_space(b)).unwrap_or(s.len());
    let rest = s.get(at..).unwrap_or("");
    if rest.as_bytes().first().is_some_and(|b| !b.is_ascii()) {
        rest.trim_start()
    } else {
        rest
    }
}

/// `str::trim_end`, with the same ASCII fast path as [`trim_start`].
pub(crate) fn trim_end(s: &str) -> &str {
    let end = s.bytes().rposition(|b| !is_ascii_space(b)).map_or(0, |p| p + 1);
    let kept = s.get(..end).unwrap_or("");
    if kept.as_bytes().last().is_some_and(|b| !b.is_ascii()) {
        kept.trim_end()
    } else {
        kept
    }
}

/// `str::trim`, with the same ASCII fast path as [`trim_start`].
pub(crate) fn trim(s: &str) -> &str {
    trim_end(trim_start(s))
}

/// Width of the leading whitespace, in bytes (spaces and tabs are both one byte).
pub(super) fn indent(l: &str) -> usize {
    l.len() - trim_start(l).len()
}

/// The part of `input` that follows `l` (a line of it), for errors "after this line".
pub(super) fn after_line<'a>(input: &'a str, l: &'a str) -> &'a str {
    let rest = offset_in(input, l)
        .and_then(|o| input.get(o + l.len()..))
        .unwrap_or_else(|| end_of(input));
    rest.strip_prefix("\r\n")
        .or_else(|| rest.strip_prefix('\n'))
        .unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_agree_with_str_on_every_whitespace_and_non_ascii_edge() {
        let cases = [
            "",
            " ",
            "\t a b \t",
            "\x0B x \x0B",
            "\x0C\r\n",
            "\u{a0}x\u{a0}",
            " \u{2003} x \u{3000} ",
            "é ",
            " é",
            "x\u{85}",
            "\u{85}",
            "a\u{a0} \t",
            " \u{200b}x",
        ];
        for s in cases {
            assert_eq!(trim(s), s.trim(), "{s:?}");
            assert_eq!(trim_start(s), s.trim_start(), "{s:?}");
            assert_eq!(trim_end(s), s.trim_end(), "{s:?}");
            assert_eq!(is_blank(s), s.trim().is_empty(), "{s:?}");
        }
    }

    fn lines(input: &str) -> Vec<&str> {
        line_iter(input).collect()
    }

    #[test]
    fn line_iter_gives_the_lines_nom_gave() {
        assert_eq!(lines(""), Vec::<&str>::new());
        assert_eq!(lines("\n"), [""]);
        assert_eq!(lines("a\r\nb\n\nc"), ["a", "b", "", "c"]);
        assert_eq!(lines("a\r\r\n\r"), ["a\r", ""]);
    }
}

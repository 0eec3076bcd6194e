//! Escaping for the page. Every string that came from a host or from vCenter (host, VM,
//! switch and uplink names, versions, outputs) and every string of the tool's own that
//! quotes one (summaries, reasons, remedies) goes through here before it reaches the
//! page: as text of an element (HTML or SVG) or as the value of a double-quoted
//! attribute. Nothing from a host is ever written into the style sheet, the script, an
//! element or attribute name, or a URL.
//!
//! Besides the five characters markup gives a meaning to, control and bidirectional
//! characters are made visible (`\u{202e}`): a host must not reorder what the engineer
//! reads (`U+202E` makes `exe.txt` look like `txt.exe`), as in the terminal report.
use crate::report::human::is_bidi_control;

/// Text for the content of an element: `&`, `<`, `>`, both quotes escaped (so the same
/// text is also safe in a double- or single-quoted attribute), control and bidi
/// characters shown as escapes. Newlines and tabs stay (a `<pre>` shows them).
pub(super) fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    push(&mut out, s);
    out
}

/// Appends `s` escaped as [`text`] does.
pub(super) fn push(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() || is_bidi_control(c) => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
}

/// `s` shortened to at most `max` characters for a label in the picture, the cut marked
/// with `…`; the whole text goes in the element's `<title>`.
pub(super) fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let kept: String = s.chars().take(max.saturating_sub(1)).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_becomes_text() {
        assert_eq!(
            text(r#"<img src=x onerror="alert(1)">&amp;'</script>"#),
            "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;amp;&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn control_and_bidi_characters_are_shown_not_obeyed() {
        assert_eq!(text("a\u{1b}[31mb\u{202e}c\nd"), "a\\u{1b}[31mb\\u{202e}c\nd");
        assert_eq!(text("\0"), "\\u{0}");
    }

    #[test]
    fn shortening_keeps_short_text_and_marks_the_cut() {
        assert_eq!(shorten("esx01", 10), "esx01");
        assert_eq!(shorten("abcdefghijkl", 5), "abcd…");
    }
}

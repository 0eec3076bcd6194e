//! Text utilities: cleaning host text, wrapping to a width, emitting indented lines.
use super::*;

pub(super) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Text that came from a host (names, error messages, vsish output) with its control and
/// bidi characters made visible: a hostile or broken host must not be able to send escape
/// sequences to the admin's terminal or reorder what is read. Newlines stay, table cells
/// use them. Text longer than [`MAX_HOST_TEXT`] characters is shortened, saying so.
pub(super) fn clean(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    let mut cut = false;
    for (count, c) in chars.by_ref().enumerate() {
        if count == MAX_HOST_TEXT {
            cut = true;
            break;
        }
        if (c.is_control() && c != '\n') || is_bidi_control(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if cut {
        let rest = chars.count();
        // Counting from the text actually cut: this character is the first one left out.
        let _ = write!(out, "… ({} more characters, whole in --format json)", rest + 1);
    }
    out
}

/// A folded host set (our own text, not a host's): control and bidi characters escaped
/// like [`clean`], but never shortened, so that it pastes back into the command line.
pub(super) fn clean_set(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if (c.is_control() && c != '\n') || is_bidi_control(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Writes `text` wrapped to `width`: the first line after `prefix` (whose display width
/// is `prefix_width`; it may hold colour codes), the others indented by `indent`. Each
/// wrapped piece is painted with `style`.
pub(super) fn emit(
    out: &mut String,
    prefix: &str,
    prefix_plain: &str,
    indent: usize,
    text: &str,
    width: usize,
    style: impl Fn(&str) -> String,
) {
    let first_room = width.saturating_sub(prefix_plain.width()).max(1);
    let room = width.saturating_sub(indent).max(1);
    let mut first = true;
    for paragraph in text.split('\n') {
        for piece in wrap(paragraph, if first { first_room } else { room }, room) {
            if first {
                let _ = writeln!(out, "{prefix}{}", style(&piece));
                first = false;
            } else {
                let _ = writeln!(out, "{}{}", " ".repeat(indent), style(&piece));
            }
        }
    }
    if first {
        let _ = writeln!(out, "{prefix}");
    }
}

/// Greedy word wrap by display width; a node set longer than a line breaks after a comma,
/// any other word longer than a line is cut.
pub(super) fn wrap(text: &str, first: usize, rest: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut room = first;
    for word in text.split(' ') {
        let sep = usize::from(!line.is_empty());
        if line.width() + sep + word.width() <= room {
            if sep == 1 {
                line.push(' ');
            }
            line.push_str(word);
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
            room = rest;
        }
        // A node set too long for a line breaks after one of its commas: every line
        // then pastes back into the command line.
        if word.width() > room {
            if let Some(mut pieces) = crate::nodeset::break_word(word, room, rest) {
                line = pieces.pop().unwrap_or_default();
                lines.extend(pieces);
                room = rest;
                continue;
            }
        }
        let mut word = word;
        while word.width() > room {
            let mut cut = 0;
            let mut w = 0;
            for (i, c) in word.char_indices() {
                let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                if w + cw > room {
                    break;
                }
                w += cw;
                cut = i + c.len_utf8();
            }
            if cut == 0 {
                break;
            }
            lines.push(word.get(..cut).unwrap_or("").to_string());
            word = word.get(cut..).unwrap_or("");
            room = rest;
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

//! Text utilities: escaping and shortening host text, wrapping to a width, emitting
//! indented lines.
//!
//! Two kinds of text reach the report. The tool's own words (summaries, remedies, advice,
//! reasons, error messages, hints) are escaped and wrapped, never cut: a sentence that
//! loses its end (`then reboot`) misleads. A field that holds nothing but what a host sent
//! (a VM, switch or uplink name, the ESXi version string) is escaped and, beyond
//! [`MAX_HOST_TEXT`] characters, shortened, saying so: JSON keeps it whole.
use super::*;

/// Bidirectional-text controls: they reorder what the admin reads (`U+202E` makes
/// `exe.txt` look like `txt.exe`), so they are shown escaped like control characters.
pub(super) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Text with its control and bidi characters made visible: a hostile or broken host must
/// not be able to send escape sequences to the admin's terminal or reorder what is read
/// (`U+202E` makes `exe.txt` look like `txt.exe`). Newlines stay, table cells use them.
/// Nothing is left out: this is for the tool's own text, which may quote a host.
pub(super) fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    out
}

fn push_escaped(out: &mut String, c: char) {
    if (c.is_control() && c != '\n') || is_bidi_control(c) {
        out.extend(c.escape_default());
    } else {
        out.push(c);
    }
}

/// A field that came from a host as it is (a VM name, a switch name, the version string):
/// escaped as [`clean`] does and, beyond [`MAX_HOST_TEXT`] characters, shortened with a
/// note saying how much is left out and where to read it whole.
pub(super) fn host_text(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    for (count, c) in chars.by_ref().enumerate() {
        if count == MAX_HOST_TEXT {
            // Counting from the text actually cut: this character is the first one left out.
            let rest = chars.count() + 1;
            let _ = write!(out, "… ({rest}{SHORTENED}");
            break;
        }
        push_escaped(&mut out, c);
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
    let mut first = true;
    for paragraph in text.split('\n') {
        // A paragraph's own leading spaces stay (they align a caret under a node set).
        let body = paragraph.trim_start_matches(' ');
        let lead = paragraph.len() - body.len();
        let first_room = width.saturating_sub(prefix_plain.width() + lead).max(1);
        let room = width.saturating_sub(indent + lead).max(1);
        let pad = " ".repeat(lead);
        for piece in wrap(body, if first { first_room } else { room }, room) {
            if first {
                let _ = writeln!(out, "{prefix}{pad}{}", style(&piece));
                first = false;
            } else {
                let _ = writeln!(out, "{}{pad}{}", " ".repeat(indent), style(&piece));
            }
        }
    }
    if first {
        let _ = writeln!(out, "{prefix}");
    }
}

/// Writes a command meant to be copied and run, as [`emit_command`] does; one wider than
/// the whole terminal is continued on the next lines, broken only at a space outside
/// quotes with the shell's continuation (`continuation`: ` \\` for sh, `` ` `` for
/// PowerShell) ending each line but the last, so it still runs as pasted and no word is
/// cut.
pub(super) fn emit_continued_command(
    out: &mut String,
    label: &str,
    indent: usize,
    command: &str,
    width: usize,
    continuation: &str,
    style: impl Fn(&str) -> String,
) {
    let command = clean(&command.replace('\n', " "));
    if command.width() + 4 <= width || width < 20 {
        return emit_command(out, label, label, indent, &command, width, style);
    }
    let _ = writeln!(out, "{}", label.trim_end());
    let words = shell_words(&command);
    // Every line starts at one column, left enough that the longest word fits after it.
    let longest = words.iter().map(|w| w.width()).max().unwrap_or(0);
    let lead = indent
        .min(width / 3)
        .min(width.saturating_sub(longest + continuation.width()));
    let room = width - lead - continuation.width();
    let mut line = String::new();
    for word in words {
        if !line.is_empty() && line.width() + 1 + word.width() > room {
            let _ = writeln!(out, "{}{}", " ".repeat(lead), style(&format!("{line}{continuation}")));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let _ = writeln!(out, "{}{}", " ".repeat(lead), style(&line));
}

/// The words of a command line split at the spaces outside single and double quotes.
fn shell_words(command: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut quote: Option<char> = None;
    let mut start = 0;
    for (i, c) in command.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, ' ') => {
                if i > start {
                    words.push(&command[start..i]);
                }
                start = i + 1;
            }
            (None, _) => {}
        }
    }
    if start < command.len() {
        words.push(&command[start..]);
    }
    words
}

/// Writes a command meant to be copied and run: never wrapped, so a triple-click copies
/// all of it. After `label` on one line when it fits the width there, else on the next
/// line, `indent` columns in (else 4, else at the margin); only a
/// command wider than the whole terminal is left wider than it: a command split over two
/// lines would run half of it.
pub(super) fn emit_command(
    out: &mut String,
    label: &str,
    label_plain: &str,
    indent: usize,
    command: &str,
    width: usize,
    style: impl Fn(&str) -> String,
) {
    let command = command.replace('\n', " ");
    let command = clean(&command);
    if label_plain.width() + command.width() <= width {
        let _ = writeln!(out, "{label}{}", style(&command));
        return;
    }
    let _ = writeln!(out, "{}", label.trim_end());
    let lead = [indent, 4, 0]
        .into_iter()
        .find(|lead| lead + command.width() <= width)
        .unwrap_or(0);
    let _ = writeln!(out, "{}{}", " ".repeat(lead), style(&command));
}

/// Greedy word wrap by display width. A node set longer than a line breaks after one of
/// its commas; any other word longer than a line is broken across lines (never dropped);
/// no line starts or ends with the space the break replaced.
pub(super) fn wrap(text: &str, first: usize, rest: usize) -> Vec<String> {
    wrap_words(text, first, rest, true)
}

/// Ends each line of a name broken across lines but its last: the name goes on.
pub(super) const CONTINUED: char = '↩';

/// A list of names wrapped to `width` (a table cell): the names are `names` joined by
/// `,`, and a line breaks only after a `,`, never inside a name. A node set wider than a
/// line breaks into node sets over the same hosts; any other name wider than a line is
/// broken (at its spaces where it has them), each of its lines but the last ending in
/// [`CONTINUED`]. `tail` (a count) follows the last name, on its line when it fits.
pub(super) fn wrap_names(names: &[String], tail: Option<&str>, width: usize) -> Vec<String> {
    let width = width.max(2);
    let mut lines = Vec::new();
    let mut line = String::new();
    let last = names.len().saturating_sub(1);
    for (i, name) in names.iter().enumerate() {
        let piece = if i < last { format!("{name},") } else { name.clone() };
        if line.width() + piece.width() <= width {
            line.push_str(&piece);
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        if piece.width() <= width {
            line = piece;
            continue;
        }
        // A name shortened for the report ends in our note of how much is left out: the
        // note is not the name's, so it wraps as words, unmarked.
        let (name, note) = shortened_note(&piece);
        let mut pieces = pvrdma_nodeset::break_word(name, width, width).unwrap_or_else(|| {
            let mut pieces = wrap_words(name, width - 1, width - 1, true);
            let continued = pieces.len().saturating_sub(1);
            for p in pieces.iter_mut().take(continued) {
                p.push(CONTINUED);
            }
            pieces
        });
        line = pieces.pop().unwrap_or_default();
        lines.extend(pieces);
        if let Some(note) = note {
            continue_words(&mut lines, &mut line, note, width);
        }
    }
    if let Some(tail) = tail {
        if line.is_empty() || line.width() + 1 + tail.width() > width {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            let mut pieces = wrap(tail, width, width);
            line = pieces.pop().unwrap_or_default();
            lines.extend(pieces);
        } else {
            line.push(' ');
            line.push_str(tail);
        }
    }
    lines.push(line);
    lines
}

/// What [`host_text`] writes after the `… (N` of a field it shortened.
const SHORTENED: &str = " more characters, whole in --format json)";

/// A name as [`host_text`] wrote it: the name, and when it was shortened, the note it
/// ends with (`(N more characters, …)` and what follows it, a `,` in a list).
fn shortened_note(name: &str) -> (&str, Option<&str>) {
    const CUT: &str = "… (";
    if let Some(at) = name.rfind(CUT) {
        let count = &name[at + CUT.len()..];
        let digits = count.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && count[digits..].starts_with(SHORTENED) {
            let note = at + CUT.len() - 1;
            return (&name[..note - 1], Some(&name[note..]));
        }
    }
    (name, None)
}

/// `text` as words after `line`: on it as far as they fit, then on lines of their own.
fn continue_words(lines: &mut Vec<String>, line: &mut String, text: &str, width: usize) {
    let room = width.saturating_sub(line.width() + 1);
    let first_word = text.split(' ').next().unwrap_or("").width();
    let joins = !line.is_empty() && first_word <= room;
    if !joins && !line.is_empty() {
        lines.push(std::mem::take(line));
    }
    for (i, piece) in wrap(text, if joins { room } else { width }, width)
        .into_iter()
        .enumerate()
    {
        if i > 0 {
            lines.push(std::mem::take(line));
        } else if joins {
            line.push(' ');
        }
        line.push_str(&piece);
    }
}

/// Lines of the tool's own text that name things to copy (a URL, a path, a certificate
/// thumbprint): wrapped to `width` as [`stderr_message`] wraps, the first line after
/// `prefix`, the others indented by `indent` columns, but no word is ever cut: one longer
/// than a line stands on a line of its own, whole, even wider than the terminal, so that
/// a copy of it works. One paragraph; control characters are escaped.
pub fn wrap_whole_words(prefix: &str, indent: usize, text: &str, width: usize) -> String {
    let width = width.max(MIN_WIDTH);
    let first = width.saturating_sub(prefix.width()).max(1);
    let rest = width.saturating_sub(indent).max(1);
    let mut out = String::new();
    for (i, piece) in wrap_words(&clean(text), first, rest, false).iter().enumerate() {
        let lead = if i == 0 { prefix.to_string() } else { " ".repeat(indent) };
        let _ = writeln!(out, "{lead}{piece}");
    }
    out
}

/// [`wrap`], and with `cut` false, [`wrap_whole_words`]'s way with a word longer than a line.
fn wrap_words(text: &str, first: usize, rest: usize, cut: bool) -> Vec<String> {
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
            lines.push(std::mem::take(&mut line).trim_end().to_string());
            room = rest;
        }
        if word.is_empty() {
            // A run of spaces at a break: the break replaces it.
            continue;
        }
        if !cut && word.width() > room {
            lines.push(word.to_string());
            room = rest;
            continue;
        }
        // A node set too long for a line breaks after one of its commas: every line
        // then pastes back into the command line.
        if word.width() > room {
            if let Some(mut pieces) = pvrdma_nodeset::break_word(word, room, rest) {
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

/// A message for stderr (an error, a warning, a notice), wrapped to `width` (the
/// terminal stderr is on, or `$COLUMNS`, as the front end finds it): the first line after
/// `prefix`, the others indented by four columns. With `None` (stderr piped to a file or a
/// program) it stays as written, one line per line of the message, for grep and log
/// collectors.
pub fn stderr_message(prefix: &str, message: &str, width: Option<usize>) -> String {
    let mut out = String::new();
    let width = width.map_or(usize::MAX, |w| w.max(MIN_WIDTH));
    emit(&mut out, prefix, prefix, 4, &clean(message), width, |t| t.to_string());
    out
}

/// Text for stderr that already has its own lines (a usage error with its `Usage:` line):
/// each line wrapped on its own as [`stderr_message`] does, continuations indented four
/// columns past its own indent.
pub fn stderr_lines(text: &str, width: Option<usize>) -> String {
    let mut out = String::new();
    let width = width.map_or(usize::MAX, |w| w.max(MIN_WIDTH));
    for line in text.lines() {
        emit(&mut out, "", "", 4, &clean(line), width, |t| t.to_string());
    }
    out
}

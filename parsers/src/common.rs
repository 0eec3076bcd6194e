//! Grammar pieces every esxcli and vsish parser shares: lines, the fixed-width table, the
//! name-line record list, `Key: value` structures and the `==> key <==` batch sections.
//!
//! Everything works on sub-slices of the one input the entry point was given, so an error
//! anywhere still points at the right line and column of the original output. That is also
//! why the internal error type [`Fail`] keeps a slice, not an owned string: it is converted
//! to the public [`ParseError`] exactly once, in [`run`].
use crate::ParseError;
use nom::bytes::complete::{take_while, take_while1};
use nom::combinator::all_consuming;
use nom::error::{ContextError, ErrorKind, FromExternalError};
use nom::multi::many1;
use nom::sequence::terminated;
use nom::{IResult, Parser};

/// Where parsing stopped and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fail<'a> {
    /// A sub-slice of the input starting at the offending spot.
    pub at: &'a str,
    pub expected: &'static str,
    /// Set once a `context` (or an explicit [`fail`]) named the expectation; inner ones win
    /// because they are the most precise.
    named: bool,
}

impl<'a> nom::error::ParseError<&'a str> for Fail<'a> {
    fn from_error_kind(input: &'a str, _kind: ErrorKind) -> Self {
        // nom's own kinds (`TakeUntil`, `Digit`) mean nothing to a user; every parser here
        // wraps its grammar pieces in a `context` that names the expectation instead.
        Fail {
            at: input,
            expected: "well-formed command output",
            named: false,
        }
    }

    fn append(_: &'a str, _: ErrorKind, other: Self) -> Self {
        other
    }
}

impl<'a> ContextError<&'a str> for Fail<'a> {
    fn add_context(_input: &'a str, ctx: &'static str, mut other: Self) -> Self {
        if !other.named {
            other.expected = ctx;
            other.named = true;
        }
        other
    }
}

impl<'a, E> FromExternalError<&'a str, E> for Fail<'a> {
    fn from_external_error(input: &'a str, kind: ErrorKind, _e: E) -> Self {
        <Self as nom::error::ParseError<&'a str>>::from_error_kind(input, kind)
    }
}

pub(crate) type PResult<'a, T> = IResult<&'a str, T, Fail<'a>>;

/// A failure at `at` that says what was expected.
pub(crate) fn fail<'a>(at: &'a str, expected: &'static str) -> nom::Err<Fail<'a>> {
    nom::Err::Error(Fail {
        at,
        expected,
        named: true,
    })
}

/// The empty slice at the very end of `input` (for "the output ended too early").
pub(crate) fn end_of(input: &str) -> &str {
    input.get(input.len()..).unwrap_or("")
}

/// Byte offset of `part` inside `whole`, when `part` really is a sub-slice of it.
pub(crate) fn offset_in(whole: &str, part: &str) -> Option<usize> {
    let off = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (off + part.len() <= whole.len()).then_some(off)
}

/// Runs a whole-input parser and converts its failure, once, into a [`ParseError`].
pub(crate) fn run<'a, T, P>(command: &'static str, input: &'a str, parser: P) -> Result<T, ParseError>
where
    P: Parser<&'a str, Output = T, Error = Fail<'a>>,
{
    if let Some(e) = error_text(input) {
        return Err(to_parse_error(command, input, &e));
    }
    match all_consuming(parser).parse_complete(input) {
        Ok((_, value)) => Ok(value),
        Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => Err(to_parse_error(command, input, &e)),
        Err(nom::Err::Incomplete(_)) => Err(to_parse_error(
            command,
            input,
            &Fail {
                at: end_of(input),
                expected: "more output (it ended early)",
                named: true,
            },
        )),
    }
}

/// Output that is an error message instead of data: esxcli's `Error: ...` or the shell's
/// `-sh: esxcli: not found`. Never let those pass as (empty) data.
pub(crate) fn error_text(input: &str) -> Option<Fail<'_>> {
    let mut filled = line_iter(input).filter(|l| !is_blank(l));
    let first = filled.next()?;
    let t = first.trim_start();
    // A record list whose first record is named `Error: ...` (a VM can be called that) is
    // followed by indented `Key: value` fields; esxcli's own error is not.
    let record_follows = filled
        .next()
        .is_some_and(|l| l.starts_with([' ', '\t']) && key_value(l).is_ok());
    if (t.starts_with("Error:") || t.starts_with("Error ")) && !record_follows {
        return Some(Fail {
            at: t,
            expected: "command output, not an esxcli `Error:` message",
            named: true,
        });
    }
    let shell = ["-sh:", "sh:", "/bin/sh:", "-ash:", "ash:"];
    if shell.iter().any(|p| t.starts_with(p)) && t.contains("not found") {
        return Some(Fail {
            at: t,
            expected: "command output, not a shell `not found` error (is this an ESXi host?)",
            named: true,
        });
    }
    None
}

/// Renders a [`Fail`] as the public error: 1-based line and column, the offending line.
pub(crate) fn to_parse_error(command: &'static str, input: &str, e: &Fail<'_>) -> ParseError {
    let off = offset_in(input, e.at).unwrap_or(0);
    let before = input.get(..off).unwrap_or("");
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    let line = before.matches('\n').count() + 1;
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    let snippet = input
        .get(line_start..)
        .and_then(|s| s.split('\n').next())
        .unwrap_or("")
        .trim_end_matches('\r')
        .chars()
        .take(80)
        .collect();
    ParseError {
        command,
        line,
        column,
        expected: e.expected,
        snippet,
    }
}

// ---------------------------------------------------------------------------------------
// Lines

/// The input's lines, each a sub-slice of it without its `\n` (and without the `\r` of a
/// CRLF ending). A final `\n` does not make an extra line.
pub(crate) fn line_iter(input: &str) -> impl Iterator<Item = &str> {
    input.split_inclusive('\n').map(|l| {
        let l = l.strip_suffix('\n').unwrap_or(l);
        l.strip_suffix('\r').unwrap_or(l)
    })
}

/// [`line_iter`], collected.
pub(crate) fn lines(input: &str) -> Vec<&str> {
    line_iter(input).collect()
}

pub(crate) fn is_blank(l: &str) -> bool {
    trim(l).is_empty()
}

/// `str::trim`, with the ASCII fast path for the (usual) ASCII text: same result.
pub(crate) fn trim(s: &str) -> &str {
    if s.is_ascii() {
        s.trim_ascii()
    } else {
        s.trim()
    }
}

/// `str::trim_end`, with the same ASCII fast path.
pub(crate) fn trim_end(s: &str) -> &str {
    if s.is_ascii() {
        s.trim_ascii_end()
    } else {
        s.trim_end()
    }
}

/// Width of the leading whitespace, in bytes (spaces and tabs are both one byte).
fn indent(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// The part of `input` that follows `l` (a line of it), for errors "after this line".
fn after_line<'a>(input: &'a str, l: &'a str) -> &'a str {
    let rest = offset_in(input, l)
        .and_then(|o| input.get(o + l.len()..))
        .unwrap_or_else(|| end_of(input));
    rest.strip_prefix("\r\n")
        .or_else(|| rest.strip_prefix('\n'))
        .unwrap_or(rest)
}

// ---------------------------------------------------------------------------------------
// Values

/// `true`/`false` (esxcli) → bool; anything else is unknown, not an error.
pub(crate) fn bool_value(v: &str) -> Option<bool> {
    match v.trim() {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// `1`/`0` (vsish) → bool.
pub(crate) fn bool01(v: &str) -> Option<bool> {
    match v.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

pub(crate) fn non_empty(v: &str) -> Option<String> {
    let v = v.trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// Like [`non_empty`], and `N/A` is "none" too (esxcli prints it for unset references).
pub(crate) fn non_na(v: &str) -> Option<String> {
    non_empty(v).filter(|s| !s.eq_ignore_ascii_case("N/A"))
}

/// A `, `-separated esxcli list (`Uplinks: vmnic3, vmnic2`); elements may contain spaces.
pub(crate) fn list_value(v: &str) -> Vec<String> {
    v.split(',').filter_map(non_empty).collect()
}

// ---------------------------------------------------------------------------------------
// Key: value

/// `Key: value`, `Key: ` or `Key:` after any indentation. Splits on the first `": "`
/// because values (paths, names) contain colons, brackets and spaces.
pub(crate) fn key_value(l: &str) -> PResult<'_, (&str, &str)> {
    let i = l.trim_start_matches([' ', '\t']);
    // The first `": "`, found byte-wise (the pattern searcher costs more than short lines).
    let bytes = i.as_bytes();
    let mut from = 0;
    while let Some(c) = bytes.get(from..).and_then(|b| b.iter().position(|&x| x == b':')) {
        let at = from + c;
        if bytes.get(at + 1) == Some(&b' ') {
            let (key, value) = (i.get(..at).unwrap_or(""), i.get(at + 2..).unwrap_or(""));
            if !is_blank(key) {
                return Ok((end_of(l), (trim_end(key), trim(value))));
            }
            break;
        }
        from = at + 1;
    }
    match i.trim_end().strip_suffix(':') {
        Some(key) if !key.trim().is_empty() => Ok((end_of(l), (key.trim_end(), ""))),
        _ => Err(fail(i, "a `Key: value` line")),
    }
}

/// One `Key: value` line of a structure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field<'a> {
    pub key: &'a str,
    pub value: &'a str,
    /// The whole line, for error positions.
    pub line: &'a str,
    /// Entries of a nested list (`DVPort:` in a vDS record), each a list of fields.
    pub children: Vec<Vec<Field<'a>>>,
}

/// Looks a field up by name; esxcli field names are matched exactly but case-blind, as
/// option paths and names already are on the host.
pub(crate) fn find<'f, 'a>(fields: &'f [Field<'a>], key: &str) -> Option<&'f Field<'a>> {
    fields.iter().find(|f| f.key.eq_ignore_ascii_case(key))
}

pub(crate) fn value<'a>(fields: &[Field<'a>], key: &str) -> Option<&'a str> {
    find(fields, key).map(|f| f.value)
}

/// A record of a structure list: the name line and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record<'a> {
    pub name: &'a str,
    pub name_line: &'a str,
    pub fields: Vec<Field<'a>>,
}

/// A list of structures (`vm process list`, `ip interface list`, `vswitch ... list`):
///
/// ```text
/// vmk1
///    Name: vmk1
///    DVPort:
///          Client: vmnic2
///       
///          Client: vmk1
/// ```
///
/// A record starts at an unindented line after a blank (or whitespace-only) line, or at
/// any unindented line once the record's fields are indented; so the name line and the
/// blank separator may both be missing where copies lost them, and pasted copies that lost
/// all indentation still split at blank lines. Deeper-indented lines belong to the nested
/// list of the field above them; whitespace-only lines (or a repeated key) start a new
/// entry of that list.
pub(crate) fn records(input: &str) -> PResult<'_, Vec<Record<'_>>> {
    let mut out: Vec<Record<'_>> = Vec::new();
    let mut separated = true;
    let mut base: Option<usize> = None;
    for l in line_iter(input) {
        if is_blank(l) {
            separated = true;
            continue;
        }
        let ind = indent(l);
        let starts_record = out.is_empty() || (ind == 0 && (separated || base.is_some_and(|b| b > 0)));
        if starts_record {
            if ind > 0 {
                return Err(fail(l, "a record name line (not indented)"));
            }
            out.push(Record {
                name: l.trim(),
                name_line: l,
                fields: Vec::with_capacity(12),
            });
            base = None;
            separated = false;
            continue;
        }
        let (_, (key, value)) = key_value(l)?;
        let field = Field {
            key,
            value,
            line: l.trim_start(),
            children: Vec::new(),
        };
        let Some(rec) = out.last_mut() else {
            return Err(fail(l, "a record name line (not indented)"));
        };
        push_field(&mut rec.fields, &mut base, ind, separated, field);
        separated = false;
    }
    Ok((end_of(input), out))
}

/// Adds a field at its nesting level (see [`records`]).
fn push_field<'a>(
    fields: &mut Vec<Field<'a>>,
    base: &mut Option<usize>,
    ind: usize,
    separated: bool,
    field: Field<'a>,
) {
    let b = *base.get_or_insert(ind);
    if ind > b {
        if let Some(parent) = fields.last_mut() {
            let new_entry = separated || parent.children.last().is_none_or(|e| find(e, field.key).is_some());
            if new_entry {
                parent.children.push(Vec::new());
            }
            if let Some(entry) = parent.children.last_mut() {
                entry.push(field);
                return;
            }
        }
    }
    fields.push(field);
}

/// Blocks of `Key: value` lines separated by blank lines, without name lines
/// (`network vm port list`, and the single structure of a `get` command).
pub(crate) fn blocks(input: &str) -> PResult<'_, Vec<Vec<Field<'_>>>> {
    let mut out: Vec<Vec<Field<'_>>> = Vec::new();
    let mut separated = true;
    for l in line_iter(input) {
        if is_blank(l) {
            separated = true;
            continue;
        }
        let (_, (key, value)) = key_value(l)?;
        let field = Field {
            key,
            value,
            line: l.trim_start(),
            children: Vec::new(),
        };
        match out.last_mut() {
            Some(block) if !separated && find(block, key).is_none() => block.push(field),
            _ => {
                // Room for a whole record: esxcli records have a dozen fields or fewer.
                let mut block = Vec::with_capacity(12);
                block.push(field);
                out.push(block);
            }
        }
        separated = false;
    }
    Ok((end_of(input), out))
}

/// A single structure (`system version get`, `firewall get`): every non-blank line is a
/// field, with 0..n leading spaces because copies from web pages lose the indent.
pub(crate) fn structure(input: &str) -> PResult<'_, Vec<Field<'_>>> {
    let mut out = Vec::new();
    for l in line_iter(input).filter(|l| !is_blank(l)) {
        let (_, (key, value)) = key_value(l)?;
        out.push(Field {
            key,
            value,
            line: l.trim_start(),
            children: Vec::new(),
        });
    }
    if out.is_empty() {
        return Err(fail(input, "a `Key: value` line"));
    }
    Ok((end_of(input), out))
}

// ---------------------------------------------------------------------------------------
// Tables

/// One cell: its text and where it starts (for errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cell<'a> {
    pub at: &'a str,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row<'a> {
    pub line: &'a str,
    pub cells: Vec<Cell<'a>>,
}

impl<'a> Row<'a> {
    /// The trimmed cell of column `col` ("" when the row is short).
    pub fn cell(&self, col: Option<usize>) -> &str {
        col.and_then(|c| self.cells.get(c)).map_or("", |c| c.text.as_str())
    }

    /// A cell that must not be empty (the row's key).
    pub fn required(&self, col: usize, expected: &'static str) -> Result<String, nom::Err<Fail<'a>>> {
        match self.cells.get(col) {
            Some(c) if !c.text.is_empty() => Ok(c.text.clone()),
            Some(c) => Err(fail(c.at, expected)),
            None => Err(fail(end_of(self.line), expected)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table<'a> {
    pub header_line: &'a str,
    pub headers: Vec<String>,
    pub rows: Vec<Row<'a>>,
}

impl<'a> Table<'a> {
    /// Index of the column with this header, if the table has it.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.headers.iter().position(|h| h.eq_ignore_ascii_case(name))
    }

    /// Index of a column the table cannot do without.
    pub fn require(&self, name: &str, expected: &'static str) -> Result<usize, nom::Err<Fail<'a>>> {
        self.column(name).ok_or_else(|| fail(self.header_line, expected))
    }
}

/// Start and end (character indices) of each dash run of the row under the header:
/// these, not whitespace, are the column boundaries.
fn dash_row(l: &str) -> PResult<'_, Vec<(usize, usize)>> {
    let blank = |c: char| c == ' ' || c == '\t';
    let (_, runs) = all_consuming(terminated(
        many1((take_while(blank), take_while1(|c| c == '-'))),
        take_while(blank),
    ))
    .parse_complete(l)?;
    let mut spans = Vec::new();
    let mut pos = 0;
    for (gap, dashes) in runs {
        let (gap, dashes): (&str, &str) = (gap, dashes);
        pos += gap.chars().count();
        let len = dashes.chars().count();
        spans.push((pos, pos + len));
        pos += len;
    }
    Ok((end_of(l), spans))
}

/// The sub-slice of `l` from character `from` to character `to` (`None` = end of line).
fn char_slice(l: &str, from: usize, to: Option<usize>) -> &str {
    // esxcli output is ASCII almost always: then characters are bytes.
    if l.is_ascii() {
        let end = to.map_or(l.len(), |t| t.min(l.len()));
        let start = from.min(l.len());
        return l.get(start..end.max(start)).unwrap_or("");
    }
    let byte = |n: usize| l.char_indices().nth(n).map_or(l.len(), |(b, _)| b);
    let start = byte(from);
    let end = to.map_or(l.len(), byte).max(start);
    l.get(start..end).unwrap_or("")
}

/// A trimmed cell as a sub-slice of the line, so errors can point into it.
fn cell_of(raw: &str) -> Cell<'_> {
    let t = trim(raw);
    let at = if t.is_empty() { end_of(raw) } else { t };
    Cell {
        at,
        text: t.to_string(),
    }
}

/// Cells of a tab-separated copy: a gap is any whitespace run holding a tab, or two or
/// more spaces (single spaces occur inside values and headers such as `Paired Uplink`).
fn tab_cells(l: &str) -> Vec<&str> {
    let mut cells = Vec::new();
    let mut start = None;
    let chars: Vec<(usize, char)> = l.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (b, c) = chars.get(i).copied().unwrap_or((l.len(), ' '));
        if c == ' ' || c == '\t' {
            let mut j = i;
            let mut has_tab = false;
            while let Some(&(_, cj)) = chars.get(j) {
                if cj != ' ' && cj != '\t' {
                    break;
                }
                has_tab |= cj == '\t';
                j += 1;
            }
            if has_tab || j - i >= 2 || j == chars.len() {
                if let Some(s) = start.take() {
                    cells.push(l.get(s..b).unwrap_or(""));
                }
            }
            i = j;
            continue;
        }
        if start.is_none() {
            start = Some(b);
        }
        i += 1;
    }
    if let Some(s) = start {
        cells.push(l.get(s..).unwrap_or(""));
    }
    cells
}

/// An esxcli table: header line, dash line, data rows.
///
/// Columns are cut at the dash runs' start positions, so headers with spaces, right-aligned
/// numbers and empty cells all land in the right column; the last column runs to the end of
/// the line whatever its dash run's length. A line whose first column is blank continues
/// the previous row's last cell (esxcli wraps long descriptions on narrow terminals). A copy
/// pasted from a web page with tabs in its header is split on tab / double-space gaps and
/// mapped by header names instead. Header and dash line with no rows is an empty table.
pub(crate) fn table(input: &str) -> PResult<'_, Table<'_>> {
    let all = lines(input);
    let mut it = all.iter().copied().skip_while(|l| is_blank(l));
    let Some(header_line) = it.next() else {
        return Err(fail(input, "a table header line"));
    };
    let Some(dash_line) = it.next() else {
        return Err(fail(after_line(input, header_line), "a dash row under the header"));
    };
    let spans = match dash_row(dash_line) {
        Ok((_, s)) => s,
        Err(_) => return Err(fail(dash_line, "a dash row under the header")),
    };
    let tabbed = header_line.contains('\t') || dash_line.contains('\t');
    let starts: Vec<usize> = spans.iter().map(|s| s.0).collect();
    let headers: Vec<String> = if tabbed {
        tab_cells(header_line).iter().map(|h| h.trim().to_string()).collect()
    } else {
        (0..starts.len())
            .map(|c| {
                let from = if c == 0 { 0 } else { starts.get(c).copied().unwrap_or(0) };
                let to = starts.get(c + 1).copied();
                char_slice(header_line, from, to).trim().to_string()
            })
            .collect()
    };
    if headers.len() != spans.len() || headers.iter().any(|h| h.is_empty()) {
        return Err(fail(header_line, "one header name above each dash run"));
    }
    let last_start = starts.last().copied().unwrap_or(0);
    let second_start = starts.get(1).copied();
    let mut rows: Vec<Row<'_>> = Vec::new();
    for l in it {
        if is_blank(l) {
            continue;
        }
        if tabbed {
            let cells: Vec<Cell<'_>> = tab_cells(l).into_iter().map(cell_of).collect();
            if cells.len() != headers.len() {
                return Err(fail(l, "one cell per column in a tab-separated row"));
            }
            rows.push(Row { line: l, cells });
            continue;
        }
        let first_blank = second_start.is_some_and(|s| is_blank(char_slice(l, 0, Some(s))));
        if first_blank {
            let Some(prev) = rows.last_mut() else {
                return Err(fail(l, "a table row with its first column filled"));
            };
            if let Some(last) = prev.cells.last_mut() {
                let more = l.trim();
                if !last.text.is_empty() {
                    last.text.push(' ');
                }
                last.text.push_str(more);
            }
            continue;
        }
        let cells = (0..starts.len())
            .map(|c| {
                let from = if c == 0 { 0 } else { starts.get(c).copied().unwrap_or(0) };
                cell_of(char_slice(l, from, starts.get(c + 1).copied()))
            })
            .collect();
        rows.push(Row { line: l, cells });
    }
    // Output that stops without its final newline inside the last row was cut off: its
    // missing cells would otherwise read as empty ones.
    if !input.ends_with('\n') {
        if let Some(last) = rows.last() {
            if !tabbed && last.line.chars().count() < last_start && last_start > 0 {
                return Err(fail(
                    end_of(input),
                    "a complete last row (the output ends in the middle of it)",
                ));
            }
        }
    }
    Ok((
        end_of(input),
        Table {
            header_line,
            headers,
            rows,
        },
    ))
}

// ---------------------------------------------------------------------------------------
// Batches

/// One `==> key <==` section of a batched per-VM query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section<'a> {
    pub key: &'a str,
    pub header: &'a str,
    /// The section's output up to its end marker (or up to the next header when the batch
    /// has no end markers), as a sub-slice of the input.
    pub body: &'a str,
    /// Why the section's output cannot be trusted: cut off before its end marker, mixed
    /// with another section's output, or the query exited non-zero. Its data is unknown.
    pub problem: Option<String>,
}

fn section_header(l: &str) -> Option<&str> {
    let key = l.trim_end().strip_prefix("==> ")?.strip_suffix(" <==")?;
    (!key.contains(" <==")).then_some(key)
}

/// The agreed end marker `<== KEY exit N ==>`: the key and the query's exit status.
fn end_marker(l: &str) -> Option<(&str, &str)> {
    let inner = l.trim_end().strip_prefix("<== ")?.strip_suffix(" ==>")?;
    let (key, status) = inner.rsplit_once(" exit ")?;
    (!key.trim().is_empty()).then(|| (key.trim(), status.trim()))
}

/// Splits a batch into sections. Text before the first header is an error: the batch
/// prints a header before anything else, so such text means the batch itself failed.
///
/// A batch whose sections carry end markers (`<== KEY exit N ==>` after each section,
/// the convention of the concurrent batches) is checked: a section that does not end with
/// its own marker was cut off, one holding another section's marker was interleaved with
/// it, and one whose query exited non-zero failed; each gets a [`Section::problem`]. A
/// batch without any end marker (captures of the older sequential loop) is read as is.
pub(crate) fn sections<'a>(input: &'a str, expected: &'static str) -> PResult<'a, Vec<Section<'a>>> {
    // Cheap pre-scan: no marker anywhere means the old format.
    let marked = input.starts_with("<== ") || input.contains("\n<== ");
    // Header lines are found by searching for `==> ` (fast on long input), keeping only
    // hits at the start of a line: (key, header line, offset of the line, body start).
    let mut heads: Vec<(&'a str, &'a str, usize, usize)> = Vec::new();
    for (at, line, next) in lines_starting_with(input, "==> ") {
        if let Some(key) = section_header(line) {
            if heads.is_empty() {
                if let Some(l) = input
                    .get(..at)
                    .and_then(|before| line_iter(before).find(|l| !is_blank(l)))
                {
                    return Err(fail(l, expected));
                }
            }
            heads.push((key.trim(), line, at, next));
        }
    }
    if heads.is_empty() {
        if let Some(l) = line_iter(input).find(|l| !is_blank(l)) {
            return Err(fail(l, expected));
        }
    }
    let mut out = Vec::with_capacity(heads.len());
    for (n, &(key, header, _, from)) in heads.iter().enumerate() {
        let to = heads.get(n + 1).map_or(input.len(), |h| h.2);
        let body = input.get(from..to.max(from)).unwrap_or_else(|| end_of(input));
        out.push(if marked {
            checked_section(key, header, body)
        } else {
            Section {
                key,
                header,
                body,
                problem: None,
            }
        });
    }
    Ok((end_of(input), out))
}

/// The lines of `text` that start with `prefix`: (offset of the line, the line without
/// its line ending, offset of the next line), found with a substring search.
fn lines_starting_with<'a>(text: &'a str, prefix: &'a str) -> impl Iterator<Item = (usize, &'a str, usize)> + 'a {
    let mut search = 0usize;
    std::iter::from_fn(move || loop {
        let at = search + text.get(search..)?.find(prefix)?;
        let next = text
            .get(at..)
            .and_then(|r| r.find('\n'))
            .map_or(text.len(), |e| at + e + 1);
        search = next.max(at + 1);
        if at == 0 || text.as_bytes().get(at - 1) == Some(&b'\n') {
            let raw = text.get(at..next).unwrap_or("");
            let l = raw.strip_suffix('\n').unwrap_or(raw);
            return Some((at, l.strip_suffix('\r').unwrap_or(l), next));
        }
    })
}

/// A section of a batch with end markers: finds its own marker at its end and says what
/// is wrong when it is not there (see [`sections`]).
fn checked_section<'a>(key: &'a str, header: &'a str, body: &'a str) -> Section<'a> {
    let mut own: Option<(usize, &'a str)> = None;
    let mut foreign: Option<&'a str> = None;
    let mut own_end = body.len();
    for (at, line, next) in lines_starting_with(body, "<== ") {
        match end_marker(line) {
            Some((k, status)) if k == key && own.is_none() => {
                own = Some((at, status));
                own_end = next;
            }
            Some((k, _)) => foreign = foreign.or(Some(k)),
            None => {}
        }
    }
    let after_own = own.is_some() && body.get(own_end..).is_some_and(|rest| !is_blank(rest));
    let (body, problem) = match own {
        Some((at, status)) => {
            let kept = body.get(..at).unwrap_or(body);
            let problem = if let Some(k) = foreign {
                Some(format!(
                    "the output of section {key} is mixed with that of section {k} (end marker `<== {k} exit N ==>` inside it); its data is unknown"
                ))
            } else if after_own {
                Some(format!(
                    "output follows the end marker of section {key}; the sections were interleaved and its data is unknown"
                ))
            } else if status != "0" {
                let first = kept.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no output");
                Some(format!("the query exited with status {status}: {first}"))
            } else {
                None
            };
            (kept, problem)
        }
        None => (
            body,
            Some(match foreign {
                Some(k) => format!(
                    "the output of section {key} is mixed with that of section {k} and has no end marker of its own; its data is unknown"
                ),
                None => format!(
                    "section {key} was cut off: its end marker `<== {key} exit N ==>` never came (the batch was stopped by a timeout, the output cap or a lost connection)"
                ),
            }),
        ),
    };
    Section {
        key,
        header,
        body,
        problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_value_splits_on_first_colon_space_and_keeps_the_rest() {
        let (_, kv) = key_value("   Config File: /vmfs/volumes/vsan:52/a [b] c.vmx  ").unwrap();
        assert_eq!(kv, ("Config File", "/vmfs/volumes/vsan:52/a [b] c.vmx"));
        assert_eq!(key_value("   Uplinks: ").unwrap().1, ("Uplinks", ""));
        assert_eq!(key_value("   DVPort:").unwrap().1, ("DVPort", ""));
        assert!(key_value("   no colon here").is_err());
    }

    #[test]
    fn table_cuts_at_dash_runs_and_joins_continuations() {
        let t = "HBA Name Driver   Link State UID  Description\n\
                 -------- ------   ---------- ---- -----------\n\
                 vmhba0   nfnic    link-down  fc.1 Cisco Corporation Cisco \n\
                 \x20                                UCS VIC Fnic Controller\n";
        let (_, table) = table(t).unwrap();
        assert_eq!(
            table.headers,
            ["HBA Name", "Driver", "Link State", "UID", "Description"]
        );
        assert_eq!(table.rows.len(), 1);
        let row = &table.rows[0];
        assert_eq!(row.cell(Some(2)), "link-down");
        assert_eq!(row.cell(Some(4)), "Cisco Corporation Cisco UCS VIC Fnic Controller");
    }

    #[test]
    fn tab_cells_split_on_tabs_and_double_spaces_only() {
        assert_eq!(
            tab_cells(
                "vmrdma0\t nmlx5_rdma  Active\t 1024\t100 Gbps   vmnic2\t\t\tMT28800 Family [ConnectX-5 MT28831]"
            ),
            [
                "vmrdma0",
                "nmlx5_rdma",
                "Active",
                "1024",
                "100 Gbps",
                "vmnic2",
                "MT28800 Family [ConnectX-5 MT28831]"
            ]
        );
    }

    #[test]
    fn records_nest_dvport_entries_and_split_at_unindented_lines() {
        let input = "A\n   Name: A\n   DVPort: \n         Client: x\n      \n         Client: \nB\n   Name: B\n";
        let (_, recs) = records(input).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].fields.len(), 2);
        assert_eq!(recs[0].fields[1].children.len(), 2);
        assert_eq!(recs[0].fields[1].children[1][0].value, "");
        assert_eq!(recs[1].name, "B");
    }

    #[test]
    fn sections_are_sub_slices_so_errors_keep_their_line_numbers() {
        let input = "==> 1 <==\nbody one\n==> 2 <==\r\n\r\n";
        let (_, s) = sections(input, "a header").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].body, "body one\n");
        assert_eq!(s[1].body, "\r\n");
        let e = to_parse_error("x", input, &fail_at(s[0].body));
        assert_eq!((e.line, e.column), (2, 1));
    }

    #[test]
    fn table_errors_say_what_is_wrong() {
        let cut = "Name     Driver  State\n-------  ------  -----\nvmrdma0  nm";
        let e = to_parse_error("t", cut, &fail_of(table(cut)));
        assert_eq!(
            (e.line, e.column, e.expected),
            (3, 12, "a complete last row (the output ends in the middle of it)")
        );
        let orphan = "Name  State\n----  -----\n      Active\n";
        let e = to_parse_error("t", orphan, &fail_of(table(orphan)));
        assert_eq!((e.line, e.expected), (3, "a table row with its first column filled"));
        let tabbed = "Name\tState\n----\t-----\nvmrdma0\n";
        let e = to_parse_error("t", tabbed, &fail_of(table(tabbed)));
        assert_eq!((e.line, e.expected), (3, "one cell per column in a tab-separated row"));
        let e = to_parse_error("t", "", &fail_of(table("")));
        assert_eq!((e.line, e.expected), (1, "a table header line"));
    }

    #[test]
    fn error_text_spots_esxcli_and_shell_errors_only() {
        assert!(error_text("Error: Unknown command or namespace x\n").is_some());
        assert!(error_text("\n-sh: esxcli: not found\n").is_some());
        assert!(error_text("Error: my vm\n   World ID: 1\n").is_none());
        assert!(error_text("Name  Enabled\n").is_none());
        assert!(error_text("").is_none());
    }

    fn fail_of<T: std::fmt::Debug>(r: PResult<'_, T>) -> Fail<'_> {
        match r.unwrap_err() {
            nom::Err::Error(f) | nom::Err::Failure(f) => f,
            nom::Err::Incomplete(_) => unreachable!(),
        }
    }

    fn fail_at(at: &str) -> Fail<'_> {
        match fail(at, "x") {
            nom::Err::Error(f) | nom::Err::Failure(f) => f,
            nom::Err::Incomplete(_) => unreachable!(),
        }
    }
}

//! The esxcli fixed-width table: header, dash row, data rows.
use nom::bytes::complete::{take_while, take_while1};
use nom::combinator::all_consuming;
use nom::multi::many1;
use nom::sequence::terminated;
use nom::Parser;

use super::error::{end_of, fail, Fail, PResult};
use super::lines::{after_line, is_blank, line_iter, trim};
use std::borrow::Cow;

/// One cell: its text and where it starts (for errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cell<'a> {
    pub at: &'a str,
    /// Borrowed from the line unless a continuation line was appended.
    pub text: Cow<'a, str>,
}

/// One data row: its first line and its cells (a slice of the table's one cell list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row<'t, 'a> {
    pub line: &'a str,
    pub cells: &'t [Cell<'a>],
}

impl<'a> Row<'_, 'a> {
    /// The trimmed cell of column `col` ("" when the row is short).
    pub fn cell(&self, col: Option<usize>) -> &str {
        col.and_then(|c| self.cells.get(c)).map_or("", |c| &*c.text)
    }

    /// A cell that must not be empty (the row's key).
    pub fn required(&self, col: usize, expected: &'static str) -> Result<String, nom::Err<Fail<'a>>> {
        match self.cells.get(col) {
            Some(c) if !c.text.is_empty() => Ok(c.text.to_string()),
            Some(c) => Err(fail(c.at, expected)),
            None => Err(fail(end_of(self.line), expected)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table<'a> {
    pub header_line: &'a str,
    pub headers: Vec<&'a str>,
    /// Each row's first line and where its cells start in `cells`; a row's cells run to
    /// the next row's start. One list of cells for the whole table, not a `Vec` per row:
    /// a table of short rows spent most of its time allocating and freeing those.
    rows: Vec<(&'a str, usize)>,
    cells: Vec<Cell<'a>>,
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

    /// The data rows, in order.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = Row<'_, 'a>> + '_ {
        self.rows.iter().enumerate().map(|(i, &(line, from))| {
            let to = self.rows.get(i + 1).map_or(self.cells.len(), |r| r.1);
            Row {
                line,
                cells: self.cells.get(from..to).unwrap_or(&[]),
            }
        })
    }
}

/// How an esxcli table's cells are found, decided by its header line and dash row alone.
/// The table parser uses exactly this; `--redact` uses it too, to re-align tables whose
/// cells changed width, so both always agree on what a table is and where its columns are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableLayout {
    /// Start and end (character offsets, a tab counting as one) of each dash run: the
    /// column boundaries of a fixed-width table.
    pub spans: Vec<(usize, usize)>,
    /// A copy pasted from a web page with tabs in its header or dash row: its cells are
    /// split on tab / double-space gaps and mapped by header name, not cut at the spans.
    pub tab_separated: bool,
}

/// The layout of a table with this header line and dash row, or `None` when `dash` is not
/// a dash row. A trailing `\n` or `\r\n` on either line is ignored.
pub fn table_layout(header: &str, dash: &str) -> Option<TableLayout> {
    layout_of(
        header.trim_end_matches(['\n', '\r']),
        dash.trim_end_matches(['\n', '\r']),
    )
}

/// [`table_layout`] of two lines as [`line_iter`](super::lines::line_iter) gives them.
fn layout_of(header: &str, dash: &str) -> Option<TableLayout> {
    let (_, spans) = dash_row(dash).ok()?;
    Some(TableLayout {
        spans,
        tab_separated: header.contains('\t') || dash.contains('\t'),
    })
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
/// `ascii`: `l` is ASCII (esxcli output almost always is), so characters are bytes and
/// the offsets need no walk over `char_indices`. The caller checks once per line.
fn char_slice(l: &str, ascii: bool, from: usize, to: Option<usize>) -> &str {
    if ascii {
        let start = from.min(l.len());
        let end = to.map_or(l.len(), |t| t.min(l.len())).max(start);
        return l.get(start..end).unwrap_or("");
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
        text: Cow::Borrowed(t),
    }
}

/// Cells of a tab-separated copy: a gap is any whitespace run holding a tab, or two or
/// more spaces (single spaces occur inside values and headers such as `Paired Uplink`).
pub(super) fn tab_cells(l: &str) -> Vec<&str> {
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
    let mut it = line_iter(input).skip_while(|l| is_blank(l));
    let Some(header_line) = it.next() else {
        return Err(fail(input, "a table header line"));
    };
    let Some(dash_line) = it.next() else {
        return Err(fail(after_line(input, header_line), "a dash row under the header"));
    };
    let Some(TableLayout {
        spans,
        tab_separated: tabbed,
    }) = layout_of(header_line, dash_line)
    else {
        return Err(fail(dash_line, "a dash row under the header"));
    };
    let starts: Vec<usize> = spans.iter().map(|s| s.0).collect();
    let headers: Vec<&str> = if tabbed {
        tab_cells(header_line).iter().map(|h| h.trim()).collect()
    } else {
        (0..starts.len())
            .map(|c| {
                let from = if c == 0 { 0 } else { starts.get(c).copied().unwrap_or(0) };
                let to = starts.get(c + 1).copied();
                char_slice(header_line, header_line.is_ascii(), from, to).trim()
            })
            .collect()
    };
    if headers.len() != spans.len() || headers.iter().any(|h| h.is_empty()) {
        return Err(fail(header_line, "one header name above each dash run"));
    }
    let last_start = starts.last().copied().unwrap_or(0);
    let second_start = starts.get(1).copied();
    let mut rows: Vec<(&str, usize)> = Vec::new();
    let mut cells: Vec<Cell<'_>> = Vec::new();
    for l in it {
        if is_blank(l) {
            continue;
        }
        if tabbed {
            let start = cells.len();
            cells.extend(tab_cells(l).into_iter().map(cell_of));
            if cells.len() - start != headers.len() {
                return Err(fail(l, "one cell per column in a tab-separated row"));
            }
            rows.push((l, start));
            continue;
        }
        let ascii = l.is_ascii();
        let first_blank = second_start.is_some_and(|s| is_blank(char_slice(l, ascii, 0, Some(s))));
        if first_blank {
            if rows.is_empty() {
                return Err(fail(l, "a table row with its first column filled"));
            }
            // The previous row's last cell is the last cell of all.
            if let Some(last) = cells.last_mut() {
                let more = trim(l);
                let text = last.text.to_mut();
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(more);
            }
            continue;
        }
        rows.push((l, cells.len()));
        for c in 0..starts.len() {
            let from = if c == 0 { 0 } else { starts.get(c).copied().unwrap_or(0) };
            cells.push(cell_of(char_slice(l, ascii, from, starts.get(c + 1).copied())));
        }
    }
    // Output that stops without its final newline inside the last row was cut off: its
    // missing cells would otherwise read as empty ones.
    if !input.ends_with('\n') {
        if let Some(&(last, _)) = rows.last() {
            if !tabbed && last.chars().count() < last_start && last_start > 0 {
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
            cells,
        },
    ))
}

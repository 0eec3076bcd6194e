//! Re-aligning esxcli tables whose cells changed width, so the parsers' dash-row slicing
//! still finds every cell in its column.
use super::Redactor;
use pvrdma_parsers::{table_layout, TableLayout};

impl Redactor {
    /// [`Redactor::redact_text`], re-aligning esxcli tables whose cells changed width.
    pub(crate) fn redact_output(&self, text: &str) -> String {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        while let Some(line) = lines.get(i) {
            // A table is what the parsers read as one: a header and a dash row under it.
            let layout = lines
                .get(i + 1)
                .filter(|_| !line.trim().is_empty())
                .and_then(|dash| table_layout(line, dash));
            let Some(layout) = layout else {
                out.push_str(&self.redact_text(line));
                i += 1;
                continue;
            };
            // The table runs to a blank line or the next `==> KEY <==` batch section.
            let mut end = i + 2;
            while lines
                .get(end)
                .is_some_and(|l| !l.trim().is_empty() && !l.starts_with("==> "))
            {
                end += 1;
            }
            out.push_str(&self.redact_table(lines.get(i..end).unwrap_or_default(), &layout));
            i = end;
        }
        out
    }

    /// `block` = header, dash row, rows (each with its line ending).
    fn redact_table(&self, block: &[&str], layout: &TableLayout) -> String {
        let plain: String = block.iter().map(|l| self.redact_text(l)).collect();
        // A tab-separated copy is split on its gaps, not cut at columns: replacing cells
        // in place keeps every gap, so there is nothing to re-align.
        if layout.tab_separated {
            return plain;
        }
        let spans = &layout.spans;
        let Some(last_dash) = spans.last().map(|(s, e)| e - s) else {
            return plain;
        };
        struct Cell {
            text: String,
            right: bool,
        }
        let mut rows: Vec<(Vec<Cell>, &str)> = Vec::new();
        let mut widths: Vec<usize> = spans.iter().map(|(s, e)| e - s).collect();
        let mut changed = false;
        for (n, line) in block.iter().enumerate() {
            let body = line.trim_end_matches(['\n', '\r']);
            let ending = &line[body.len()..];
            if n == 1 {
                rows.push((Vec::new(), ending));
                continue;
            }
            let chars: Vec<char> = body.chars().collect();
            let mut cells = Vec::with_capacity(spans.len());
            for (j, &(start, _)) in spans.iter().enumerate() {
                let stop = spans.get(j + 1).map_or(chars.len(), |(next, _)| *next);
                let raw: String = chars
                    .get(start.min(chars.len())..stop.min(chars.len()))
                    .map(|c| c.iter().collect())
                    .unwrap_or_default();
                let trimmed = raw.trim();
                let redacted = self.redact_text(trimmed);
                if redacted.chars().count() != trimmed.chars().count() {
                    changed = true;
                }
                // esxcli right-aligns numbers and booleans: their cell starts with padding.
                let right = raw.starts_with(' ') && !trimmed.is_empty();
                if let Some(w) = widths.get_mut(j) {
                    *w = (*w).max(redacted.chars().count());
                }
                cells.push(Cell { text: redacted, right });
            }
            rows.push((cells, ending));
        }
        if !changed {
            return plain;
        }
        // Pasted copies indent the whole table; keep that indentation.
        let indent = spans.first().map_or(0, |(s, _)| *s);
        let gaps: Vec<usize> = spans
            .windows(2)
            .map(|w| match w {
                [a, b] => b.0.saturating_sub(a.1),
                _ => 2,
            })
            .collect();
        let mut out = String::new();
        for (n, (cells, ending)) in rows.iter().enumerate() {
            let mut line = " ".repeat(indent);
            if n == 1 {
                for (j, w) in widths.iter().enumerate() {
                    // The last dash run keeps its length: esxcli sizes it either to the
                    // header or to the values, and parsers read that column to the end.
                    let width = if j + 1 == spans.len() { last_dash } else { *w };
                    line.push_str(&"-".repeat(width));
                    if let Some(g) = gaps.get(j) {
                        line.push_str(&" ".repeat(*g));
                    }
                }
            } else {
                for (j, cell) in cells.iter().enumerate() {
                    let is_last = j + 1 == cells.len();
                    let w = widths.get(j).copied().unwrap_or(0);
                    if cell.right {
                        line.push_str(&format!("{:>w$}", cell.text));
                    } else if is_last {
                        // The last column is not padded.
                        line.push_str(&cell.text);
                    } else {
                        line.push_str(&format!("{:<w$}", cell.text));
                    }
                    if let Some(g) = gaps.get(j) {
                        line.push_str(&" ".repeat(*g));
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push_str(ending);
        }
        out
    }
}

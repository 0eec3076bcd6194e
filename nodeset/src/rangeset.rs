//! ClusterShell's `RangeSet`: a set of indexes kept as the text they are written with
//! (`7`, `07` and `007` are three different indexes), sorted by length then text, and
//! written back as `1-3,07-10` runs. A port of `ClusterShell.RangeSet.RangeSet` (1.9+
//! semantics, mixed zero-padding) without negative indexes and without autostep.
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// One index as written: ASCII digits, possibly zero-padded.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Index(pub(crate) String);

impl Index {
    /// Its value; indexes are checked to fit when they are made.
    fn value(&self) -> u128 {
        self.0.parse().unwrap_or(u128::MAX)
    }
    /// Written with a leading zero (`07`), so its length is fixed.
    fn padded(&self) -> bool {
        self.0.len() > 1 && self.0.starts_with('0')
    }
}

impl Ord for Index {
    /// ClusterShell's `_sortkey`: shorter text first, then the text.
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.len().cmp(&other.0.len()).then_with(|| self.0.cmp(&other.0))
    }
}

impl PartialOrd for Index {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A set of indexes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct RangeSet(pub(crate) BTreeSet<Index>);

/// Why a range does not parse, and where in the text handed to [`RangeSet::parse`] (a
/// byte offset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RangeError {
    pub(crate) at: usize,
    pub(crate) reason: String,
}

/// A number as Python's `int()` reads it (blanks around it, a sign, `_` between digits),
/// ASCII digits only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PyInt {
    Value(i128),
    Invalid,
    TooLarge,
}

/// White space as Python's `str.strip()` sees it.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

pub(crate) fn py_int(text: &str) -> PyInt {
    let t = text.trim_matches(is_py_space);
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return PyInt::Invalid;
    }
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    match clean.parse::<i128>() {
        Ok(v) => PyInt::Value(if negative { -v } else { v }),
        Err(_) => PyInt::TooLarge,
    }
}

/// One comma-separated item of a range set (`07-10/2`), blanks trimmed, and the byte
/// offset it starts at in the whole pattern (errors point there).
struct Item<'a> {
    sub: &'a str,
    at: usize,
}

/// An item read: the indexes `start..=stop` every `step`, written `pad` digits wide (0:
/// unpadded).
struct Run {
    start: i128,
    stop: i128,
    step: i128,
    pad: usize,
}

impl Item<'_> {
    fn err(&self, at: usize, reason: String) -> RangeError {
        RangeError { at, reason }
    }

    /// Reads the item as `RangeSet._parse` reads one: bounds, step, then ClusterShell's
    /// padding rules.
    fn read(&self) -> Result<Run, RangeError> {
        let (at, sub) = (self.at, self.sub);
        let (base, begin, end, step) = self.bounds()?;
        let end_at = at + base.rfind(end).filter(|_| !end.is_empty()).unwrap_or(base.len());
        let begin_value = match py_int(begin) {
            PyInt::Value(v) => v,
            PyInt::Invalid => return Err(self.bad_number(begin, at)),
            PyInt::TooLarge => return Err(self.err(at, format!("{begin} is too large"))),
        };
        let end_value = match py_int(end) {
            PyInt::Value(v) => v,
            PyInt::Invalid => return Err(self.bad_number(end, end_at)),
            PyInt::TooLarge => return Err(self.err(end_at, format!("{end} is too large"))),
        };
        if begin.starts_with('-') || end.starts_with('-') || begin_value < 0 || end_value < 0 {
            return Err(self.err(at, format!("{sub:?}: a host index is never negative")));
        }
        let (start, pad, end_stripped) = self.padding(begin, end, begin_value, end_value)?;
        let stop = match py_int(end_stripped) {
            PyInt::Value(v) => v,
            _ => return Err(self.bad_number(end, end_at)),
        };
        if stop > MAX_VALUE {
            return Err(self.err(end_at, format!("{end} is too large")));
        }
        if start > stop {
            return Err(self.err(at, format!("the range {base:?} runs backwards")));
        }
        if step < 1 {
            let pos = at + base.len() + 1;
            return Err(self.err(pos, format!("the step in {sub:?} must be 1 or more")));
        }
        Ok(Run { start, stop, step, pad })
    }

    /// The item split into its range (`base`), first and last bound as written, and step.
    fn bounds(&self) -> Result<(&str, &str, &str, i128), RangeError> {
        let (at, sub) = (self.at, self.sub);
        let (base, step_text) = match sub.split_once('/') {
            Some((b, s)) => (b, Some(s)),
            None => (sub, None),
        };
        let step = match step_text.map(py_int) {
            None => 1,
            Some(PyInt::Value(v)) => v,
            Some(_) => {
                let pos = at + base.len() + 1;
                return Err(self.err(pos, format!("the step after '/' in {sub:?} is not a number")));
            }
        };
        if !base.contains('-') {
            if step != 1 {
                let pos = at + base.len();
                return Err(self.err(
                    pos,
                    format!("a step needs a range: {sub:?} has no FIRST-LAST before '/' (write e.g. 1-9/2)"),
                ));
            }
            return Ok((base, base, base, step));
        }
        let parts: Vec<&str> = base.split('-').collect();
        match parts.as_slice() {
            [b, e] if !b.trim_matches(is_py_space).is_empty() => {
                Ok((base, b.trim_matches(is_py_space), e.trim_matches(is_py_space), step))
            }
            _ => {
                let pos = at + base.find('-').unwrap_or(0);
                Err(self.err(
                    pos,
                    format!(
                        "{sub:?} is not a range: write FIRST-LAST with two numbers (a host index is never negative)"
                    ),
                ))
            }
        }
    }

    /// ClusterShell's padding rules: a bound written with leading zeros fixes the width,
    /// and then both bounds must be written with that many digits. Gives the first index's
    /// value, the width (0: unpadded) and the last bound without its leading zeros.
    fn padding<'e>(
        &self,
        begin: &str,
        end: &'e str,
        begin_value: i128,
        end_value: i128,
    ) -> Result<(i128, usize, &'e str), RangeError> {
        let mut pad = 0;
        let start = if begin_value != 0 {
            let stripped = begin.trim_start_matches('0');
            if stripped.len() < begin.len() {
                pad = begin.len();
            }
            match py_int(stripped) {
                PyInt::Value(v) => v,
                _ => return Err(self.bad_number(begin, self.at)),
            }
        } else {
            if begin.len() > 1 {
                pad = begin.len();
            }
            0
        };
        let end_stripped = if end_value != 0 {
            end.trim_start_matches('0')
        } else {
            end
        };
        let end_pad = if end_stripped.len() < end.len() { end.len() } else { 0 };
        if (pad > 0 || end_pad > 0) && begin.len() != end.len() {
            let width = begin.len().max(end.len());
            return Err(self.err(
                self.at,
                format!(
                    "padding mismatch in {:?}: a bound written with leading zeros fixes the width, so both bounds need {width} digits (e.g. {}-{})",
                    self.sub,
                    format_index(start.max(0) as u128, width),
                    format_index(end_value.max(0) as u128, width),
                ),
            ));
        }
        Ok((start, pad, end_stripped))
    }

    /// Why a bound is not a number, pointing at its first wrong character (`pos`: where
    /// the bound starts).
    fn bad_number(&self, text: &str, pos: usize) -> RangeError {
        let sub = self.sub;
        if sub.is_empty() {
            return self.err(pos, "empty range: nothing between two commas or brackets".to_string());
        }
        if text.contains(':') {
            let p = pos + text.find(':').unwrap_or(0);
            return self.err(p, format!("':' in {sub:?}: a range is written FIRST-LAST (e.g. 1-4)"));
        }
        let bad = text
            .char_indices()
            .find(|(_, c)| !c.is_ascii_digit())
            .map_or(0, |(i, _)| i);
        let what = if text.is_empty() {
            "a number is missing".to_string()
        } else if text.chars().any(char::is_alphabetic) {
            format!("{text:?} is not a number (ClusterShell has no letter ranges; list the names, e.g. esxa,esxb)")
        } else {
            format!("{text:?} is not a number")
        };
        self.err(pos + bad, format!("{what} in {sub:?}"))
    }
}

/// Largest index value accepted: `u64` covers every real host numbering; ClusterShell
/// goes to 1e100.
const MAX_VALUE: i128 = u64::MAX as i128;

impl RangeSet {
    pub(crate) fn one(index: &str) -> Self {
        let mut s = BTreeSet::new();
        s.insert(Index(index.to_string()));
        RangeSet(s)
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Indexes in ClusterShell's order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|i| i.0.as_str())
    }

    pub(crate) fn first(&self) -> &str {
        self.0.first().map_or("", |i| i.0.as_str())
    }

    pub(crate) fn last(&self) -> &str {
        self.0.last().map_or("", |i| i.0.as_str())
    }

    /// Adds the other's indexes (an in-place union).
    pub(crate) fn extend(&mut self, other: &Self) {
        self.0.extend(other.0.iter().cloned());
    }

    pub(crate) fn intersection(&self, other: &Self) -> Self {
        RangeSet(self.0.intersection(&other.0).cloned().collect())
    }

    pub(crate) fn difference(&self, other: &Self) -> Self {
        RangeSet(self.0.difference(&other.0).cloned().collect())
    }

    pub(crate) fn symmetric_difference(&self, other: &Self) -> Self {
        RangeSet(self.0.symmetric_difference(&other.0).cloned().collect())
    }

    pub(crate) fn intersects(&self, other: &Self) -> bool {
        self.0.intersection(&other.0).next().is_some()
    }

    pub(crate) fn is_subset(&self, other: &Self) -> bool {
        self.0.is_subset(&other.0)
    }

    /// Python's `a < b` on sets: a proper subset.
    pub(crate) fn is_proper_subset(&self, other: &Self) -> bool {
        self.len() < other.len() && self.is_subset(other)
    }

    /// Parses `1-3,07,10-20/5` (`RangeSet._parse`). `limit` bounds the number of indexes:
    /// `Err(None)` when it is exceeded. Offsets in errors are bytes into `pattern`.
    pub(crate) fn parse(pattern: &str, limit: usize) -> Result<Self, Option<RangeError>> {
        let mut set = BTreeSet::new();
        let mut offset = 0;
        for raw in pattern.split(',') {
            let here = offset;
            offset += raw.len() + 1;
            let lead = raw.len() - raw.trim_start_matches(is_py_space).len();
            let item = Item {
                sub: raw.trim_matches(is_py_space),
                at: here + lead,
            };
            let run = item.read().map_err(Some)?;
            let count = (run.stop - run.start) / run.step + 1;
            if count.saturating_add(set.len() as i128) > limit as i128 {
                return Err(None);
            }
            let mut n = run.start;
            while n <= run.stop {
                set.insert(Index(format_index(n as u128, run.pad)));
                n += run.step;
            }
        }
        Ok(RangeSet(set))
    }

    /// Contiguous runs (first, last, width; width 0 for unpadded): a line-by-line port of
    /// `_slices_padding` with autostep off, including its quirk that a run started after a
    /// single padded index keeps that padding (`00,10-99,100` stays three runs).
    pub(crate) fn runs(&self) -> Vec<(u128, u128, usize)> {
        let mut out = Vec::new();
        let mut cur_pad = 0usize;
        let mut cur_padded = false;
        let mut cur_start: Option<u128> = None;
        let mut cur_step: Option<u128> = None;
        let mut last_idx: u128 = 0;
        let width = |padded: bool, pad: usize| if padded { pad } else { 0 };
        for index in &self.0 {
            let (idx, digitlen, padded) = (index.value(), index.0.len(), index.padded());
            let Some(start) = cur_start else {
                cur_padded = padded;
                cur_pad = digitlen;
                cur_start = Some(idx);
                cur_step = None;
                last_idx = idx;
                continue;
            };
            let padding_mismatch = if cur_padded { digitlen != cur_pad } else { padded };
            let step_mismatch = !padding_mismatch && cur_step.is_some_and(|st| Some(st) != idx.checked_sub(last_idx));
            if padding_mismatch || step_mismatch {
                let (stepped, step) = match cur_step {
                    Some(st) => (st == 1, st),
                    None => (true, 1),
                };
                if stepped {
                    out.push((start, last_idx, width(cur_padded, cur_pad)));
                    cur_start = Some(idx);
                    cur_padded = padded;
                    cur_pad = digitlen;
                } else {
                    let stop = if padding_mismatch {
                        last_idx + 1
                    } else {
                        (last_idx + 1).saturating_sub(step)
                    };
                    let mut j = start;
                    while j < stop {
                        out.push((j, j, width(cur_padded, cur_pad)));
                        j += step;
                    }
                    if padding_mismatch {
                        cur_start = Some(idx);
                        cur_padded = padded;
                        cur_pad = digitlen;
                    } else {
                        cur_start = Some(last_idx);
                    }
                }
                cur_step = if step_mismatch { idx.checked_sub(last_idx) } else { None };
                last_idx = idx;
                continue;
            }
            cur_step = idx.checked_sub(last_idx);
            last_idx = idx;
        }
        if let Some(start) = cur_start {
            match cur_step {
                Some(1) | None => out.push((start, last_idx, width(cur_padded, cur_pad))),
                Some(step) => {
                    let mut j = start;
                    while j <= last_idx {
                        out.push((j, j, width(cur_padded, cur_pad)));
                        j += step.max(1);
                    }
                }
            }
        }
        out
    }

    /// Text of each run: `7`, `01-10`.
    pub(crate) fn run_texts(&self) -> Vec<String> {
        self.runs()
            .into_iter()
            .map(|(a, b, w)| {
                if a == b {
                    format_index(a, w)
                } else {
                    format!("{}-{}", format_index(a, w), format_index(b, w))
                }
            })
            .collect()
    }
}

impl std::fmt::Display for RangeSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.run_texts().join(","))
    }
}

pub(crate) fn format_index(n: u128, width: usize) -> String {
    format!("{n:0width$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs(s: &str) -> String {
        RangeSet::parse(s, 100_000)
            .map(|r| r.to_string())
            .unwrap_or_else(|e| format!("error {e:?}"))
    }

    #[test]
    fn parses_and_prints_like_clustershell() {
        assert_eq!(rs("1-3,5"), "1-3,5");
        assert_eq!(rs(" 7-9 "), "7-9");
        assert_eq!(rs("9,09-10"), "9,09-10");
        // ClusterShell keeps 100 apart: the run 10-99 started after the padded 00.
        assert_eq!(rs("0-100,00"), "0-9,00,10-99,100");
        assert_eq!(rs("0-00"), "0");
        assert_eq!(rs("1-9/4"), "1,5,9");
        assert_eq!(rs("1/1"), "1");
        assert_eq!(rs("1_0"), "10");
        assert!(rs("1-010").starts_with("error"));
        assert!(rs("001-10").starts_with("error"));
        assert!(rs("1/2").starts_with("error"));
        assert!(rs("1:4").contains("':'"));
        assert!(rs("").starts_with("error"));
        assert!(rs("3-1").starts_with("error"));
    }
}

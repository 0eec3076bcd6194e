//! ClusterShell node sets, read and written exactly as ClusterShell 1.10's `NodeSet`
//! reads and writes them (`nodeset -e`, `nodeset -f`): ranges (`esx[01-16,20]`,
//! `esx[1-9/4]`, `r[1-2]n[01-04]`), the set operators `,` (union), `!` (difference), `&`
//! (intersection) and `^` (symmetric difference) evaluated left to right, groups
//! (`@esxi`, `@source:group`, `@*`) from ClusterShell's own configuration
//! (answered by a [`Resolver`]), and folding back (`esx[01-40]`, `r[1-2]n[01-02]`).
//!
//! The code follows ClusterShell's own algorithms (`RangeSet`, `RangeSetND`,
//! `NodeSetBase`, `ParsingEngine`) rather than a grammar of our own: its padding rules
//! (`[1-010]` and `[001-10]` are errors), digits next to brackets (`esx1[8-10]` is
//! `esx[18-110]`), and the order of its nD folding only come out identical that way. A
//! differential test against ClusterShell itself (`tests/suite/nodeset_oracle.rs`) holds it to
//! that. Where we deliberately differ is listed in the README (negative indexes, numbers
//! beyond 64 bits, non-ASCII digits, the size limit, written order of the names).
//!
//! The `nodeset` crate (a Rust port of ClusterShell node sets) was weighed and not used:
//! its indexes are `u32`, it pulls a command-line stack (clap, env_logger, eyre) and the
//! unmaintained serde_yaml into a library, and its folding is its own rather than
//! ClusterShell's `RangeSetND` merge; its errors do not point at a character either.
use std::fmt;

mod base;
mod nd;
mod rangeset;
mod resolver;
mod scan;

pub use rangeset::is_py_space;
pub use resolver::{GroupError, NoGroups, Resolver};

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

fn to_error(input: &str, e: scan::EvalError) -> NodeSetError {
    match e {
        scan::EvalError::TooMany => NodeSetError::TooMany(input.to_string()),
        scan::EvalError::At { at, reason } => NodeSetError::Syntax(SyntaxError {
            input: input.to_string(),
            at: input.get(..at.min(input.len())).map_or(0, |p| p.chars().count()),
            reason,
        }),
    }
}

/// Evaluates a node set; the names in the order they were written: each operand's names
/// in turn (within one bracket or group in ClusterShell's order), kept when they are in
/// the result. `esx02,esx01` stays in that order, where `nodeset -e` sorts.
pub fn expand_with(input: &str, resolver: &mut dyn Resolver) -> Result<Vec<String>, NodeSetError> {
    let mut engine = scan::Engine::new(resolver);
    let mut ev = engine.eval(input, None).map_err(|e| to_error(input, e))?;
    let members: std::collections::HashSet<String> = ev.set.names().into_iter().collect();
    if members.len() > MAX_NAMES {
        return Err(NodeSetError::TooMany(input.to_string()));
    }
    let mut seen = std::collections::HashSet::new();
    Ok(ev
        .written
        .into_iter()
        .filter(|n| members.contains(n) && seen.insert(n.clone()))
        .collect())
}

/// `nodeset -e` and `nodeset -f` of a node set with these groups: the names in
/// ClusterShell's order and the folded text.
pub fn evaluate(input: &str, groups: &mut dyn Resolver) -> Result<(Vec<String>, String), NodeSetError> {
    let mut engine = scan::Engine::new(groups);
    let mut ev = engine.eval(input, None).map_err(|e| to_error(input, e))?;
    let names = ev.set.names();
    if names.len() > MAX_NAMES {
        return Err(NodeSetError::TooMany(input.to_string()));
    }
    Ok((names, ev.set.folded_items().join(",")))
}

/// `nodeset -f` of a list of names (`str(NodeSet.fromlist(names))`).
pub fn fold_names(names: &[String]) -> String {
    fold(names)
}

/// [`expand_with`] without groups: a group is an error.
#[cfg(test)]
pub(crate) fn expand(input: &str) -> Result<Vec<String>, NodeSetError> {
    expand_with(input, &mut NoGroups)
}

/// A name that ClusterShell would read as more than one plain name (brackets, operators,
/// a group, a wildcard, blanks): listed as it is, never folded.
fn is_plain(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('@')
        && !name.contains(['[', ']', ',', '!', '&', '^', '*', '?'])
        && !name.chars().any(rangeset::is_py_space)
        && name.bytes().filter(u8::is_ascii_digit).count() < 400
}

/// The folded items of `names` (`NodeSet.fromlist(names)`), then the names that cannot be
/// folded, as they are.
fn fold_items<S: AsRef<str>>(names: &[S]) -> Vec<String> {
    let mut set = base::NodeSetBase::default();
    let mut literal: Vec<String> = Vec::new();
    let mut engine_resolver = NoGroups;
    let mut engine = scan::Engine::new(&mut engine_resolver);
    for name in names {
        let name = name.as_ref();
        let parsed = if is_plain(name) {
            engine.eval(name, None).ok()
        } else {
            None
        };
        match parsed {
            Some(mut ev) => set.update(&mut ev.set),
            None => {
                if !literal.iter().any(|l| l == name) {
                    literal.push(name.to_string());
                }
            }
        }
    }
    let mut items = set.folded_items();
    items.extend(literal);
    items
}

/// Folds names into a node set, as `nodeset -f` prints it: `esx01..esx20,db1` →
/// `db1,esx[01-20]`; `r1n01 r1n02 r2n01 r2n02` → `r[1-2]n[01-02]`. Expanding the result
/// gives the names back (duplicates removed).
pub fn fold<S: AsRef<str>>(names: &[S]) -> String {
    fold_list(names).join(",")
}

/// The items of [`fold`], in its order: each a node set of its own (`esx[01-20]`) or a
/// name that cannot be folded, as it is (`hpc node 01`). A list broken between two items
/// still names each host whole.
pub fn fold_list<S: AsRef<str>>(names: &[S]) -> Vec<String> {
    fold_items(names)
}

/// Where a folded node set may be broken across lines and still paste back: `text` cut
/// into pieces that each end with the `,` between two items (the last one without), so
/// every line is a node set of its own and together they are the same names (ClusterShell
/// ignores the blanks and newline after a `,`). An item longer than `room` is first split
/// into several items over the same names (`esx[01-40,50-90]` → `esx[01-40],esx[50-90]`).
/// `None` when `text` is not a node set without groups.
pub(crate) fn break_lines(text: &str, first_room: usize, room: usize) -> Option<Vec<String>> {
    let mut ev = scan::Engine::new(&mut NoGroups).eval(text, None).ok()?;
    if text.contains(['!', '&', '^', '@', '*', '?']) || text.chars().any(rangeset::is_py_space) {
        return None;
    }
    let mut items: Vec<String> = Vec::new();
    let room = room.max(1);
    for (pattern, sets) in ev.set.folded_vectors() {
        split_item(&pattern, sets, room.saturating_sub(1).max(1), &mut items);
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut limit = first_room;
    let last = items.len().saturating_sub(1);
    for (i, item) in items.iter().enumerate() {
        let piece = if i == last { item.clone() } else { format!("{item},") };
        if !line.is_empty() && line.chars().count() + piece.chars().count() > limit {
            lines.push(std::mem::take(&mut line));
            limit = room;
        }
        line.push_str(&piece);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    Some(lines)
}

/// [`break_lines`] for a word of running text that holds a node set: an opening `(`
/// before it and `)`, `,`, `;` or `.` after it stay on its first and last line. `None`
/// when the word holds no node set with a `,` or `[` to break at.
pub fn break_word(word: &str, first_room: usize, room: usize) -> Option<Vec<String>> {
    let core = word.trim_start_matches('(');
    let lead = word.len() - core.len();
    let core = core.trim_end_matches([')', ',', ';', '.']);
    let tail = word.get(lead + core.len()..).unwrap_or("");
    if !core.contains([',', '[']) {
        return None;
    }
    let mut lines = break_lines(
        core,
        first_room.saturating_sub(lead).max(1),
        room.saturating_sub(tail.chars().count()).max(1),
    )?;
    if lines.len() < 2 {
        return None;
    }
    if let Some(first) = lines.first_mut() {
        first.insert_str(0, word.get(..lead).unwrap_or(""));
    }
    if let Some(last) = lines.last_mut() {
        last.push_str(tail);
    }
    Some(lines)
}

/// Writes one folded vector as items no longer than `max` where the ranges allow:
/// splitting the range set of one number in two gives two items whose union is the same.
fn split_item(pattern: &base::Pattern, sets: Vec<rangeset::RangeSet>, max: usize, out: &mut Vec<String>) {
    let render = |sets: &[rangeset::RangeSet]| {
        let axes: Vec<String> = sets
            .iter()
            .map(|s| if s.len() > 1 { format!("[{s}]") } else { s.to_string() })
            .collect();
        pattern.fill(&axes)
    };
    let text = render(&sets);
    if text.chars().count() <= max {
        out.push(text);
        return;
    }
    // The number whose ranges are the longest text, if it has two runs or more.
    let widest = sets
        .iter()
        .enumerate()
        .filter(|(_, s)| s.runs().len() > 1)
        .max_by_key(|(_, s)| s.to_string().len())
        .map(|(i, _)| i);
    let Some(axis) = widest else {
        out.push(text);
        return;
    };
    let runs = sets.get(axis).map(|s| s.run_texts()).unwrap_or_default();
    let half = runs.len() / 2;
    for part in [runs.get(..half).unwrap_or(&[]), runs.get(half..).unwrap_or(&[])] {
        let parsed = rangeset::RangeSet::parse(&part.join(","), MAX_NAMES).unwrap_or_default();
        let mut piece = sets.clone();
        if let Some(slot) = piece.get_mut(axis) {
            *slot = parsed;
        }
        split_item(pattern, piece, max, out);
    }
}

#[cfg(test)]
mod tests;

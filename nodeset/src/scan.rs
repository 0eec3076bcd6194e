//! ClusterShell's `ParsingEngine`: the scanner that cuts a node set into operands and
//! operators, and the evaluation (left to right, groups resolved, wildcards matched
//! against all nodes). Ported from ClusterShell 1.10 step by step, so that what it
//! accepts, refuses and yields is what `nodeset -e` does; only the error messages are
//! ours, and they point at the character.
use super::base::{NodeSetBase, Pattern, Ranges};
use super::rangeset::{is_py_space, RangeSet};
use super::resolver::{GroupError, Resolver};
use super::MAX_NAMES;
use std::borrow::Cow;
use std::collections::HashSet;

/// A node set that does not evaluate: where (a byte offset into the text evaluated at
/// top level) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EvalError {
    At { at: usize, reason: String },
    TooMany,
}

type Result<T> = std::result::Result<T, EvalError>;

fn at(at: usize, reason: impl Into<String>) -> EvalError {
    EvalError::At {
        at,
        reason: reason.into(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Union,
    Difference,
    Intersection,
    SymmetricDifference,
}

fn op_of(c: char) -> Option<Op> {
    match c {
        ',' => Some(Op::Union),
        '!' => Some(Op::Difference),
        '&' => Some(Op::Intersection),
        '^' => Some(Op::SymmetricDifference),
        _ => None,
    }
}

fn next_op(s: &str) -> Option<(usize, Op)> {
    s.char_indices().find_map(|(i, c)| op_of(c).map(|o| (i, o)))
}

/// One operand: the operator before it, its pattern and range sets, where it starts.
struct Token {
    op: Op,
    pattern: Pattern,
    rsets: Vec<RangeSet>,
    at: usize,
}

/// Byte offset of `sub` inside `whole` (it is always a sub-slice).
fn offset(whole: &str, sub: &str) -> usize {
    (sub.as_ptr() as usize)
        .saturating_sub(whole.as_ptr() as usize)
        .min(whole.len())
}

/// `_scan_string_single`: a name without brackets, cut into text and numbers.
fn scan_single(whole: &str, node: &str) -> Result<(Pattern, Vec<RangeSet>)> {
    if node.is_empty() {
        return Err(at(offset(whole, node), "empty name"));
    }
    let mut pattern = Pattern(vec![String::new()]);
    let mut rsets = Vec::new();
    let bytes = node.as_bytes();
    let mut i = 0;
    while i < node.len() {
        let start = i;
        while i < node.len() && !bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += node.get(i..).and_then(|r| r.chars().next()).map_or(1, char::len_utf8);
        }
        pattern.push_text(node.get(start..i).unwrap_or(""));
        let digits_start = i;
        while i < node.len() && bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i > digits_start {
            let digits = node.get(digits_start..i).unwrap_or("");
            if digits.len() > 19 || digits.parse::<u64>().is_err() {
                return Err(at(
                    offset(whole, node) + digits_start,
                    format!("the number {digits} is too large for a host index"),
                ));
            }
            pattern.push_number();
            rsets.push(RangeSet::one(digits));
        }
    }
    Ok((pattern, rsets))
}

fn ascii_digits_prefix_len(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// Digits right after `]` belong to the numbers of the range (`[1-2]0` is `10,20`).
fn amend_trailing<'a>(whole: &str, outer: &'a str, inner: Cow<'a, str>) -> Result<(&'a str, Cow<'a, str>)> {
    let n = ascii_digits_prefix_len(outer);
    if n == 0 {
        return Ok((outer, inner));
    }
    if inner.contains('/') {
        return Err(at(
            offset(whole, outer),
            "digits after a range with a step (ClusterShell refuses `[1-9/2]0`; put the digits inside the brackets)",
        ));
    }
    let digits = outer.get(..n).unwrap_or("");
    let amended: Vec<String> = inner
        .split(',')
        .map(|elem| {
            let joined: Vec<String> = elem.split('-').map(|b| format!("{b}{digits}")).collect();
            let s = joined.join("-");
            if s.contains('-') {
                format!("{s}/1{}", "0".repeat(n))
            } else {
                s
            }
        })
        .collect();
    Ok((outer.get(n..).unwrap_or(""), Cow::Owned(amended.join(","))))
}

/// Digits right before `[` belong to the numbers of the range (`1[8-10]` is `18-110`, as
/// ClusterShell reads it).
fn amend_leading<'a>(
    whole: &str,
    outer: &'a str,
    inner: Cow<'a, str>,
    inner_at: usize,
) -> Result<(&'a str, Cow<'a, str>)> {
    let stripped = outer.trim_end_matches(|c: char| c.is_ascii_digit());
    if stripped.len() == outer.len() {
        return Ok((outer, inner));
    }
    let digits = outer.get(stripped.len()..).unwrap_or("");
    let owned = matches!(inner, Cow::Owned(_));
    let set = parse_range(whole, &inner, if owned { 0 } else { inner_at }).map_err(|e| match e {
        EvalError::At { reason, .. } if owned => at(inner_at, reason),
        other => other,
    })?;
    let amended: Vec<String> = set
        .run_texts()
        .iter()
        .map(|elem| {
            elem.split('-')
                .map(|b| format!("{digits}{b}"))
                .collect::<Vec<_>>()
                .join("-")
        })
        .collect();
    Ok((stripped, Cow::Owned(amended.join(","))))
}

fn parse_range(_whole: &str, text: &str, text_at: usize) -> Result<RangeSet> {
    RangeSet::parse(text, MAX_NAMES).map_err(|e| match e {
        None => EvalError::TooMany,
        Some(e) => at(text_at + e.at, e.reason),
    })
}

/// `_scan_string`: the operands of `s` (already stripped).
fn scan(whole: &str) -> Result<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut rest: Option<&str> = Some(whole);
    let mut next = Op::Union;
    while let Some(ns) = rest.filter(|r| !r.is_empty()) {
        let ns = ns.trim_start_matches(is_py_space);
        let token_at = offset(whole, ns);
        let operand = if opens_first(ns.find('['), next_op(ns)) {
            bracketed_operand(whole, ns)?
        } else {
            plain_operand(whole, ns)?
        };
        tokens.push(Token {
            op: next,
            pattern: operand.pattern,
            rsets: operand.rsets,
            at: token_at,
        });
        rest = None;
        if let Some((tail, op)) = operand.then {
            rest = Some(tail);
            next = op;
        }
    }
    Ok(tokens)
}

/// One operand scanned: its pattern and range sets, and the text after the operator that
/// ends it, with that operator (`None`: it was the last).
struct Operand<'a> {
    pattern: Pattern,
    rsets: Vec<RangeSet>,
    then: Option<(&'a str, Op)>,
}

/// Whether a `[` comes before the next operator: the operand holds a range.
fn opens_first(bracket: Option<usize>, op: Option<(usize, Op)>) -> bool {
    match (bracket, op) {
        (Some(b), Some((o, _))) => o > b,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// An operand without brackets (`esx01`), up to the next operator.
fn plain_operand<'a>(whole: &str, ns: &'a str) -> Result<Operand<'a>> {
    let (node, then) = match next_op(ns) {
        None => (ns, None),
        Some((i, o)) => {
            let node = ns.get(..i).unwrap_or("");
            let tail = ns.get(i + 1..).unwrap_or("");
            if node.is_empty() || tail.is_empty() {
                return Err(missing_operand(whole, ns, i));
            }
            (node, Some((tail, o)))
        }
    };
    if let Some(i) = node.find(']') {
        return Err(at(offset(whole, node) + i, "']' without a matching '['"));
    }
    let node = node.trim_end_matches(is_py_space);
    let (pattern, rsets) = scan_single(whole, node)?;
    Ok(Operand { pattern, rsets, then })
}

/// An operand with ranges (`rack[1-2]esx[01-04]`): each range with the text before it,
/// then the text after the last one, up to the next operator.
fn bracketed_operand<'a>(whole: &str, ns: &'a str) -> Result<Operand<'a>> {
    let mut pattern = Pattern(vec![String::new()]);
    let mut rsets: Vec<RangeSet> = Vec::new();
    let mut sfx: &str = ns;
    while opens_first(sfx.find('['), next_op(sfx)) {
        let Some((pfx, after)) = sfx.split_once('[') else { break };
        sfx = one_range(whole, pfx, after, &mut pattern, &mut rsets)?;
    }
    let mut then = None;
    if let Some((i, o)) = next_op(sfx) {
        let tail = sfx.get(i + 1..).unwrap_or("");
        if tail.is_empty() {
            return Err(missing_operand(whole, sfx, i));
        }
        then = Some((tail, o));
        sfx = sfx.get(..i).unwrap_or("");
    }
    let sfx = sfx.trim_end_matches(is_py_space);
    if !sfx.is_empty() {
        let (p, r) = scan_single(whole, sfx)?;
        pattern.push_pattern(&p);
        rsets.extend(r);
    }
    Ok(Operand { pattern, rsets, then })
}

/// One `[range]` of an operand, `pfx` the text before its `[` and `after` the text after:
/// the prefix's text and numbers and the range are added to `pattern` and `rsets`, with
/// digits touching the brackets taken into the range as ClusterShell does. Returns the
/// text after the `]` (and its digits).
fn one_range<'a>(
    whole: &str,
    pfx: &'a str,
    after: &'a str,
    pattern: &mut Pattern,
    rsets: &mut Vec<RangeSet>,
) -> Result<&'a str> {
    let open_at = offset(whole, after).saturating_sub(1);
    let Some((rng_raw, after_close)) = after.split_once(']') else {
        return Err(at(open_at, "'[' is never closed"));
    };
    let mut sfx = after_close;
    if let Some(i) = pfx.find(']') {
        return Err(at(offset(whole, pfx) + i, "']' without a matching '['"));
    }
    if !sfx.is_empty() {
        let end = sfx.find(']');
        let start = sfx.find('[').or(end.map(|e| e + 1));
        if let (Some(e), Some(s)) = (end, start) {
            if e < s {
                return Err(at(offset(whole, sfx) + e, "']' without a matching '['"));
            }
        }
    }
    let rng_at = offset(whole, rng_raw);
    let mut rng: Cow<str> = Cow::Borrowed(rng_raw);
    if !sfx.is_empty() {
        (sfx, rng) = amend_trailing(whole, sfx, rng)?;
    }
    // Errors in a range amended with digits from outside point at its '['.
    let range_at = |r: &Cow<str>| if matches!(r, Cow::Borrowed(_)) { rng_at } else { open_at };
    if !pfx.is_empty() {
        let ra = range_at(&rng);
        let prefix;
        (prefix, rng) = amend_leading(whole, pfx, rng, ra)?;
        if !prefix.is_empty() {
            let (p, r) = scan_single(whole, prefix)?;
            pattern.push_pattern(&p);
            rsets.extend(r);
        }
    }
    if sfx.starts_with('[') {
        return Err(at(
            offset(whole, sfx),
            "a range right after another one: put text between them (r[1-2]n[1-4])",
        ));
    }
    pattern.push_number();
    let ra = range_at(&rng);
    rsets.push(match &rng {
        Cow::Borrowed(text) => parse_range(whole, text, ra)?,
        Cow::Owned(text) => parse_range(whole, text, 0).map_err(|e| match e {
            EvalError::At { reason, .. } => at(ra, reason),
            other => other,
        })?,
    });
    Ok(sfx)
}

fn missing_operand(whole: &str, around: &str, i: usize) -> EvalError {
    let c = around.get(i..).and_then(|r| r.chars().next()).unwrap_or(',');
    let what = match c {
        ',' => "a name is missing before or after this ','".to_string(),
        _ => format!("the operator '{c}' needs a node set on both sides"),
    };
    at(offset(whole, around) + i, what)
}

/// Evaluates node sets with a group resolver.
pub(crate) struct Engine<'r> {
    pub(crate) resolver: &'r mut dyn Resolver,
    wildcards: bool,
    all_nodes_cache: Option<HashSet<String>>,
    depth: usize,
}

/// Groups inside groups deeper than this are a loop.
const MAX_DEPTH: usize = 32;

/// The evaluated set and, for each operand, its names in written order.
pub(crate) struct Evaluated {
    pub(crate) set: NodeSetBase,
    pub(crate) written: Vec<String>,
}

impl<'r> Engine<'r> {
    pub(crate) fn new(resolver: &'r mut dyn Resolver) -> Self {
        Engine {
            resolver,
            wildcards: true,
            all_nodes_cache: None,
            depth: 0,
        }
    }

    /// `parse_string`: evaluates `text` left to right.
    pub(crate) fn eval(&mut self, text: &str, namespace: Option<&str>) -> Result<Evaluated> {
        let whole = text.trim_matches(is_py_space);
        let lead = offset(text, whole);
        let shift = |e: EvalError| match e {
            EvalError::At { at: a, reason } => at(a + lead, reason),
            other => other,
        };
        let tokens = scan(whole).map_err(shift)?;
        let mut set = NodeSetBase::default();
        let mut written = Vec::new();
        for token in tokens {
            let token_at = token.at + lead;
            let mut operand = if token.pattern.starts_with('@') {
                self.group_operand(token.pattern, token.rsets, namespace, token_at)?
            } else if self.wildcards && token.pattern.contains_any(&['*', '?']) {
                self.wildcard_operand(token.pattern, token.rsets, namespace, token_at)?
            } else {
                let o = NodeSetBase::new(token.pattern, Ranges::from_rsets(token.rsets));
                if o.size_hint() > MAX_NAMES as u128 {
                    return Err(EvalError::TooMany);
                }
                o
            };
            written.extend(operand.names());
            match token.op {
                Op::Union => set.update(&mut operand),
                Op::Difference => set.difference_update(&mut operand),
                Op::Intersection => set.intersection_update(&mut operand),
                Op::SymmetricDifference => set.symmetric_difference_update(&mut operand),
            }
            if set.size_hint() > 4 * MAX_NAMES as u128 {
                return Err(EvalError::TooMany);
            }
        }
        Ok(Evaluated { set, written })
    }

    fn group_operand(
        &mut self,
        pattern: Pattern,
        rsets: Vec<RangeSet>,
        namespace: Option<&str>,
        token_at: usize,
    ) -> Result<NodeSetBase> {
        let mut result = NodeSetBase::default();
        let mut groups = NodeSetBase::new(pattern, Ranges::from_rsets(rsets));
        if groups.size_hint() > MAX_NAMES as u128 {
            return Err(EvalError::TooMany);
        }
        if self.depth >= MAX_DEPTH {
            return Err(at(
                token_at,
                "groups nested too deep: a group includes itself, directly or through another group",
            ));
        }
        for name in groups.names() {
            let group_text = name.get(1..).unwrap_or("");
            let (ns, group) = match group_text.split_once(':') {
                Some((ns, g)) => (Some(ns), g),
                None => (namespace, group_text),
            };
            let fail = |e: GroupError| at(token_at, format!("{name}: {e}"));
            let members: Vec<String> = if group == "*" {
                self.all_nodes(ns).map_err(fail)?
            } else if group.starts_with('@') {
                let source = group_text.get(1..).unwrap_or("");
                self.grouplist(Some(source)).map_err(fail)?
            } else {
                self.resolver.group_nodes(group, ns).map_err(fail)?
            };
            let text = members.join(",");
            if !text.is_empty() {
                self.depth += 1;
                let inner = self.eval(&text, ns);
                self.depth -= 1;
                let mut inner = inner.map_err(|e| match e {
                    EvalError::At { reason, .. } => at(token_at, format!("in {name} ({text}): {reason}")),
                    other => other,
                })?;
                result.update(&mut inner.set);
            }
        }
        Ok(result)
    }

    /// `ParsingEngine.grouplist`: group names of a source, ranges expanded, sorted.
    fn grouplist(&mut self, namespace: Option<&str>) -> std::result::Result<Vec<String>, GroupError> {
        let names = self.resolver.grouplist(namespace)?;
        let mut set = NodeSetBase::default();
        for g in names {
            let tokens = scan(g.trim_matches(is_py_space))
                .map_err(|_| GroupError::Failed(format!("group name {g:?} is not a node set")))?;
            for t in tokens {
                let mut o = NodeSetBase::new(t.pattern, Ranges::from_rsets(t.rsets));
                match t.op {
                    Op::Union => set.update(&mut o),
                    Op::Difference => set.difference_update(&mut o),
                    Op::Intersection => set.intersection_update(&mut o),
                    Op::SymmetricDifference => set.symmetric_difference_update(&mut o),
                }
            }
        }
        Ok(set.names())
    }

    /// `ParsingEngine.all_nodes`: the source's `all`, else every group's nodes.
    fn all_nodes(&mut self, namespace: Option<&str>) -> std::result::Result<Vec<String>, GroupError> {
        match self.resolver.all_nodes(namespace) {
            Ok(v) => Ok(v),
            Err(GroupError::NoUpcall(_)) => {
                let mut all = Vec::new();
                for g in self.grouplist(namespace)? {
                    match self.resolver.group_nodes(&g, namespace) {
                        Ok(v) => all.extend(v),
                        Err(GroupError::NoUpcall(_)) => {
                            return Err(GroupError::Failed(
                                "the group source can list neither all nodes nor its groups (no 'all', or no 'map' and 'list')".into(),
                            ))
                        }
                        Err(e) => return Err(e),
                    }
                }
                Ok(all)
            }
            Err(e) => Err(e),
        }
    }

    fn wildcard_operand(
        &mut self,
        pattern: Pattern,
        rsets: Vec<RangeSet>,
        namespace: Option<&str>,
        token_at: usize,
    ) -> Result<NodeSetBase> {
        let mut masks = NodeSetBase::new(pattern, Ranges::from_rsets(rsets));
        if masks.size_hint() > MAX_NAMES as u128 {
            return Err(EvalError::TooMany);
        }
        let masks = masks.names();
        if self.all_nodes_cache.is_none() {
            self.wildcards = false;
            let collected = self.collect_all_nodes(namespace, token_at);
            self.wildcards = true;
            self.all_nodes_cache = Some(collected?);
        }
        let mut all = self.all_nodes_cache.clone().unwrap_or_default();
        let mut result = NodeSetBase::default();
        for mask in masks {
            let mut matched: Vec<String> = all.iter().filter(|n| fnmatch(&mask, n)).cloned().collect();
            matched.sort();
            for node in matched {
                all.remove(&node);
                let (p, r) = scan_single(&node, &node).map_err(|e| match e {
                    EvalError::At { reason, .. } => at(token_at, format!("{node}: {reason}")),
                    other => other,
                })?;
                result.update(&mut NodeSetBase::new(p, Ranges::from_rsets(r)));
            }
        }
        Ok(result)
    }

    fn collect_all_nodes(&mut self, namespace: Option<&str>, token_at: usize) -> Result<HashSet<String>> {
        let all = self
            .all_nodes(namespace)
            .map_err(|e| at(token_at, format!("'*' and '?' match the group source's nodes: {e}")))?;
        let mut set = NodeSetBase::default();
        for res in all {
            let mut ev = self.eval(&res, namespace).map_err(|e| match e {
                EvalError::At { reason, .. } => at(token_at, format!("in the list of all nodes ({res}): {reason}")),
                other => other,
            })?;
            set.update(&mut ev.set);
        }
        Ok(set.names().into_iter().collect())
    }
}

/// `fnmatch` with `*` and `?` (names hold no brackets by then), case-sensitive.
fn fnmatch(mask: &str, name: &str) -> bool {
    let m: Vec<char> = mask.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut mi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match m.get(mi) {
            Some('*') => {
                star = Some((mi, ni));
                mi += 1;
            }
            Some(c) if *c == '?' || Some(c) == n.get(ni) => {
                mi += 1;
                ni += 1;
            }
            _ => match star {
                Some((smi, sni)) => {
                    mi = smi + 1;
                    ni = sni + 1;
                    star = Some((smi, sni + 1));
                }
                None => return false,
            },
        }
    }
    m.get(mi..).unwrap_or(&[]).iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_stars_and_marks() {
        assert!(fnmatch("esx*", "esx01"));
        assert!(fnmatch("esx0?", "esx01"));
        assert!(!fnmatch("esx0?", "esx011"));
        assert!(fnmatch("*1*", "a1b"));
        assert!(!fnmatch("a*c", "abd"));
    }
}

//! ClusterShell's `NodeSetBase`: names grouped by pattern (`esx%s.dc%s`, the text around
//! their numbers), each pattern with the set of its indexes, and the set algebra on it.
use super::nd::RangeSetNd;
use super::rangeset::RangeSet;
use std::collections::BTreeMap;

/// The text of names around their numbers: `r%sn%s` is `["r", "n", ""]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Pattern(pub(crate) Vec<String>);

impl Pattern {
    /// The key ClusterShell sorts patterns by: `%` doubled, `%s` for each number.
    pub(crate) fn key(&self) -> String {
        self.0
            .iter()
            .map(|p| p.replace('%', "%%"))
            .collect::<Vec<_>>()
            .join("%s")
    }

    pub(crate) fn push_text(&mut self, text: &str) {
        match self.0.last_mut() {
            Some(last) => last.push_str(text),
            None => self.0.push(text.to_string()),
        }
    }

    pub(crate) fn push_pattern(&mut self, other: &Pattern) {
        let mut parts = other.0.iter();
        if let Some(first) = parts.next() {
            self.push_text(first);
        }
        self.0.extend(parts.cloned());
    }

    pub(crate) fn push_number(&mut self) {
        if self.0.is_empty() {
            self.0.push(String::new());
        }
        self.0.push(String::new());
    }

    pub(crate) fn text(&self) -> String {
        self.0.concat()
    }

    pub(crate) fn starts_with(&self, c: char) -> bool {
        self.0.first().is_some_and(|p| p.starts_with(c))
    }

    pub(crate) fn contains_any(&self, chars: &[char]) -> bool {
        self.0.iter().any(|p| p.contains(chars))
    }

    /// Fills the numbers in: `fill(["1", "01"])` on `r%sn%s` gives `r1n01`.
    pub(crate) fn fill<S: AsRef<str>>(&self, values: &[S]) -> String {
        let mut out = String::new();
        for (i, part) in self.0.iter().enumerate() {
            out.push_str(part);
            if let Some(v) = values.get(i) {
                out.push_str(v.as_ref());
            }
        }
        out
    }
}

/// The indexes of one pattern.
#[derive(Debug, Clone)]
pub(crate) enum Ranges {
    One(RangeSet),
    Nd(RangeSetNd),
}

impl Ranges {
    /// From a pattern's scanned range sets (`_rsets4nsb`).
    pub(crate) fn from_rsets(mut rsets: Vec<RangeSet>) -> Option<Ranges> {
        match rsets.len() {
            0 => None,
            1 => rsets.pop().map(Ranges::One),
            _ => Some(Ranges::Nd(RangeSetNd::from_vector(rsets))),
        }
    }

    fn truthy(&self) -> bool {
        match self {
            Ranges::One(r) => !r.is_empty(),
            Ranges::Nd(r) => !r.is_empty(),
        }
    }

    fn len(&mut self) -> u128 {
        match self {
            Ranges::One(r) => r.len() as u128,
            Ranges::Nd(r) => r.len(),
        }
    }

    fn size_hint(&self) -> u128 {
        match self {
            Ranges::One(r) => r.len() as u128,
            Ranges::Nd(r) => r.size_hint(),
        }
    }

    fn copy(&mut self) -> Ranges {
        match self {
            Ranges::One(r) => Ranges::One(r.clone()),
            Ranges::Nd(r) => Ranges::Nd(r.copy()),
        }
    }

    fn update(&mut self, other: &Ranges) {
        match (self, other) {
            (Ranges::One(a), Ranges::One(b)) => a.extend(b),
            (Ranges::Nd(a), Ranges::Nd(b)) => a.update(b),
            _ => {}
        }
    }
}

/// Names by pattern, sorted by the pattern's key.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeSetBase {
    patterns: BTreeMap<String, (Pattern, Option<Ranges>)>,
}

impl NodeSetBase {
    pub(crate) fn new(pattern: Pattern, ranges: Option<Ranges>) -> Self {
        let mut s = NodeSetBase::default();
        s.patterns.insert(pattern.key(), (pattern, ranges));
        s
    }

    /// Upper bound on the number of names, without folding.
    pub(crate) fn size_hint(&self) -> u128 {
        self.patterns
            .values()
            .map(|(_, r)| r.as_ref().map_or(1, Ranges::size_hint))
            .fold(0u128, u128::saturating_add)
    }

    fn add(&mut self, pattern: &Pattern, ranges: &mut Option<Ranges>) {
        let key = pattern.key();
        match self.patterns.get_mut(&key) {
            Some((_, existing)) => {
                if let (Some(e), Some(r)) = (existing.as_mut(), ranges.as_ref()) {
                    if e.truthy() {
                        e.update(r);
                    }
                }
            }
            None => {
                let copy = ranges.as_mut().map(Ranges::copy);
                self.patterns.insert(key, (pattern.clone(), copy));
            }
        }
    }

    pub(crate) fn update(&mut self, other: &mut NodeSetBase) {
        for (pattern, ranges) in other.patterns.values_mut() {
            self.add(pattern, ranges);
        }
    }

    pub(crate) fn intersection_update(&mut self, other: &mut NodeSetBase) {
        let mut result: BTreeMap<String, (Pattern, Option<Ranges>)> = BTreeMap::new();
        for (key, (pattern, iranges)) in other.patterns.iter_mut() {
            let mine = self.patterns.get_mut(key);
            match mine {
                Some((_, Some(r))) if r.truthy() => {
                    let mut inter = match (r, iranges.as_ref()) {
                        (Ranges::One(a), Some(Ranges::One(b))) => Ranges::One(a.intersection(b)),
                        (Ranges::Nd(a), Some(Ranges::Nd(b))) => {
                            let mut c = a.copy();
                            c.intersection_update(b);
                            Ranges::Nd(c)
                        }
                        _ => continue,
                    };
                    if inter.len() > 0 {
                        result.insert(key.clone(), (pattern.clone(), Some(inter)));
                    }
                }
                Some((_, None)) if iranges.is_none() => {
                    result.insert(key.clone(), (pattern.clone(), None));
                }
                _ => {}
            }
        }
        self.patterns = result;
    }

    pub(crate) fn difference_update(&mut self, other: &mut NodeSetBase) {
        let mut purge = Vec::new();
        for (key, (_, eranges)) in other.patterns.iter() {
            match self.patterns.get_mut(key) {
                Some((_, Some(r))) if r.truthy() => {
                    match (&mut *r, eranges) {
                        (Ranges::One(a), Some(Ranges::One(b))) => *a = a.difference(b),
                        (Ranges::Nd(a), Some(Ranges::Nd(b))) => a.difference_update(b),
                        _ => {}
                    }
                    if r.len() == 0 {
                        purge.push(key.clone());
                    }
                }
                Some(_) => purge.push(key.clone()),
                None => {}
            }
        }
        for key in purge {
            self.patterns.remove(&key);
        }
    }

    pub(crate) fn symmetric_difference_update(&mut self, other: &mut NodeSetBase) {
        let mut purge = Vec::new();
        for (key, (_, ranges)) in self.patterns.iter_mut() {
            match other.patterns.get_mut(key) {
                Some((_, Some(b))) if b.truthy() => match (ranges.as_mut(), b) {
                    (Some(Ranges::One(a)), Ranges::One(b)) => *a = a.symmetric_difference(b),
                    (Some(Ranges::Nd(a)), Ranges::Nd(b)) => a.symmetric_difference_update(b),
                    _ => {}
                },
                Some(_) => purge.push(key.clone()),
                None => {}
            }
        }
        for (key, (pattern, branges)) in other.patterns.iter_mut() {
            if !self.patterns.contains_key(key) {
                self.add(pattern, branges);
            }
        }
        for (key, (_, ranges)) in self.patterns.iter_mut() {
            if let Some(r) = ranges {
                if r.len() == 0 {
                    purge.push(key.clone());
                }
            }
        }
        for key in purge {
            self.patterns.remove(&key);
        }
    }

    /// The names, in ClusterShell's order (`nodeset -e`).
    pub(crate) fn names(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for (pattern, ranges) in self.patterns.values_mut() {
            match ranges {
                None => out.push(pattern.text()),
                Some(Ranges::One(r)) => out.extend(r.iter().map(|i| pattern.fill(&[i]))),
                Some(Ranges::Nd(r)) => {
                    for v in r.vectors() {
                        let mut acc: Vec<Vec<&str>> = vec![Vec::new()];
                        for set in v {
                            acc = acc
                                .into_iter()
                                .flat_map(|prefix| {
                                    set.iter().map(move |i| {
                                        let mut t = prefix.clone();
                                        t.push(i);
                                        t
                                    })
                                })
                                .collect();
                        }
                        out.extend(acc.iter().map(|t| pattern.fill(t)));
                    }
                }
            }
        }
        out
    }

    /// The folded text (`nodeset -f`), one string per folded item: `esx[01-40]`,
    /// `r[1-2]n[01-04]`, `db1`.
    pub(crate) fn folded_items(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for (pattern, ranges) in self.patterns.values_mut() {
            match ranges {
                None => out.push(pattern.text()),
                Some(Ranges::One(r)) => {
                    let text = r.to_string();
                    out.push(pattern.fill(&[if r.len() > 1 { format!("[{text}]") } else { text }]));
                }
                Some(Ranges::Nd(r)) => {
                    for v in r.vectors() {
                        let axes: Vec<String> = v
                            .iter()
                            .map(|set| {
                                if set.len() > 1 {
                                    format!("[{set}]")
                                } else {
                                    set.to_string()
                                }
                            })
                            .collect();
                        out.push(pattern.fill(&axes));
                    }
                }
            }
        }
        out
    }

    /// Each folded item with its pattern and per-number range sets, for splitting a long
    /// item into shorter ones that still paste back.
    pub(crate) fn folded_vectors(&mut self) -> Vec<(Pattern, Vec<RangeSet>)> {
        let mut out = Vec::new();
        for (pattern, ranges) in self.patterns.values_mut() {
            match ranges {
                None => out.push((pattern.clone(), Vec::new())),
                Some(Ranges::One(r)) => out.push((pattern.clone(), vec![r.clone()])),
                Some(Ranges::Nd(r)) => {
                    for v in r.vectors() {
                        out.push((pattern.clone(), v.clone()));
                    }
                }
            }
        }
        out
    }
}

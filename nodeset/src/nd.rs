//! ClusterShell's `RangeSetND`: the indexes of names with several numbers (`r1n01`) as a
//! list of vectors of [`RangeSet`]s, one per number, each vector standing for their
//! product. Ported operation by operation (including when it folds and how), because the
//! folded text (`r[1-2]n[01-02]`) depends on it and must read exactly as `nodeset -f`.
use super::rangeset::RangeSet;
use std::cmp::{Ordering, Reverse};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Default)]
pub(crate) struct RangeSetNd {
    veclist: Vec<Vec<RangeSet>>,
    dirty: bool,
    multivar_hint: bool,
}

fn vec_size(v: &[RangeSet]) -> u128 {
    v.iter().fold(1u128, |acc, r| acc.saturating_mul(r.len() as u128))
}

/// Two vectors that differ in one number at most, merged (`_fold_multivariate_merge`'s
/// comparison): disjoint sets are joined, a set inside the other gives the larger one.
fn merge_vectors(item1: &[RangeSet], item2: &[RangeSet]) -> Option<Vec<RangeSet>> {
    // First by reference (most pairs do not merge), then build the one that does.
    let mut differing: Option<(usize, bool)> = None; // (position, join rather than keep larger)
    for (pos, (rg1, rg2)) in item1.iter().zip(item2).enumerate() {
        if rg1 == rg2 {
            continue;
        }
        let join = if !rg1.intersects(rg2) {
            true
        } else if rg1.is_proper_subset(rg2) || rg2.is_proper_subset(rg1) {
            false
        } else {
            return None;
        };
        if differing.is_some() {
            return None;
        }
        differing = Some((pos, join));
    }
    let mut new_item = item1.to_vec();
    if let Some((pos, join)) = differing {
        if let (Some(slot), Some(rg2)) = (new_item.get_mut(pos), item2.get(pos)) {
            if join {
                slot.extend(rg2);
            } else if slot.is_proper_subset(rg2) {
                // Python's max(): the second only when it is larger.
                *slot = rg2.clone();
            }
        }
    }
    Some(new_item)
}

impl RangeSetNd {
    /// One vector (`RangeSetND([rsets])`): not folded yet.
    pub(crate) fn from_vector(v: Vec<RangeSet>) -> Self {
        RangeSetNd {
            veclist: vec![v],
            dirty: true,
            multivar_hint: false,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.veclist.is_empty()
    }

    fn fold_if_dirty(&mut self) {
        if self.dirty {
            self.fold();
        }
    }

    /// The folded vectors.
    pub(crate) fn vectors(&mut self) -> &[Vec<RangeSet>] {
        self.fold_if_dirty();
        &self.veclist
    }

    /// Number of index tuples (folds first, as `len()` does in ClusterShell).
    pub(crate) fn len(&mut self) -> u128 {
        self.fold_if_dirty();
        self.veclist
            .iter()
            .map(|v| vec_size(v))
            .fold(0u128, u128::saturating_add)
    }

    /// Upper bound on the number of tuples without folding.
    pub(crate) fn size_hint(&self) -> u128 {
        self.veclist
            .iter()
            .map(|v| vec_size(v))
            .fold(0u128, u128::saturating_add)
    }

    fn set_veclist(&mut self, v: Vec<Vec<RangeSet>>) {
        self.veclist = v;
        self.dirty = true;
    }

    /// `copy()`: folds self, then copies; the copy has no multivariate hint.
    pub(crate) fn copy(&mut self) -> Self {
        self.fold_if_dirty();
        RangeSetNd {
            veclist: self.veclist.clone(),
            dirty: self.dirty,
            multivar_hint: false,
        }
    }

    fn fold(&mut self) {
        if self.veclist.len() > 1 {
            if !self.fold_univariate() {
                self.fold_multivariate();
            }
        } else {
            self.dirty = false;
        }
    }

    fn dim(&self) -> usize {
        self.veclist.first().map_or(0, Vec::len)
    }

    fn fold_univariate(&mut self) -> bool {
        let dim = self.dim();
        let mut vardim = 0;
        let mut dimdiff = 0;
        if dim > 1 {
            for i in 0..dim {
                let first = self.veclist.first().and_then(|v| v.get(i));
                let same = self.veclist.iter().all(|v| v.get(i) == first);
                if !same {
                    dimdiff += 1;
                    if dimdiff > 1 {
                        break;
                    }
                    vardim = i;
                }
            }
        }
        let univar = dim == 1 || dimdiff == 1;
        if univar {
            let rest: Vec<Vec<RangeSet>> = self.veclist.drain(1..).collect();
            if let Some(target) = self.veclist.first_mut().and_then(|v| v.get_mut(vardim)) {
                for v in rest {
                    if let Some(r) = v.get(vardim) {
                        target.extend(r);
                    }
                }
            }
            self.dirty = false;
        }
        self.multivar_hint = !univar;
        univar
    }

    fn fold_multivariate(&mut self) {
        // Phase 1: every tuple once, as a vector of single indexes.
        let mut tuples: BTreeSet<Vec<String>> = BTreeSet::new();
        for v in &self.veclist {
            let mut acc: Vec<Vec<String>> = vec![Vec::new()];
            for r in v {
                acc = acc
                    .into_iter()
                    .flat_map(|prefix| {
                        r.iter().map(move |i| {
                            let mut t = prefix.clone();
                            t.push(i.to_string());
                            t
                        })
                    })
                    .collect();
            }
            tuples.extend(acc);
        }
        self.veclist = tuples
            .into_iter()
            .map(|t| t.iter().map(|i| RangeSet::one(i)).collect())
            .collect();
        self.fold_multivariate_merge();
        self.dirty = false;
    }

    /// `_sort`: larger vectors first, then per dimension larger sets, lower first index,
    /// lower last index (indexes compared as text, as Python compares them).
    fn sort(&mut self) {
        self.veclist.sort_by(|a, b| {
            let ka = Reverse(vec_size(a));
            let kb = Reverse(vec_size(b));
            ka.cmp(&kb).then_with(|| {
                for (ra, rb) in a.iter().zip(b) {
                    let o = Reverse(ra.len())
                        .cmp(&Reverse(rb.len()))
                        .then_with(|| ra.first().cmp(rb.first()))
                        .then_with(|| ra.last().cmp(rb.last()));
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.len().cmp(&b.len())
            })
        });
    }

    fn fold_multivariate_merge(&mut self) {
        let mut full = false;
        let mut chg = true;
        while chg {
            chg = false;
            self.sort();
            let mut index1 = 0;
            while index1 + 1 < self.veclist.len() {
                // item1 is always self.veclist[index1 - 1] after this step.
                let mut index2 = index1 + 1;
                index1 += 1;
                while index2 < self.veclist.len() {
                    let merged = match (self.veclist.get(index1 - 1), self.veclist.get(index2)) {
                        (Some(item1), Some(item2)) => merge_vectors(item1, item2),
                        _ => None,
                    };
                    index2 += 1;
                    match merged {
                        Some(new_item) => {
                            chg = true;
                            if let Some(slot) = self.veclist.get_mut(index1 - 1) {
                                *slot = new_item;
                            }
                            index2 -= 1;
                            self.veclist.remove(index2);
                        }
                        None if !full => break,
                        None => {}
                    }
                }
            }
            if !chg && !full {
                chg = true;
                full = true;
            }
        }
    }

    /// `update`: appends the other's vectors as they are, then folds on one dimension
    /// when it can (until a multivariate fold was once needed).
    pub(crate) fn update(&mut self, other: &RangeSetNd) {
        self.veclist.extend(other.veclist.iter().cloned());
        self.dirty = true;
        if !self.multivar_hint {
            self.fold_univariate();
        }
    }

    pub(crate) fn update_vectors(&mut self, vectors: Vec<Vec<RangeSet>>) {
        self.veclist.extend(vectors);
        self.dirty = true;
        if !self.multivar_hint {
            self.fold_univariate();
        }
    }

    pub(crate) fn difference_update(&mut self, other: &RangeSetNd) {
        let ergvx = &other.veclist;
        let mut rgnd_new: Vec<Vec<RangeSet>> = Vec::new();
        for rgvec1 in &self.veclist {
            let mut procvx1: Vec<Vec<RangeSet>> = vec![rgvec1.clone()];
            let mut nextvx1: Vec<Vec<RangeSet>> = Vec::new();
            for rgvec2 in ergvx {
                while !procvx1.is_empty() {
                    let rgproc1 = procvx1.remove(0);
                    let mut tmpvx: Vec<Vec<RangeSet>> = Vec::new();
                    for (pos, (rg1, rg2)) in rgproc1.iter().zip(rgvec2).enumerate() {
                        if rg1.is_subset(rg2) {
                        } else if rg1.intersects(rg2) {
                            let mut tmpvec = rgproc1.clone();
                            if let Some(slot) = tmpvec.get_mut(pos) {
                                *slot = rg1.difference(rg2);
                            }
                            tmpvx.push(tmpvec);
                        } else {
                            tmpvx = vec![rgproc1.clone()];
                            break;
                        }
                    }
                    nextvx1.extend(tmpvx);
                }
                if !nextvx1.is_empty() {
                    procvx1 = std::mem::take(&mut nextvx1);
                }
            }
            rgnd_new.extend(procvx1);
        }
        self.set_veclist(rgnd_new);
    }

    pub(crate) fn intersection_update(&mut self, other: &RangeSetNd) {
        let mut tmp = RangeSetNd::default();
        for rgvec in &self.veclist {
            for ergvec in &other.veclist {
                let irgvec: Vec<RangeSet> = rgvec.iter().zip(ergvec).map(|(a, b)| a.intersection(b)).collect();
                if !irgvec.iter().any(RangeSet::is_empty) {
                    tmp.update_vectors(vec![irgvec]);
                }
            }
        }
        let v = tmp.vectors().to_vec();
        self.set_veclist(v);
    }

    pub(crate) fn symmetric_difference_update(&mut self, other: &mut RangeSetNd) {
        let mut diff2 = other.copy();
        diff2.difference_update(self);
        self.difference_update(other);
        self.update(&diff2);
    }
}

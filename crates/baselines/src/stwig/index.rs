//! The label index and STwig matching (paper 004 Sec. 3.2, Algorithm 1).
//!
//! The only index STwig keeps is label → vertices. A twig (r, L) is matched
//! by taking the root candidates S (all vertices with r's label for the
//! first twig, the bindings earlier results give r for the others), and for
//! each n ∈ S the per-leaf sets T_l = { m ∈ N(n) : label(m) = label(l) };
//! the result is {n} × T_1 × … × T_|L|.
//!
//! Closing the gaps of the paper (see NOTES.md):
//! * two leaves with the same label must take different data vertices
//!   (injectivity inside one twig; the root differs from every leaf since
//!   the graph has no self-loops, and leaves of different labels differ);
//! * the edge (n, m) must carry the query edge's label when the query is
//!   edge-labelled;
//! * a leaf that an earlier twig already binds is restricted to its bindings
//!   (the same pruning the paper applies to roots, around its Fig. 1).

use std::collections::HashMap;

use csm_graph::{CsrGraph, GraphView, Label, VertexId, ABSENT};
use csm_planner::QueryGraph;

use super::decompose::Twig;

/// label → ascending vertex ids (absent slots skipped).
pub struct LabelIndex {
    by_label: HashMap<Label, Vec<VertexId>>,
}

impl LabelIndex {
    pub fn build(g: &CsrGraph) -> LabelIndex {
        let mut by_label: HashMap<Label, Vec<VertexId>> = HashMap::new();
        for (v, &l) in g.labels().iter().enumerate() {
            if l != ABSENT {
                by_label.entry(l).or_default().push(v as VertexId);
            }
        }
        LabelIndex { by_label }
    }

    pub fn vertices(&self, l: Label) -> &[VertexId] {
        self.by_label.get(&l).map_or(&[], |v| v.as_slice())
    }

    pub fn freq(&self, l: Label) -> usize {
        self.vertices(l).len()
    }

    pub fn memory_bytes(&self) -> usize {
        self.by_label.values().map(|v| v.len() * 4 + 48).sum()
    }
}

/// A fixed-size bit set over data vertex ids.
#[derive(Clone, Debug)]
pub struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    pub fn new(n: usize) -> BitSet {
        BitSet {
            words: vec![0; n.div_ceil(64)],
        }
    }
    #[inline]
    pub fn contains(&self, v: VertexId) -> bool {
        self.words[v as usize >> 6] >> (v & 63) & 1 == 1
    }
    #[inline]
    pub fn insert(&mut self, v: VertexId) {
        self.words[v as usize >> 6] |= 1 << (v & 63);
    }
    pub fn set_word(&mut self, i: usize, w: u64) {
        self.words[i] = w;
    }
    pub fn union_with(&mut self, o: &BitSet) {
        for (a, b) in self.words.iter_mut().zip(&o.words) {
            *a |= b;
        }
    }
    pub fn intersect_with(&mut self, o: &BitSet) {
        for (a, b) in self.words.iter_mut().zip(&o.words) {
            *a &= b;
        }
    }
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }
    /// Members, ascending.
    pub fn to_vec(&self) -> Vec<VertexId> {
        let mut out = Vec::new();
        for (i, &w) in self.words.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                out.push((i as u32) << 6 | w.trailing_zeros());
                w &= w - 1;
            }
        }
        out
    }
}

/// A twig with everything matching needs precomputed.
pub struct TwigMatcher<'a> {
    pub twig: &'a Twig,
    leaf_labels: Vec<Label>,
    /// Required edge label per leaf (`None` when edge labels do not matter).
    leaf_elabels: Vec<Option<Label>>,
    /// For leaf j: earlier leaves with the same label (must differ from j).
    same_label_before: Vec<Vec<usize>>,
}

impl<'a> TwigMatcher<'a> {
    pub fn new(q: &QueryGraph, twig: &'a Twig) -> TwigMatcher<'a> {
        let leaf_labels: Vec<Label> = twig.leaves.iter().map(|&l| q.label(l)).collect();
        let leaf_elabels = twig
            .leaves
            .iter()
            .map(|&l| {
                if q.edge_labelled() {
                    q.edge_label(twig.root, l)
                } else {
                    None
                }
            })
            .collect();
        let same_label_before = (0..twig.leaves.len())
            .map(|j| (0..j).filter(|&i| leaf_labels[i] == leaf_labels[j]).collect())
            .collect();
        TwigMatcher {
            twig,
            leaf_labels,
            leaf_elabels,
            same_label_before,
        }
    }

    /// Record width: root plus leaves.
    pub fn width(&self) -> usize {
        1 + self.twig.leaves.len()
    }

    /// Fills `sets[j]` with the candidates of leaf j under root `n`; false
    /// when one of them is empty (no record has root `n`).
    pub fn leaf_sets(
        &self,
        g: &CsrGraph,
        n: VertexId,
        bindings: &[Option<BitSet>],
        sets: &mut Vec<Vec<VertexId>>,
    ) -> bool {
        let k = self.twig.leaves.len();
        sets.resize_with(k, Vec::new);
        for s in sets.iter_mut() {
            s.clear();
        }
        let nb = g.neighbors(n);
        let el = g.edge_labels(n);
        let labels = g.labels();
        for (i, &m) in nb.iter().enumerate() {
            let lm = labels[m as usize];
            for j in 0..k {
                if lm != self.leaf_labels[j] {
                    continue;
                }
                if let Some(want) = self.leaf_elabels[j] {
                    if el.get(i).copied().unwrap_or(0) != want {
                        continue;
                    }
                }
                if let Some(b) = &bindings[self.twig.leaves[j]] {
                    if !b.contains(m) {
                        continue;
                    }
                }
                sets[j].push(m);
            }
        }
        sets.iter().all(|s| !s.is_empty())
    }

    /// Whether the sets can possibly yield an injective record: every group
    /// of same-label leaves has at least as many distinct candidates as
    /// leaves (a necessary condition; the enumeration decides exactly).
    pub fn feasible(&self, sets: &[Vec<VertexId>]) -> bool {
        let k = self.twig.leaves.len();
        for j in 0..k {
            if self.same_label_before[j].is_empty() && (j + 1..k).any(|i| self.leaf_labels[i] == self.leaf_labels[j]) {
                let group: Vec<usize> = (j..k).filter(|&i| self.leaf_labels[i] == self.leaf_labels[j]).collect();
                let mut all: Vec<VertexId> = group.iter().flat_map(|&i| sets[i].iter().copied()).collect();
                all.sort_unstable();
                all.dedup();
                if all.len() < group.len() {
                    return false;
                }
            }
        }
        true
    }

    /// Calls `emit` with every record (root, leaf_1, …, leaf_k) of root `n`
    /// whose leaves come from `sets`, leaves of one label pairwise distinct.
    /// Leaf j ranges over `sets[j]` restricted to `first` when j = 0 and
    /// `first` is given (used to split one heavy root across threads).
    pub fn for_each_record<F: FnMut(&[VertexId])>(
        &self,
        n: VertexId,
        sets: &[Vec<VertexId>],
        first: Option<&[VertexId]>,
        rec: &mut Vec<VertexId>,
        emit: &mut F,
    ) {
        rec.clear();
        rec.push(n);
        self.extend(0, sets, first, rec, emit);
    }

    fn extend<F: FnMut(&[VertexId])>(
        &self,
        j: usize,
        sets: &[Vec<VertexId>],
        first: Option<&[VertexId]>,
        rec: &mut Vec<VertexId>,
        emit: &mut F,
    ) {
        if j == sets.len() {
            emit(rec);
            return;
        }
        let cands: &[VertexId] = match (j, first) {
            (0, Some(f)) => f,
            _ => &sets[j],
        };
        'next: for &m in cands {
            for &i in &self.same_label_before[j] {
                if rec[1 + i] == m {
                    continue 'next;
                }
            }
            rec.push(m);
            self.extend(j + 1, sets, first, rec, emit);
            rec.pop();
        }
    }
}

//! RapidFlow's global index: the data edges the query can use, and a
//! candidate set per query vertex, both maintained under inserts and deletes.
//!
//! * **Relations.** RapidFlow keeps one "global edge view" per label triple
//!   (source label, edge label, target label) of a query edge. Here all views
//!   share one adjacency: every data vertex keeps only its edges whose
//!   triple occurs in the query, sorted by (edge label, neighbour label,
//!   neighbour), so the view of one triple at one vertex is a binary-searched
//!   range and an edge check is one binary search.
//! * **Candidates.** `C(u)` holds the data vertices with `u`'s label that pass
//!   the neighbourhood label filter (NLF): for every (edge label, vertex label)
//!   pair, at least as many such neighbours as `u` has. Stored as one bit set
//!   per query vertex, with its size (the matching order reads sizes). After a
//!   batch, the NLF is re-evaluated for the endpoints of changed edges only.
//!
//! Edge labels are folded to 0 when the query ignores them.

use std::collections::HashSet;

use csm_graph::{Label, VertexId, ABSENT};
use csm_planner::QueryGraph;

/// A neighbour entry: (edge label, neighbour label, neighbour).
pub type Entry = (Label, Label, VertexId);

/// A growable bit set over data vertices.
#[derive(Clone, Debug, Default)]
pub struct Bits {
    words: Vec<u64>,
}

impl Bits {
    #[inline]
    pub fn contains(&self, v: VertexId) -> bool {
        self.words.get(v as usize >> 6).is_some_and(|w| w >> (v & 63) & 1 == 1)
    }
    /// Sets bit `v` to `on`; returns whether it changed.
    pub fn set(&mut self, v: VertexId, on: bool) -> bool {
        let i = v as usize >> 6;
        if i >= self.words.len() {
            if !on {
                return false;
            }
            self.words.resize(i + 1, 0);
        }
        let before = self.words[i] >> (v & 63) & 1 == 1;
        if on {
            self.words[i] |= 1 << (v & 63);
        } else {
            self.words[i] &= !(1 << (v & 63));
        }
        before != on
    }
    /// Members in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = VertexId> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let b = w.trailing_zeros();
                    w &= w - 1;
                    (i as VertexId) << 6 | b
                })
            })
        })
    }
    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }
}

/// The index (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct DataIndex {
    pub labels: Vec<Label>,
    adj: Vec<Vec<Entry>>,
    /// Label triples (label a, edge label, label b) of query edges, both directions.
    triples: HashSet<(Label, Label, Label)>,
    /// Per query vertex: its label and NLF requirements (edge label, label, count).
    qlabel: Vec<Label>,
    nlf: Vec<Vec<(Label, Label, u32)>>,
    cands: Vec<Bits>,
    cand_count: Vec<usize>,
    edge_labelled: bool,
    num_edges: usize,
}

impl DataIndex {
    /// Builds the index of `edges` (each undirected edge once) for `q`.
    pub fn new(
        labels: &[Label],
        edges: impl Iterator<Item = (VertexId, VertexId, Label)>,
        q: &QueryGraph,
    ) -> DataIndex {
        let n = q.num_vertices();
        let mut triples = HashSet::new();
        for &(a, b, l) in q.edges() {
            triples.insert((q.label(a), l, q.label(b)));
            triples.insert((q.label(b), l, q.label(a)));
        }
        let mut nlf = vec![Vec::new(); n];
        for (u, req) in nlf.iter_mut().enumerate() {
            for t in 0..n {
                if let Some(l) = q.edge_label(u, t) {
                    let key = (l, q.label(t));
                    match req.iter_mut().find(|r: &&mut (Label, Label, u32)| (r.0, r.1) == key) {
                        Some(r) => r.2 += 1,
                        None => req.push((key.0, key.1, 1)),
                    }
                }
            }
        }
        let mut idx = DataIndex {
            labels: labels.to_vec(),
            adj: vec![Vec::new(); labels.len()],
            triples,
            qlabel: q.labels().to_vec(),
            nlf,
            cands: vec![Bits::default(); n],
            cand_count: vec![0; n],
            edge_labelled: q.edge_labelled(),
            num_edges: 0,
        };
        for (x, y, l) in edges {
            let l = idx.fold(l);
            if idx.relevant(x, l, y) {
                idx.adj[x as usize].push((l, idx.labels[y as usize], y));
                idx.adj[y as usize].push((l, idx.labels[x as usize], x));
                idx.num_edges += 1;
            }
        }
        for list in &mut idx.adj {
            list.sort_unstable();
        }
        for v in 0..labels.len() as VertexId {
            idx.refresh(v);
        }
        idx
    }

    /// The edge label as the query sees it.
    #[inline]
    pub fn fold(&self, l: Label) -> Label {
        if self.edge_labelled {
            l
        } else {
            0
        }
    }

    #[inline]
    fn relevant(&self, x: VertexId, l: Label, y: VertexId) -> bool {
        let (lx, ly) = (self.labels[x as usize], self.labels[y as usize]);
        lx != ABSENT && ly != ABSENT && self.triples.contains(&(lx, l, ly))
    }

    /// Neighbours of `v` over edge label `el` with vertex label `nl` (ascending).
    #[inline]
    pub fn nbrs(&self, v: VertexId, el: Label, nl: Label) -> &[Entry] {
        let list = &self.adj[v as usize];
        let s = list.partition_point(|e| (e.0, e.1) < (el, nl));
        let t = s + list[s..].partition_point(|e| (e.0, e.1) <= (el, nl));
        &list[s..t]
    }

    /// Whether edge (v, w) with label `el` is present (and relevant).
    #[inline]
    pub fn has_edge(&self, v: VertexId, w: VertexId, el: Label) -> bool {
        let key = (el, self.labels[w as usize], w);
        self.adj[v as usize].binary_search(&key).is_ok()
    }

    #[inline]
    pub fn is_candidate(&self, u: usize, v: VertexId) -> bool {
        self.cands[u].contains(v)
    }

    pub fn candidates(&self, u: usize) -> &Bits {
        &self.cands[u]
    }

    pub fn candidate_count(&self, u: usize) -> usize {
        self.cand_count[u]
    }

    /// Re-evaluates `v`'s membership in every candidate set.
    fn refresh(&mut self, v: VertexId) {
        let lv = self.labels.get(v as usize).copied().unwrap_or(ABSENT);
        for u in 0..self.qlabel.len() {
            let ok = lv != ABSENT
                && self.qlabel[u] == lv
                && self.nlf[u]
                    .iter()
                    .all(|&(el, nl, c)| self.nbrs(v, el, nl).len() >= c as usize);
            if self.cands[u].set(v, ok) {
                if ok {
                    self.cand_count[u] += 1;
                } else {
                    self.cand_count[u] -= 1;
                }
            }
        }
    }

    /// Applies a batch's net effect: new vertices, deleted and inserted edges
    /// (labels already folded), removed vertices; then refreshes the
    /// candidate sets of every touched vertex.
    pub fn apply(
        &mut self,
        added: &[(VertexId, Label)],
        deleted: &[(VertexId, VertexId, Label)],
        inserted: &[(VertexId, VertexId, Label)],
        removed: &[VertexId],
    ) {
        for &(v, l) in added {
            if v as usize >= self.labels.len() {
                self.labels.resize(v as usize + 1, ABSENT);
                self.adj.resize(v as usize + 1, Vec::new());
            }
            self.labels[v as usize] = l;
        }
        let mut touched: Vec<VertexId> = added.iter().map(|a| a.0).chain(removed.iter().copied()).collect();
        for &(x, y, l) in deleted {
            if self.relevant(x, l, y) {
                for (a, b) in [(x, y), (y, x)] {
                    let key = (l, self.labels[b as usize], b);
                    let list = &mut self.adj[a as usize];
                    if let Ok(i) = list.binary_search(&key) {
                        list.remove(i);
                    }
                }
                self.num_edges -= 1;
                touched.extend([x, y]);
            }
        }
        for &(x, y, l) in inserted {
            if self.relevant(x, l, y) {
                for (a, b) in [(x, y), (y, x)] {
                    let key = (l, self.labels[b as usize], b);
                    let list = &mut self.adj[a as usize];
                    let i = list.binary_search(&key).unwrap_or_else(|i| i);
                    list.insert(i, key);
                }
                self.num_edges += 1;
                touched.extend([x, y]);
            }
        }
        for &v in removed {
            self.labels[v as usize] = ABSENT;
        }
        touched.sort_unstable();
        touched.dedup();
        for v in touched {
            self.refresh(v);
        }
    }

    /// Edges held (those whose label triple occurs in the query).
    pub fn num_edges(&self) -> usize {
        self.num_edges
    }

    /// Approximate bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.labels.len() * 4
            + self.adj.iter().map(|l| l.capacity() * 12 + 24).sum::<usize>()
            + self.cands.iter().map(Bits::bytes).sum::<usize>()
    }
}

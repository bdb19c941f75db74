//! Interval-PCSR (GENEVA Sec. 4): one CSR per edge label ("edge label
//! partition", ELP) whose row VIDs are not stored but implied by an interval
//! index, after renaming the VIDs with GENMAP (Alg. 2) so that each partition's
//! rows form few contiguous runs.
//!
//! Layout of one [`Partition`]:
//!
//! * `intervals`: `(first new VID, run length, row base)` per run of
//!   contiguous row VIDs, ascending. A VID's row is found by a binary search
//!   over the intervals (`row base + vid − first`): this replaces GSI's hash
//!   index (the paper keeps the interval index in shared memory).
//! * `offsets` / `nbrs`: the CSR. Each row's neighbours are sorted by
//!   (vertex label, VID), so the neighbours of one label are a binary-searched
//!   range and an edge check is one binary search (NOTES.md).
//! * `rows_by_label`: the row VIDs sorted by (vertex label, VID), so the first
//!   extension phase, which takes its source vertices from the partition
//!   (Alg. 1 line 4), reads one label range.
//!
//! Renaming (Alg. 2): repeatedly take the partition with the most vertices
//! not yet renamed; split those vertices into sub-partitions by their
//! *share set* (the set of partitions a vertex belongs to); name the
//! sub-partition shared by the most partitions first, then greedily the one
//! whose share set has the most partitions in common with the previous one,
//! giving each sub-partition a contiguous VID run. Inside a sub-partition the
//! paper allows any order; we use (vertex label, old VID) so that label
//! groups are contiguous too. Vertices in no partition (isolated or absent)
//! are named last.

use std::collections::HashMap;

use csm_graph::{CsrGraph, GraphView, Label, VertexId, ABSENT};
use rayon::prelude::*;

/// Above this many sub-partitions in one step, the greedy chaining of
/// Alg. 2 (quadratic) is replaced by a lexicographic sort of the share sets,
/// which keeps sets with common prefixes adjacent.
const GREEDY_SUBPARTS: usize = 1024;

/// One run of contiguous row VIDs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub first: VertexId,
    pub len: u32,
    /// Row index of `first` (prefix sum of earlier run lengths).
    pub base: u32,
}

/// One edge label partition.
#[derive(Clone, Debug, Default)]
pub struct Partition {
    pub elabel: Label,
    pub intervals: Vec<Interval>,
    pub offsets: Vec<u64>,
    pub nbrs: Vec<VertexId>,
    pub rows_by_label: Vec<VertexId>,
}

/// The whole data graph in interval-PCSR form, in renamed VIDs.
#[derive(Clone, Debug, Default)]
pub struct IntervalPcsr {
    /// Partitions sorted by edge label.
    pub partitions: Vec<Partition>,
    /// Vertex label by new VID.
    pub labels: Vec<Label>,
    /// Old VID → new VID.
    pub map: Vec<VertexId>,
}

impl Partition {
    /// Row of `v`, if `v` has an edge in this partition.
    #[inline]
    pub fn row(&self, v: VertexId) -> Option<usize> {
        let k = self.intervals.partition_point(|iv| iv.first <= v);
        if k == 0 {
            return None;
        }
        let iv = self.intervals[k - 1];
        (v - iv.first < iv.len).then(|| (iv.base + (v - iv.first)) as usize)
    }

    /// Neighbours of `v` (sorted by (label, VID)); empty when `v` has no row.
    #[inline]
    pub fn neighbours(&self, v: VertexId) -> &[VertexId] {
        match self.row(v) {
            Some(r) => &self.nbrs[self.offsets[r] as usize..self.offsets[r + 1] as usize],
            None => &[],
        }
    }

    pub fn num_rows(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Rows (source candidates of the first phase) with vertex label `l`.
    pub fn rows_with_label<'a>(&'a self, labels: &[Label], l: Label) -> &'a [VertexId] {
        label_range(&self.rows_by_label, labels, l)
    }

    /// Whether edge (u, v) is in this partition.
    #[inline]
    pub fn has_edge(&self, labels: &[Label], u: VertexId, v: VertexId) -> bool {
        let list = self.neighbours(u);
        let key = (labels[v as usize], v);
        list.binary_search_by(|&x| (labels[x as usize], x).cmp(&key)).is_ok()
    }

    /// Bytes held by the partition's arrays.
    pub fn memory_bytes(&self) -> usize {
        self.intervals.len() * 12 + self.offsets.len() * 8 + self.nbrs.len() * 4 + self.rows_by_label.len() * 4
    }
}

/// The sub-slice of a (label, VID)-sorted list whose entries have label `l`.
#[inline]
pub fn label_range<'a>(list: &'a [VertexId], labels: &[Label], l: Label) -> &'a [VertexId] {
    let s = list.partition_point(|&x| labels[x as usize] < l);
    let t = s + list[s..].partition_point(|&x| labels[x as usize] <= l);
    &list[s..t]
}

impl IntervalPcsr {
    /// Converts `g` (the paper's offline step). With `edge_labels == false`
    /// every edge goes into one partition with label 0 (the query ignores
    /// edge labels); graphs without edge labels carry label 0 anyway.
    pub fn build(g: &CsrGraph, edge_labels: bool) -> IntervalPcsr {
        let n = g.num_vertices();
        let use_el = edge_labels && g.edge_labelled();
        // distinct edge labels → partition index
        let mut elabels: Vec<Label> = if use_el {
            let mut v: Vec<Label> = (0..n as VertexId)
                .flat_map(|x| g.edge_labels(x).iter().copied())
                .collect();
            v.par_sort_unstable();
            v.dedup();
            v
        } else {
            vec![0]
        };
        if g.num_edges() == 0 {
            elabels.clear();
        }
        let pidx: HashMap<Label, u32> = elabels.iter().enumerate().map(|(i, &l)| (l, i as u32)).collect();
        let elabel_of = |v: VertexId, i: usize| -> Label {
            if use_el {
                g.edge_labels(v)[i]
            } else {
                0
            }
        };
        // share set of every vertex (sorted partition indices); interned
        let share: Vec<Vec<u32>> = (0..n as VertexId)
            .into_par_iter()
            .map(|v| {
                let mut s: Vec<u32> = (0..g.degree(v)).map(|i| pidx[&elabel_of(v, i)]).collect();
                s.sort_unstable();
                s.dedup();
                s
            })
            .collect();
        let labels = g.labels();
        let map = genmap(&share, labels, elabels.len());
        let mut new_labels = vec![ABSENT; n];
        for v in 0..n {
            new_labels[map[v] as usize] = labels[v];
        }
        let mut inverse = vec![0 as VertexId; n];
        for v in 0..n {
            inverse[map[v] as usize] = v as VertexId;
        }
        let partitions: Vec<Partition> = elabels
            .par_iter()
            .enumerate()
            .map(|(p, &el)| {
                // row VIDs (new), ascending
                let mut rows: Vec<VertexId> = (0..n)
                    .filter(|&v| share[v].binary_search(&(p as u32)).is_ok())
                    .map(|v| map[v])
                    .collect();
                rows.sort_unstable();
                let mut intervals: Vec<Interval> = Vec::new();
                for (i, &r) in rows.iter().enumerate() {
                    match intervals.last_mut() {
                        Some(iv) if iv.first + iv.len == r => iv.len += 1,
                        _ => intervals.push(Interval {
                            first: r,
                            len: 1,
                            base: i as u32,
                        }),
                    }
                }
                let mut offsets = Vec::with_capacity(rows.len() + 1);
                offsets.push(0u64);
                let mut nbrs: Vec<VertexId> = Vec::new();
                for &r in &rows {
                    let old = inverse[r as usize];
                    let start = nbrs.len();
                    for (i, &w) in g.neighbors(old).iter().enumerate() {
                        if !use_el || elabel_of(old, i) == el {
                            nbrs.push(map[w as usize]);
                        }
                    }
                    nbrs[start..].sort_unstable_by_key(|&x| (new_labels[x as usize], x));
                    offsets.push(nbrs.len() as u64);
                }
                let mut rows_by_label = rows;
                rows_by_label.sort_unstable_by_key(|&x| (new_labels[x as usize], x));
                Partition {
                    elabel: el,
                    intervals,
                    offsets,
                    nbrs,
                    rows_by_label,
                }
            })
            .collect();
        IntervalPcsr {
            partitions,
            labels: new_labels,
            map,
        }
    }

    /// The partition of edge label `l`.
    pub fn partition(&self, l: Label) -> Option<&Partition> {
        self.partitions
            .binary_search_by_key(&l, |p| p.elabel)
            .ok()
            .map(|i| &self.partitions[i])
    }

    /// Bytes of the format (partitions, labels; the rename map is host-only).
    pub fn memory_bytes(&self) -> usize {
        self.partitions.iter().map(Partition::memory_bytes).sum::<usize>() + self.labels.len() * 4
    }

    /// Total number of interval indexes over all partitions.
    pub fn num_intervals(&self) -> usize {
        self.partitions.iter().map(|p| p.intervals.len()).sum()
    }
}

/// GENMAP (Alg. 2): old VID → new VID. `share[v]` = sorted partitions of `v`.
fn genmap(share: &[Vec<u32>], labels: &[Label], num_parts: usize) -> Vec<VertexId> {
    let n = share.len();
    // sub-partitions are the classes of equal share sets
    let mut set_id: HashMap<&[u32], usize> = HashMap::new();
    let mut sets: Vec<&[u32]> = Vec::new();
    let mut members: Vec<Vec<VertexId>> = Vec::new();
    for (v, s) in share.iter().enumerate() {
        if s.is_empty() {
            continue;
        }
        let id = *set_id.entry(s.as_slice()).or_insert_with(|| {
            sets.push(s.as_slice());
            members.push(Vec::new());
            sets.len() - 1
        });
        members[id].push(v as VertexId);
    }
    for m in &mut members {
        m.sort_unstable_by_key(|&v| (labels[v as usize], v));
    }
    // sub-partitions per partition
    let mut by_part: Vec<Vec<usize>> = vec![Vec::new(); num_parts];
    for (id, s) in sets.iter().enumerate() {
        for &p in s.iter() {
            by_part[p as usize].push(id);
        }
    }
    let mut remaining: Vec<usize> = vec![0; num_parts];
    for (id, s) in sets.iter().enumerate() {
        for &p in s.iter() {
            remaining[p as usize] += members[id].len();
        }
    }
    let mut done = vec![false; sets.len()];
    let mut map = vec![VertexId::MAX; n];
    let mut next: VertexId = 0;
    let common = |a: &[u32], b: &[u32]| -> usize {
        let (mut i, mut j, mut c) = (0, 0, 0);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    c += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        c
    };
    // line 3: the partition with the most vertices not yet renamed
    while let Some(p) = (0..num_parts)
        .filter(|&p| remaining[p] > 0)
        .max_by_key(|&p| (remaining[p], std::cmp::Reverse(p)))
    {
        let mut subs: Vec<usize> = by_part[p].iter().copied().filter(|&id| !done[id]).collect();
        let mut ordered: Vec<usize> = Vec::with_capacity(subs.len());
        if subs.len() > GREEDY_SUBPARTS {
            subs.sort_unstable_by(|&a, &b| sets[b].len().cmp(&sets[a].len()).then_with(|| sets[a].cmp(sets[b])));
            ordered = subs;
        } else {
            // line 8: the sub-partition shared by the most partitions
            while !subs.is_empty() {
                let k = (0..subs.len())
                    .max_by_key(|&k| (sets[subs[k]].len(), members[subs[k]].len(), std::cmp::Reverse(subs[k])))
                    .expect("non-empty");
                let mut prev = subs.swap_remove(k);
                ordered.push(prev);
                // lines 12-20: chain by the most common partitions
                while !subs.is_empty() {
                    let k = (0..subs.len())
                        .max_by_key(|&k| {
                            let s = subs[k];
                            (
                                common(sets[prev], sets[s]),
                                sets[s].len(),
                                members[s].len(),
                                std::cmp::Reverse(s),
                            )
                        })
                        .expect("non-empty");
                    if common(sets[prev], sets[subs[k]]) == 0 {
                        break;
                    }
                    prev = subs.swap_remove(k);
                    ordered.push(prev);
                }
            }
        }
        for id in ordered {
            done[id] = true;
            for &v in &members[id] {
                map[v as usize] = next;
                next += 1;
            }
            for &q in sets[id] {
                remaining[q as usize] -= members[id].len();
            }
        }
    }
    // vertices in no partition: isolated and absent slots
    for m in map.iter_mut() {
        if *m == VertexId::MAX {
            *m = next;
            next += 1;
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use csm_graph::{Edge, GraphData};

    fn graph(labels: Vec<Label>, edges: &[(u32, u32, Label)]) -> CsrGraph {
        CsrGraph::from_data(&GraphData {
            labels,
            edges: edges.iter().map(|&(u, v, l)| Edge::new(u, v, l)).collect(),
            edge_labelled: true,
        })
        .unwrap()
    }

    #[test]
    fn partitions_hold_every_edge_once_per_direction() {
        let g = graph(
            vec![0, 1, 0, 1, 2, ABSENT, 0],
            &[
                (0, 1, 0),
                (1, 2, 1),
                (2, 3, 0),
                (3, 4, 2),
                (0, 4, 1),
                (6, 2, 0),
                (6, 1, 2),
            ],
        );
        let p = IntervalPcsr::build(&g, true);
        assert_eq!(p.partitions.len(), 3);
        let total: usize = p.partitions.iter().map(|x| x.nbrs.len()).sum();
        assert_eq!(total, 2 * g.num_edges());
        // map is a permutation
        let mut m = p.map.clone();
        m.sort_unstable();
        assert_eq!(m, (0..7).collect::<Vec<_>>());
        for u in 0..7u32 {
            for (i, &w) in g.neighbors(u).iter().enumerate() {
                let part = p.partition(g.edge_labels(u)[i]).unwrap();
                assert!(part.has_edge(&p.labels, p.map[u as usize], p.map[w as usize]));
                for other in p.partitions.iter().filter(|x| x.elabel != g.edge_labels(u)[i]) {
                    assert!(!other.has_edge(&p.labels, p.map[u as usize], p.map[w as usize]));
                }
            }
        }
        // rows sorted by label; the largest partition is a single interval
        for part in &p.partitions {
            assert!(part
                .rows_by_label
                .windows(2)
                .all(|w| (p.labels[w[0] as usize], w[0]) < (p.labels[w[1] as usize], w[1])));
        }
        let big = p.partitions.iter().max_by_key(|x| x.num_rows()).unwrap();
        assert_eq!(big.intervals.len(), 1);
        // unlabelled view: one partition
        let q = IntervalPcsr::build(&g, false);
        assert_eq!(q.partitions.len(), 1);
        assert_eq!(q.partitions[0].intervals.len(), 1);
    }
}

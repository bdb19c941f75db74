//! Matching order (GENEVA Sec. 6, Alg. 8): a queue of extension phases
//! (each one matching pattern of Fig. 1) and elimination phases (non-tree
//! edges grouped by edge label).
//!
//! 1. Decompose the query into core and trees ([`super::decompose`]).
//! 2. Core present: the smallest cycle opens the search with the best of
//!    P1 > P3 > P0 from one cycle vertex (the *initial phase*, whose source
//!    comes from the edge label partition); the rest of the cycle, then the
//!    rest of the core, are matched with P0–P4 only; after every extension,
//!    all query edges among matched vertices that no extension verified form
//!    elimination phases, one per edge label (lines 11–15).
//! 3. Acyclic query (no core, not covered by Alg. 8; NOTES.md): the root is
//!    chosen as CFL does, argmin (label frequency / degree), and opens with
//!    the best of P1 > P3 > P0.
//! 4. Trees: P0–P7, highest priority first (lines 19–21).
//!
//! Ties inside one priority level: more non-tree edges closed by the
//! targets (earlier elimination), then the smaller product of the targets'
//! label frequencies, then the smallest vertex ids (determinism).
//!
//! `multi_vertex = false` gives the paper's SV-match variant (Sec. 7.2):
//! every extension phase is split into P0 phases, one per target, in the
//! same order, so PV and SV differ only in the phase structure.

use csm_graph::Label;
use csm_planner::QueryGraph;

use super::decompose::{core_mask, smallest_cycle};
use super::patterns::{Group, Pattern};

/// An extension phase: one pattern, one edge label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extension {
    pub pattern: Pattern,
    pub elabel: Label,
    pub groups: Vec<Group>,
    /// The first phase: its source vertices come from the partition.
    pub initial: bool,
}

impl Extension {
    /// Targets in phase order (first group, then second).
    pub fn targets(&self) -> impl Iterator<Item = usize> + '_ {
        self.groups.iter().flat_map(|g| g.targets.iter().copied())
    }
}

/// An elimination phase: query edges among matched vertices, one edge label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Elimination {
    pub elabel: Label,
    pub edges: Vec<(usize, usize)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Ext(Extension),
    Elim(Elimination),
}

/// The phase queue; `order` lists the query vertices in the order they are
/// matched, which is the column order of the partial embeddings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub phases: Vec<Phase>,
    pub order: Vec<usize>,
}

impl Plan {
    /// Number of PV phases (extension phases with patterns 1–7), Sec. 8.3.
    pub fn pv_phases(&self) -> usize {
        self.phases
            .iter()
            .filter(|p| matches!(p, Phase::Ext(e) if e.pattern != Pattern::P0))
            .count()
    }
}

/// Label statistics for tie-breaking: number of data vertices with vertex
/// label `l` that have an edge with label `el`.
pub trait Frequencies {
    fn freq(&self, l: Label, el: Label) -> usize;
}

/// Builds the phase queue for `q` (Alg. 8).
pub fn plan(q: &QueryGraph, stats: &dyn Frequencies, multi_vertex: bool) -> Plan {
    let n = q.num_vertices();
    let all: u32 = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
    let core = core_mask(q);
    let mut phases: Vec<Phase> = Vec::new();
    let mut order: Vec<usize> = Vec::new();
    let mut matched: u32 = 0;
    let mut verified: Vec<bool> = vec![false; q.num_edges()];
    let verify = |a: usize, b: usize, verified: &mut [bool]| {
        let i = q.edge_index(a, b).expect("query edge");
        verified[i] = true;
    };

    // initial phase (lines 3-6, or CFL's root for acyclic queries)
    let cycle = if core != 0 { smallest_cycle(q, core) } else { None };
    let initial = match &cycle {
        Some(c) => {
            let k = c.len();
            let mut options = Vec::new();
            for i in 0..k {
                let (s, c1, c2) = (c[i], c[(i + k - 1) % k], c[(i + 1) % k]);
                options.extend(opening_options(q, s, &[c1, c2]));
            }
            best(q, stats, options, 0)
        }
        None => {
            let root = (0..n)
                .min_by(|&a, &b| {
                    let ca = root_cost(q, stats, a);
                    let cb = root_cost(q, stats, b);
                    ca.partial_cmp(&cb).expect("finite").then(a.cmp(&b))
                })
                .expect("non-empty query");
            let nbrs: Vec<usize> = (0..n).filter(|&t| q.has_edge(root, t)).collect();
            best(q, stats, opening_options(q, root, &nbrs), 0)
        }
    };
    let source = initial.groups[0].source;
    order.push(source);
    matched |= 1 << source;
    let mut pending = Some(Extension {
        initial: true,
        ..initial
    });

    loop {
        let ext = match pending.take() {
            Some(e) => e,
            None => {
                if matched == all {
                    break;
                }
                let cyc_mask = cycle.as_ref().map_or(0, |c| c.iter().fold(0u32, |m, &u| m | 1 << u));
                let (allowed, trees) = if cyc_mask & !matched != 0 {
                    (cyc_mask, false)
                } else if core & !matched != 0 {
                    (core, false)
                } else {
                    (all, true)
                };
                let options = extension_options(q, matched, allowed & !matched, trees);
                best(q, stats, options, matched)
            }
        };
        for g in &ext.groups {
            for &t in &g.targets {
                verify(g.source, t, &mut verified);
                order.push(t);
                matched |= 1 << t;
            }
        }
        phases.push(Phase::Ext(ext));
        // elimination phases for unverified edges among matched vertices
        let mut open: Vec<(Label, usize, usize)> = q
            .edges()
            .iter()
            .enumerate()
            .filter(|&(i, &(a, b, _))| !verified[i] && matched >> a & 1 == 1 && matched >> b & 1 == 1)
            .map(|(_, &(a, b, l))| (l, a, b))
            .collect();
        open.sort_unstable();
        for &(_, a, b) in &open {
            verify(a, b, &mut verified);
        }
        let mut i = 0;
        while i < open.len() {
            let l = open[i].0;
            let mut edges = Vec::new();
            while i < open.len() && open[i].0 == l {
                edges.push((open[i].1, open[i].2));
                i += 1;
            }
            phases.push(Phase::Elim(Elimination { elabel: l, edges }));
        }
    }
    debug_assert!(verified.iter().all(|&v| v));
    let plan = Plan { phases, order };
    if multi_vertex {
        plan
    } else {
        split_single_vertex(plan)
    }
}

/// SV-match (Sec. 7.2): every extension phase becomes P0 phases.
pub fn split_single_vertex(plan: Plan) -> Plan {
    let mut phases = Vec::new();
    for p in plan.phases {
        match p {
            Phase::Ext(e) if e.pattern != Pattern::P0 => {
                let mut first = e.initial;
                for g in &e.groups {
                    for &t in &g.targets {
                        phases.push(Phase::Ext(Extension {
                            pattern: Pattern::P0,
                            elabel: e.elabel,
                            groups: vec![Group {
                                source: g.source,
                                label: g.label,
                                targets: vec![t],
                            }],
                            initial: first,
                        }));
                        first = false;
                    }
                }
            }
            p => phases.push(p),
        }
    }
    Plan {
        phases,
        order: plan.order,
    }
}

fn root_cost(q: &QueryGraph, stats: &dyn Frequencies, u: usize) -> f64 {
    let f = (0..q.num_vertices())
        .filter(|&t| q.has_edge(u, t))
        .map(|t| stats.freq(q.label(u), q.edge_label(u, t).expect("edge")))
        .min()
        .unwrap_or(0);
    f as f64 / q.degree(u) as f64
}

/// P1 / P3 / P0 phases from source `s` to some of `nbrs` (unmatched).
fn opening_options(q: &QueryGraph, s: usize, nbrs: &[usize]) -> Vec<Extension> {
    let mut out = Vec::new();
    for (i, &a) in nbrs.iter().enumerate() {
        let la = q.edge_label(s, a).expect("edge");
        out.push(ext(
            vec![Group {
                source: s,
                label: q.label(a),
                targets: vec![a],
            }],
            la,
        ));
        for &b in &nbrs[i + 1..] {
            if q.edge_label(s, b) != Some(la) {
                continue;
            }
            let groups = if q.label(a) == q.label(b) {
                vec![Group {
                    source: s,
                    label: q.label(a),
                    targets: vec![a, b],
                }]
            } else {
                vec![
                    Group {
                        source: s,
                        label: q.label(a),
                        targets: vec![a],
                    },
                    Group {
                        source: s,
                        label: q.label(b),
                        targets: vec![b],
                    },
                ]
            };
            out.push(ext(groups, la));
        }
    }
    out
}

fn ext(groups: Vec<Group>, elabel: Label) -> Extension {
    Extension {
        pattern: Pattern::classify(&groups),
        elabel,
        groups,
        initial: false,
    }
}

/// Every extension phase from `matched` into `targets` (P0–P4 in the core,
/// P0–P7 in the trees).
fn extension_options(q: &QueryGraph, matched: u32, targets: u32, trees: bool) -> Vec<Extension> {
    let n = q.num_vertices();
    // groups keyed by (source, edge label, vertex label), all their targets
    let mut groups: Vec<(usize, Label, Label, Vec<usize>)> = Vec::new();
    for s in (0..n).filter(|&s| matched >> s & 1 == 1) {
        for t in (0..n).filter(|&t| targets >> t & 1 == 1 && q.has_edge(s, t)) {
            let key = (s, q.edge_label(s, t).expect("edge"), q.label(t));
            match groups.iter_mut().find(|g| (g.0, g.1, g.2) == key) {
                Some(g) => g.3.push(t),
                None => groups.push((key.0, key.1, key.2, vec![t])),
            }
        }
    }
    let mut out = Vec::new();
    let grp = |s: usize, l: Label, t: &[usize]| Group {
        source: s,
        label: l,
        targets: t.to_vec(),
    };
    for (i, a) in groups.iter().enumerate() {
        // P0 and P1 (pairs of one group)
        for (x, &ta) in a.3.iter().enumerate() {
            out.push(ext(vec![grp(a.0, a.2, &[ta])], a.1));
            for &tb in &a.3[x + 1..] {
                out.push(ext(vec![grp(a.0, a.2, &[ta, tb])], a.1));
            }
        }
        if trees && a.3.len() >= 3 {
            out.push(ext(vec![grp(a.0, a.2, &a.3)], a.1)); // P5
        }
        for b in &groups[i + 1..] {
            if b.1 != a.1 {
                continue; // one edge label per phase
            }
            // P2 / P3 / P4: one target from each group
            for &ta in &a.3 {
                for &tb in &b.3 {
                    if ta != tb {
                        out.push(ext(vec![grp(a.0, a.2, &[ta]), grp(b.0, b.2, &[tb])], a.1));
                    }
                }
            }
            // P6 / P7: both groups whole (targets made disjoint), the larger first
            if trees {
                let (big, small) = if b.3.len() > a.3.len() { (b, a) } else { (a, b) };
                let rest: Vec<usize> = small.3.iter().copied().filter(|t| !big.3.contains(t)).collect();
                if !rest.is_empty() && big.3.len() >= 2 && big.3.len() + rest.len() >= 3 {
                    out.push(ext(vec![grp(big.0, big.2, &big.3), grp(small.0, small.2, &rest)], a.1));
                }
            }
        }
    }
    out.retain(|e| trees || e.pattern.core_allowed());
    out
}

/// The preferred option: pattern priority, then more non-tree edges closed,
/// then smaller label frequencies, then smaller ids.
fn best(q: &QueryGraph, stats: &dyn Frequencies, options: Vec<Extension>, matched: u32) -> Extension {
    let key = |e: &Extension| {
        let mut m = matched;
        for g in &e.groups {
            m |= 1 << g.source;
        }
        let tmask = e.targets().fold(0u32, |acc, t| acc | 1 << t);
        let within = m | tmask;
        let tree_edges = e.targets().count() as u32;
        // edges among targets are counted twice by the first sum
        let touching: u32 = e.targets().map(|t| (q.adj_mask(t) & within).count_ones()).sum();
        let inner: u32 = e.targets().map(|t| (q.adj_mask(t) & tmask).count_ones()).sum::<u32>() / 2;
        let closed = touching - inner - tree_edges;
        let cost: f64 = e
            .groups
            .iter()
            .map(|g| (stats.freq(g.label, e.elabel).max(1) as f64).ln() * g.targets.len() as f64)
            .sum::<f64>()
            + if e.initial || matched == 0 {
                (stats.freq(q.label(e.groups[0].source), e.elabel).max(1) as f64).ln()
            } else {
                0.0
            };
        let ids: Vec<usize> = e.groups.iter().map(|g| g.source).chain(e.targets()).collect();
        (e.pattern.priority(), std::cmp::Reverse(closed), cost, ids)
    };
    options
        .into_iter()
        .map(|e| (key(&e), e))
        .min_by(|(ka, _), (kb, _)| {
            ka.0.cmp(&kb.0)
                .then(ka.1.cmp(&kb.1))
                .then(ka.2.partial_cmp(&kb.2).expect("finite"))
                .then(ka.3.cmp(&kb.3))
        })
        .map(|(_, e)| e)
        .expect("some extension is always possible in a connected query")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Flat;
    impl Frequencies for Flat {
        fn freq(&self, _: Label, _: Label) -> usize {
            10
        }
    }

    fn covers_query(q: &QueryGraph, p: &Plan) {
        let n = q.num_vertices();
        let mut seen = vec![false; n];
        let mut checked = 0;
        for ph in &p.phases {
            match ph {
                Phase::Ext(e) => {
                    for g in &e.groups {
                        assert!(seen[g.source] || e.initial);
                        seen[g.source] = true;
                        for &t in &g.targets {
                            assert!(!seen[t]);
                            assert_eq!(q.edge_label(g.source, t), Some(e.elabel));
                            assert_eq!(q.label(t), g.label);
                            seen[t] = true;
                            checked += 1;
                        }
                    }
                }
                Phase::Elim(el) => {
                    for &(a, b) in &el.edges {
                        assert!(seen[a] && seen[b]);
                        assert_eq!(q.edge_label(a, b), Some(el.elabel));
                        checked += 1;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(checked, q.num_edges());
        assert_eq!(p.order.len(), n);
    }

    #[test]
    fn triangle_opens_with_p1_then_eliminates() {
        let q = QueryGraph::new(vec![0; 3], &[(0, 1, 0), (1, 2, 0), (0, 2, 0)], false).unwrap();
        let p = plan(&q, &Flat, true);
        covers_query(&q, &p);
        assert_eq!(p.phases.len(), 2);
        assert!(matches!(&p.phases[0], Phase::Ext(e) if e.pattern == Pattern::P1 && e.initial));
        assert!(matches!(&p.phases[1], Phase::Elim(_)));
        let sv = plan(&q, &Flat, false);
        covers_query(&q, &sv);
        assert_eq!(sv.pv_phases(), 0);
        assert_eq!(sv.phases.len(), 3);
    }

    #[test]
    fn star_uses_p5_in_trees() {
        // path 0-1 then a star 1-{2,3,4}
        let q = QueryGraph::new(
            vec![0, 1, 2, 2, 2],
            &[(0, 1, 0), (1, 2, 0), (1, 3, 0), (1, 4, 0)],
            false,
        )
        .unwrap();
        // a frequent hub label makes vertex 0 the root (CFL: frequency / degree)
        struct Hub;
        impl Frequencies for Hub {
            fn freq(&self, l: Label, _: Label) -> usize {
                if l == 1 {
                    1000
                } else {
                    10
                }
            }
        }
        let p = plan(&q, &Hub, true);
        covers_query(&q, &p);
        assert_eq!(p.order[0], 0);
        assert!(p
            .phases
            .iter()
            .any(|ph| matches!(ph, Phase::Ext(e) if e.pattern == Pattern::P5)));
    }

    #[test]
    fn plans_cover_many_shapes() {
        type Shape = (Vec<Label>, Vec<(usize, usize, Label)>, bool);
        let shapes: Vec<Shape> = vec![
            (vec![0; 4], vec![(0, 1, 0), (1, 2, 0), (2, 3, 0), (3, 0, 0)], false),
            (
                vec![0; 4],
                vec![(0, 1, 0), (0, 2, 0), (0, 3, 0), (1, 2, 0), (1, 3, 0), (2, 3, 0)],
                false,
            ),
            (
                vec![0, 1, 0, 1, 2],
                vec![(0, 1, 1), (1, 2, 2), (2, 3, 1), (3, 0, 2), (3, 4, 1)],
                true,
            ),
            (
                vec![0, 1, 1, 2, 2, 2],
                vec![(0, 1, 0), (0, 2, 0), (1, 3, 0), (1, 4, 0), (2, 5, 0)],
                false,
            ),
            (vec![0, 0], vec![(0, 1, 3)], true),
        ];
        for (labels, edges, el) in shapes {
            let q = QueryGraph::new(labels, &edges, el).unwrap();
            for mv in [true, false] {
                covers_query(&q, &plan(&q, &Flat, mv));
            }
        }
    }
}

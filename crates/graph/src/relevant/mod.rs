//! The edges one query can use, kept apart from the rest.
//!
//! A match maps every query edge to a data edge whose end labels (and edge
//! label, when the query has edge labels) equal the query edge's. An edge
//! whose label triple matches no query edge is in no match, so a matcher
//! that serves one query need not store it with the lists it intersects.
//! RapidFlow (Sun et al., VLDB'22) keeps only such edges, in one view per
//! label triple, and never looks at an update of another triple.
//!
//! [`EdgeFilter`] says which triples a query uses. [`OtherEdges`] holds the
//! edges it drops, in an [`EdgeSet`], only so that updates are still validated
//! exactly as the whole graph would validate them (a duplicate insertion or
//! the deletion of a missing edge is an error whichever store holds the
//! edge). [`OtherEdges::route`] splits a batch between the two stores: the
//! matcher's [`DynamicGraph`] gets every vertex update and every edge update
//! the filter keeps or that the graph itself must reject, and an update of
//! a dropped triple costs a set lookup instead of two sorted insertions.
//!
//! Removing a vertex removes its edges in both stores: the graph's by its
//! own validation, the set's when the routes are applied (one scan of the
//! set for all the vertices a batch removes, only when one of them has
//! edges there, as counted per vertex).

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use foldhash::fast::FixedState;
use rayon::prelude::*;

use crate::degree_count::degrees;
use crate::dynamic::{DynamicGraph, Strictness};
use crate::edge_set::{BaseSlot, EdgeKey, EdgeSet};
use crate::error::{ErrorKind, InputError};
use crate::phases::StartState;
use crate::types::{Edge, GraphData, Label, LocatedUpdate, Update, VertexId, ABSENT, MAX_VERTEX_ID, NO_EDGE_LABEL};
use crate::view::GraphView;

mod classes;
mod parallel;

use classes::VertexClasses;

/// The label triples of a query's edges, in both orientations: an edge
/// `(u, v)` of the data graph can map to a query edge only when
/// [`EdgeFilter::keeps`] its triple.
#[derive(Clone, Debug)]
pub struct EdgeFilter {
    triples: HashSet<(Label, Label, Label), FixedState>,
    by_edge_label: bool,
}

impl EdgeFilter {
    /// `edges`: each query edge's end labels and edge label. With
    /// `by_edge_label` false (a query without edge labels) any data edge
    /// label matches.
    pub fn new(edges: impl IntoIterator<Item = (Label, Label, Label)>, by_edge_label: bool) -> EdgeFilter {
        let mut triples = HashSet::with_hasher(FixedState::default());
        for (a, b, el) in edges {
            let el = if by_edge_label { el } else { 0 };
            triples.insert((a, b, el));
            triples.insert((b, a, el));
        }
        EdgeFilter { triples, by_edge_label }
    }

    /// Whether an edge between labels `a` and `b` with (effective) edge
    /// label `el` can map to a query edge.
    #[inline]
    pub fn keeps(&self, a: Label, b: Label, el: Label) -> bool {
        self.triples.contains(&(a, b, if self.by_edge_label { el } else { 0 }))
    }

    /// Whether the filter keeps edge `e` of `g`; `None` when `e` is a
    /// self-loop or has an unknown endpoint, which building the whole graph
    /// reports with its line.
    #[inline]
    fn keeps_edge(&self, g: &GraphData, e: &Edge) -> Option<bool> {
        let label = |x: VertexId| g.labels.get(x as usize).copied().filter(|&l| l != ABSENT);
        match (label(e.u), label(e.v)) {
            (Some(a), Some(b)) if e.u != e.v => Some(self.keeps(a, b, effective_label(g, e))),
            _ => None,
        }
    }

    /// [`EdgeFilter::keeps_edge`] for the edges of `g`, through a class byte
    /// per vertex ([`VertexClasses`]) unless the filter names too many
    /// labels for its table.
    fn edge_test<'a>(&'a self, g: &'a GraphData) -> impl Fn(&Edge) -> Option<bool> + Sync + 'a {
        let classes = VertexClasses::of(self, g);
        move |e| match &classes {
            Some(c) => c.keeps_edge(self, g, e),
            None => self.keeps_edge(g, e),
        }
    }

    /// `g` with only the edges the filter keeps (static counts: every
    /// engine counts the same on it); `None` as for `keeps_edge`. Repeated
    /// pairs among the dropped edges are not looked for (the readers reject
    /// them; among the kept ones the CSR build does).
    pub fn kept(&self, g: &GraphData) -> Option<GraphData> {
        // on the current rayon pool: each edge reads its endpoints' classes
        let keeps = self.edge_test(g);
        let invalid = AtomicBool::new(false);
        let kept: Vec<Edge> = g
            .edges
            .par_iter()
            .with_min_len(1 << 14)
            .filter(|e| {
                keeps(e).unwrap_or_else(|| {
                    invalid.store(true, Ordering::Relaxed);
                    false
                })
            })
            .copied()
            .collect();
        if invalid.into_inner() {
            return None;
        }
        Some(GraphData {
            labels: g.labels.clone(),
            edges: kept,
            edge_labelled: g.edge_labelled,
        })
    }

    /// `g` with only the edges the filter keeps, and the others; `None`
    /// when `g` has an invalid edge (a self-loop, an unknown endpoint, a
    /// repeated pair), which building the whole graph reports with its line.
    pub fn split(&self, g: &GraphData) -> Option<(GraphData, OtherEdges)> {
        // which edges stay, known first so that both stores are sized once
        let keeps = self.edge_test(g);
        let stays: Vec<bool> = g
            .edges
            .par_iter()
            .with_min_len(1 << 14)
            .map(keeps)
            .collect::<Option<_>>()?;
        let n_kept = stays.iter().filter(|&&k| k).count();
        let n_dropped = g.edges.len() - n_kept;
        let mut kept = Vec::with_capacity(n_kept);
        // the dropped edges' keys, and their labels only where they count
        let mut keys = Vec::with_capacity(n_dropped);
        let mut labels = Vec::with_capacity(if g.edge_labelled { n_dropped } else { 0 });
        for (e, stays) in g.edges.iter().zip(stays) {
            if stays {
                kept.push(*e);
            } else {
                keys.push(e.key());
                if g.edge_labelled {
                    labels.push(e.label);
                }
            }
        }
        let other = OtherEdges::from_edges(keys, g.edge_labelled.then_some(labels))?;
        // with edge labels one pair may hold a kept and a dropped triple
        if g.edge_labelled && kept.iter().any(|e| other.edges.contains(e.key())) {
            return None;
        }
        let g = GraphData {
            labels: g.labels.clone(),
            edges: kept,
            edge_labelled: g.edge_labelled,
        };
        Some((g, other))
    }
}

/// An edge's label as matching reads it: its own in an edge-labelled
/// graph, else [`NO_EDGE_LABEL`].
#[inline]
fn effective_label(g: &GraphData, e: &Edge) -> Label {
    if g.edge_labelled {
        e.label
    } else {
        NO_EDGE_LABEL
    }
}

/// Where [`OtherEdges::route`] sends one update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// To the matcher's graph: every vertex update, the edge updates the
    /// filter keeps, and those the graph will reject itself.
    Graph,
    /// To the graph, a valid removal of this vertex: its edges held here
    /// go too.
    GraphRemoving(VertexId),
    /// A valid insertion of a dropped edge, with its label.
    Insert(EdgeKey, Label),
    /// A valid deletion of a dropped edge.
    Remove(EdgeKey),
    /// Rejected here: the insertion of a dropped edge that is present, or
    /// a deletion of one that names another label than its own (skipped
    /// in lenient mode).
    Rejected,
}

/// A batch split by [`OtherEdges::route`].
#[derive(Debug, Default)]
pub struct Routed {
    /// The updates for the matcher's graph, in order.
    pub graph: Vec<LocatedUpdate>,
    /// Per update of the batch, in order, where it went. In strict mode
    /// routing stops at the first rejected update, which is then the last.
    pub routes: Vec<Route>,
    /// Strict mode: the first rejection here.
    pub error: Option<InputError>,
    /// Lenient mode: updates rejected here.
    pub skipped: usize,
    /// Per route, where routing found its edge in the set (for
    /// [`OtherEdges::apply`], which then need not look it up again), in
    /// the set's generation `generation`.
    slots: Vec<BaseSlot>,
    generation: u64,
}

impl Route {
    /// Whether the update went to the graph.
    pub fn to_graph(&self) -> bool {
        matches!(self, Route::Graph | Route::GraphRemoving(_))
    }
}

impl Routed {
    /// Whether every update went to the graph and the set is left alone.
    pub fn all_graph(&self) -> bool {
        self.routes.iter().all(|r| *r == Route::Graph)
    }
}

/// What routing knows of an edge's place during a batch, and where it
/// knows it, the edge's label ([`NO_EDGE_LABEL`] without edge labels).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// In the matcher's graph.
    Graph(Label),
    /// In the matcher's graph after an insertion that named this label:
    /// with its label before the batch if the graph held it then (the
    /// insertion was a duplicate, which the graph rejects), else this one.
    GraphOrNew(Label),
    /// In [`OtherEdges`]: with this label, or (`None`) with the label the
    /// set holds for it (read only when a deletion needs it).
    Other(Option<Label>),
    /// In neither.
    Absent,
    /// Not in `OtherEdges`; in the graph or in neither (not looked up).
    GraphOrAbsent,
}

/// A graph whose edges are split between a [`DynamicGraph`] and
/// [`OtherEdges`], as one [`StartState`] ([`OtherEdges::with`]).
#[derive(Clone, Copy)]
pub struct WholeGraph<'a> {
    kept: &'a DynamicGraph,
    other: &'a OtherEdges,
}

impl StartState for WholeGraph<'_> {
    fn vertex_label(&self, v: VertexId) -> Option<Label> {
        self.kept.vertex_label(v)
    }
    fn edge_label(&self, u: VertexId, v: VertexId) -> Option<Label> {
        let kept = self.kept.edge_label(u, v);
        // `edge_labelled` from the graph: a set without labels gives a placeholder
        kept.or_else(|| {
            self.other
                .label(u, v)
                .map(|l| if self.checks_edge_labels() { l } else { 0 })
        })
    }
    fn checks_edge_labels(&self) -> bool {
        self.kept.checks_edge_labels()
    }
}

/// The edges an [`EdgeFilter`] drops, kept to validate updates (see the
/// module docs), in an [`EdgeSet`]: their keys (about 4-5.5 bytes an edge,
/// at most 9) and, with edge labels, their labels, which only a deletion
/// reads (it must name the edge's label).
#[derive(Clone, Debug, Default)]
pub struct OtherEdges {
    edges: EdgeSet,
    /// Per vertex, its edges held here (a removed vertex with none needs no
    /// scan).
    degree: Vec<u32>,
    /// [`OtherEdges::set_parallel_min`].
    parallel_min: Option<usize>,
}

impl OtherEdges {
    /// The store of the edges `keys` (each `u < v`), with their `labels`
    /// (one each) in an edge-labelled graph; `None` when a key repeats.
    fn from_edges(keys: Vec<EdgeKey>, labels: Option<Vec<Label>>) -> Option<OtherEdges> {
        let top = keys.iter().map(|k| k.1 as usize + 1).max().unwrap_or(0);
        let degree = degrees(&keys, top, |&k| k);
        let edges = match labels {
            Some(labels) => EdgeSet::from_labelled(keys.into_iter().zip(labels).collect()),
            None => EdgeSet::from_keys(keys),
        };
        let edges = edges.ok()?;
        Some(OtherEdges {
            edges,
            degree,
            parallel_min: None,
        })
    }

    fn insert(&mut self, key: EdgeKey, label: Label) {
        if self.edges.insert(key, label) {
            Self::count(&mut self.degree, key, true);
        }
    }

    fn remove(&mut self, key: EdgeKey) {
        if self.edges.remove(key) {
            Self::count(&mut self.degree, key, false);
        }
    }

    /// Counts `key` in (an insertion) or out of its endpoints' degrees.
    fn count(degree: &mut Vec<u32>, key: EdgeKey, insert: bool) {
        if insert {
            let top = key.1 as usize + 1;
            if degree.len() < top {
                degree.resize(top, 0);
            }
            degree[key.0 as usize] += 1;
            degree[key.1 as usize] += 1;
        } else {
            degree[key.0 as usize] -= 1;
            degree[key.1 as usize] -= 1;
        }
    }

    /// Applies `routes`, some of which remove vertices, in order. The
    /// edges at a removed vertex are those held here when the batch began
    /// (one scan of the set for all the batch's removed vertices, skipped
    /// when none has edges here) and those inserted by the batch before
    /// its removal; each still present is removed.
    fn apply_removing(&mut self, routes: &[Route]) {
        let removed: Vec<VertexId> = routes
            .iter()
            .filter_map(|r| match *r {
                Route::GraphRemoving(v) => Some(v),
                _ => None,
            })
            .collect();
        let held = |v: VertexId| self.degree.get(v as usize).is_some_and(|&d| d > 0);
        // per removed vertex, the keys at it that may be present
        let mut at: HashMap<VertexId, Vec<EdgeKey>, FixedState> = removed.iter().map(|&v| (v, Vec::new())).collect();
        let note = |at: &mut HashMap<VertexId, Vec<EdgeKey>, FixedState>, key: EdgeKey| {
            for end in [key.0, key.1] {
                if let Some(keys) = at.get_mut(&end) {
                    keys.push(key);
                }
            }
        };
        if removed.iter().any(|&v| held(v)) {
            for key in self.edges.keys_at_any(&removed) {
                note(&mut at, key);
            }
        }
        for r in routes {
            match *r {
                Route::Insert(key, label) => {
                    self.insert(key, label);
                    note(&mut at, key);
                }
                Route::Remove(key) => self.remove(key),
                Route::GraphRemoving(v) => {
                    for key in std::mem::take(at.get_mut(&v).expect("listed above")) {
                        self.remove(key);
                    }
                }
                Route::Graph | Route::Rejected => {}
            }
        }
    }

    pub fn len(&self) -> usize {
        self.edges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.edges.len() == 0
    }

    pub fn contains(&self, u: VertexId, v: VertexId) -> bool {
        self.edges.contains((u.min(v), u.max(v)))
    }

    /// The label of edge `(u, v)` when it is held here.
    pub fn label(&self, u: VertexId, v: VertexId) -> Option<Label> {
        self.edges.label((u.min(v), u.max(v)))
    }

    /// The whole graph as validation sees it: `g` (the kept edges, nothing
    /// pending) and these edges.
    pub fn with<'a>(&'a self, g: &'a DynamicGraph) -> WholeGraph<'a> {
        WholeGraph { kept: g, other: self }
    }

    /// Heap bytes held (the edge set and the per-vertex counts).
    pub fn memory_bytes(&self) -> usize {
        self.edges.memory_bytes() + self.degree.capacity() * 4
    }

    /// Splits `updates` between `g` (the graph of the edges `filter` keeps,
    /// nothing pending) and this store, in order, as validation of the
    /// whole graph would see them: an update goes to the store that holds
    /// its edge, a new edge to the store its triple belongs to. Only the
    /// insertion of an edge held here can be rejected here; every other
    /// invalid update goes to `g`, whose validation names it exactly as
    /// before. The stores are not changed: apply the routes with
    /// [`OtherEdges::apply`] once `g` took its part.
    ///
    /// For a batch of edge updates only (no vertex added or removed) that
    /// [`OtherEdges::wants_pool`], routed from inside a rayon pool of 2 or
    /// more threads, the lookups in the set (the bulk of the time) run on
    /// that pool first. The routes keep where the set found each
    /// edge, so that [`OtherEdges::apply`] need not look it up again.
    pub fn route(
        &self,
        g: &DynamicGraph,
        filter: &EdgeFilter,
        updates: &[LocatedUpdate],
        source: &str,
        strictness: Strictness,
    ) -> Routed {
        self.route_as(g, filter, updates, source, strictness, Validation::Batch)
    }

    /// [`OtherEdges::route`] for updates that `g` then validates and
    /// applies one at a time (a batch of its own each): a vertex removed
    /// earlier in `updates` may come back under another label, which a
    /// batch's validation rejects (a batch relabels a vertex only through
    /// [`crate::phases`]), and the edges after it are routed by its new
    /// label.
    pub fn route_each(
        &self,
        g: &DynamicGraph,
        filter: &EdgeFilter,
        updates: &[LocatedUpdate],
        source: &str,
        strictness: Strictness,
    ) -> Routed {
        self.route_as(g, filter, updates, source, strictness, Validation::EachUpdate)
    }

    fn route_as(
        &self,
        g: &DynamicGraph,
        filter: &EdgeFilter,
        updates: &[LocatedUpdate],
        source: &str,
        strictness: Strictness,
        validation: Validation,
    ) -> Routed {
        let router = Router {
            g,
            filter,
            edges: &self.edges,
            validation,
        };
        let edges_only = || {
            updates
                .iter()
                .all(|lu| matches!(lu.update, Update::AddEdge(_) | Update::RemoveEdge(_)))
        };
        // a large batch of edge updates: the lookups on the pool first
        let looked_up = (self.parallel(updates.len()) && edges_only()).then(|| parallel::look_up(&router, updates));
        let (routes, slots, why) = router.route_in_order(updates, strictness, looked_up.as_deref());
        Routed {
            slots,
            generation: self.edges.generation(),
            ..Routed::collect(updates, routes, why, source, strictness)
        }
    }

    /// Batches of at least this many edge updates look up their edges on
    /// the caller's rayon pool ([`OtherEdges::route`])...
    pub const PARALLEL_MIN_UPDATES: usize = 16_384;

    /// ... or of this many, in a set of [`OtherEdges::PARALLEL_MIN_SET`]
    /// edges or more, whose lookups miss the cache.
    pub const PARALLEL_MIN_UPDATES_LARGE_SET: usize = 2048;

    /// Edges (4 MB of base) from which a set misses the cache.
    pub const PARALLEL_MIN_SET: usize = 1 << 20;

    /// Whether routing `n` updates pays on a pool:
    /// [`OtherEdges::PARALLEL_MIN_UPDATES`] or more of them, or
    /// [`OtherEdges::PARALLEL_MIN_UPDATES_LARGE_SET`] in a large set (as
    /// set by [`OtherEdges::set_parallel_min`] when it was). Callers with
    /// a pool route inside it when this holds. Measured on the device's
    /// 16-core host: on email-Enron (a set of 167 K edges, about 0.25 ms
    /// of routing for 4,096 updates) waking the pool for batches of 4,096
    /// cost what the threads saved, while a stream of every edge in
    /// batches of 65,536 routed in 9.8-11.1 ms on 16 threads against 13.4
    /// ms on one.
    pub fn wants_pool(&self, n: usize) -> bool {
        match self.parallel_min {
            Some(min) => n >= min,
            None => {
                n >= Self::PARALLEL_MIN_UPDATES
                    || (n >= Self::PARALLEL_MIN_UPDATES_LARGE_SET && self.edges.len() >= Self::PARALLEL_MIN_SET)
            }
        }
    }

    /// Whether routing `n` updates goes to the pool:
    /// [`OtherEdges::wants_pool`], and called inside a pool.
    fn parallel(&self, n: usize) -> bool {
        self.wants_pool(n) && crate::dynamic::parallel::in_pool()
    }

    /// Sets the batch size from which routing goes to the caller's pool
    /// (0: always; by default [`OtherEdges::wants_pool`]'s rule), for tests
    /// and experiments.
    pub fn set_parallel_min(&mut self, updates: usize) {
        self.parallel_min = Some(updates);
    }

    /// Applies the routes of a batch, in order (their insertions and
    /// deletions of dropped edges, and the edges of removed vertices).
    pub fn apply(&mut self, routed: &Routed) {
        self.apply_first(routed, routed.routes.len());
    }

    /// Applies the first `n` routes of a batch ([`OtherEdges::apply`]).
    /// Without vertex removals among them they go to the set in one call
    /// that reuses where routing found each edge
    /// ([`EdgeSet::apply_changes`]: no second lookup).
    pub fn apply_first(&mut self, routed: &Routed, n: usize) {
        let routes = &routed.routes[..n];
        if routes.iter().any(|r| matches!(r, Route::GraphRemoving(_))) {
            self.apply_removing(routes);
            return;
        }
        let slots = routed.slots.iter().copied().chain(std::iter::repeat(BaseSlot::UNKNOWN));
        let changes = routes.iter().zip(slots).filter_map(|(r, slot)| match *r {
            Route::Insert(key, label) => Some((key, Some(label), slot)),
            Route::Remove(key) => Some((key, None, slot)),
            _ => None,
        });
        let degree = &mut self.degree;
        self.edges.apply_changes(changes, routed.generation, |key, insert| {
            Self::count(degree, key, insert)
        });
    }
}

/// How the graph validates the updates routed: as one batch, or one at a
/// time.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Validation {
    Batch,
    EachUpdate,
}

/// What routing an edge update reads: the graph, the filter and the set,
/// none of them changed while a batch routes, and how the graph validates.
struct Router<'a> {
    g: &'a DynamicGraph,
    filter: &'a EdgeFilter,
    edges: &'a EdgeSet,
    validation: Validation,
}

/// An edge update between two labelled, distinct vertices, as routing
/// sees it.
#[derive(Clone, Copy)]
struct EdgeUpdate {
    key: EdgeKey,
    insert: bool,
    /// The label the update names ([`NO_EDGE_LABEL`] without edge labels).
    label: Label,
    /// Whether the filter keeps the update's triple.
    kept: bool,
}

impl Router<'_> {
    /// `v`'s label in the graph before the batch (`None`: no such vertex).
    #[inline]
    fn committed_label(&self, v: VertexId) -> Option<Label> {
        self.g.labels().get(v as usize).copied().filter(|&l| l != ABSENT)
    }

    /// `update` (an edge update) with its end labels `a` and `b`; `None`
    /// for a self-loop or an endpoint without a label, which the graph's
    /// validation names.
    fn edge(&self, update: &Update, a: Option<Label>, b: Option<Label>) -> Option<EdgeUpdate> {
        let (Update::AddEdge(e) | Update::RemoveEdge(e)) = update else {
            return None;
        };
        let (a, b) = (a?, b?);
        if e.u == e.v {
            return None;
        }
        let el = if self.g.edge_labelled() { e.label } else { 0 };
        Some(EdgeUpdate {
            key: e.key(),
            insert: matches!(update, Update::AddEdge(_)),
            label: el,
            kept: self.filter.keeps(a, b, el),
        })
    }

    /// An edge's place before the batch touched it, and where the set
    /// looked it up.
    fn first_place(&self, key: EdgeKey) -> (Place, BaseSlot) {
        match self.edges.find(key) {
            (true, slot) => (Place::Other(None), slot),
            (false, slot) => (Place::GraphOrAbsent, slot),
        }
    }

    /// [`step`] for `u` at an edge in `place`, found in the set at `slot`:
    /// its route, the edge's place after it and, for a rejection, why.
    fn step(&self, place: Place, slot: BaseSlot, u: &EdgeUpdate) -> (Route, Place, Option<ErrorKind>) {
        let labelled = self.g.edge_labelled();
        // a deletion of an edge held here since before the batch reads the
        // label the set holds
        let place = match place {
            Place::Other(None) if labelled && !u.insert => Place::Other(Some(self.edges.label_at(u.key, slot))),
            _ => place,
        };
        // without edge labels a graph edge's triple is its key's, which
        // the filter keeps, and a deletion names no label: the graph is
        // asked only with edge labels
        let in_graph = || labelled.then(|| self.g.edge_label(u.key.0, u.key.1)).flatten();
        let (step, after) = step(place, u, labelled, in_graph);
        let route = match step {
            Step::Graph => Route::Graph,
            Step::Insert => Route::Insert(u.key, u.label),
            Step::Remove => Route::Remove(u.key),
            Step::Duplicate | Step::Mismatch(_) => Route::Rejected,
        };
        let why = match step {
            Step::Duplicate => Some(ErrorKind::DuplicateEdge(u.key.0, u.key.1)),
            Step::Mismatch(stored) => Some(ErrorKind::EdgeLabelMismatch {
                u: u.key.0,
                v: u.key.1,
                stored,
                named: u.label,
            }),
            _ => None,
        };
        (route, after, why)
    }

    /// Routes `updates` one after the other (any update), stopping after
    /// the first rejection in strict mode. `looked_up`: for a batch of edge
    /// updates only, each update's [`EdgeUpdate`] and its edge's place
    /// before the batch, looked up beforehand ([`parallel::look_up`]).
    /// Also returns, per route, where the set looked its edge up, and why
    /// the first update rejected here was rejected.
    fn route_in_order(
        &self,
        updates: &[LocatedUpdate],
        strictness: Strictness,
        looked_up: Option<&[LookedUp]>,
    ) -> (Vec<Route>, Vec<BaseSlot>, Option<ErrorKind>) {
        // vertices this batch added (label) or removed (None) so far, and
        // those removed at some point (their committed edges are gone)
        let mut vertices: HashMap<VertexId, Option<Label>, FixedState> = HashMap::default();
        let mut removed: HashSet<VertexId, FixedState> = HashSet::default();
        let mut places: HashMap<(VertexId, VertexId), (Place, BaseSlot), FixedState> =
            HashMap::with_capacity_and_hasher(updates.len(), FixedState::default());
        let committed = |v: VertexId| self.committed_label(v);
        let label_of = |vertices: &HashMap<VertexId, Option<Label>, FixedState>, v: VertexId| {
            vertices.get(&v).copied().unwrap_or_else(|| committed(v))
        };
        let mut routes = Vec::with_capacity(updates.len());
        let mut slots = Vec::with_capacity(updates.len());
        let mut first_rejection = None;
        for (i, lu) in updates.iter().enumerate() {
            let mut slot = BaseSlot::UNKNOWN;
            let route = match lu.update {
                Update::AddVertex { id, label } => {
                    // the checks of the graph's own validation, which
                    // rejects this update exactly when it is not added here
                    // (a batch keeps a removed vertex's label; one update
                    // at a time, the removal is committed before)
                    let valid = id <= MAX_VERTEX_ID
                        && label != ABSENT
                        && label_of(&vertices, id).is_none()
                        && (self.validation == Validation::EachUpdate || committed(id).is_none_or(|l| l == label));
                    if valid {
                        vertices.insert(id, Some(label));
                    }
                    Route::Graph
                }
                Update::RemoveVertex { id, label } => {
                    // valid when present with the label named, if any
                    let stored = label_of(&vertices, id);
                    if stored.is_some() && (label.is_none() || label == stored) {
                        vertices.insert(id, None);
                        removed.insert(id);
                        for (key, place) in places.iter_mut() {
                            if key.0 == id || key.1 == id {
                                place.0 = Place::Absent;
                            }
                        }
                        Route::GraphRemoving(id)
                    } else {
                        Route::Graph
                    }
                }
                Update::AddEdge(e) | Update::RemoveEdge(e) => {
                    let found = match looked_up {
                        Some(l) => l[i],
                        None => {
                            let (a, b) = (label_of(&vertices, e.u), label_of(&vertices, e.v));
                            self.edge(&lu.update, a, b).map(|u| (u, None))
                        }
                    };
                    match found {
                        Some((u, first)) => {
                            let entry = places.entry(u.key);
                            let (place, found) = match &entry {
                                Entry::Occupied(o) => *o.get(),
                                // removed with an endpoint earlier in the batch
                                Entry::Vacant(_) if removed.contains(&u.key.0) || removed.contains(&u.key.1) => {
                                    (Place::Absent, BaseSlot::UNKNOWN)
                                }
                                Entry::Vacant(_) => first.unwrap_or_else(|| self.first_place(u.key)),
                            };
                            let (route, after, why) = self.step(place, found, &u);
                            entry.insert_entry((after, found));
                            slot = found;
                            if first_rejection.is_none() {
                                first_rejection = why;
                            }
                            route
                        }
                        // a self-loop or an unknown endpoint: the graph names it
                        None => Route::Graph,
                    }
                }
            };
            routes.push(route);
            slots.push(slot);
            if route == Route::Rejected && strictness == Strictness::Strict {
                break;
            }
        }
        (routes, slots, first_rejection)
    }
}

/// An edge update as [`parallel::look_up`] found it: `None` for one the
/// graph names (a self-loop, an unknown endpoint), else the update and its
/// edge's place before the batch.
type LookedUp = Option<(EdgeUpdate, Option<(Place, BaseSlot)>)>;

impl Routed {
    /// The routed batch of `updates` from their `routes` (in strict mode
    /// routing stopped at the first rejection, which becomes the error).
    /// `why`: the first rejection's reason.
    fn collect(
        updates: &[LocatedUpdate],
        routes: Vec<Route>,
        why: Option<ErrorKind>,
        source: &str,
        strictness: Strictness,
    ) -> Routed {
        let mut out = Routed::default();
        if strictness == Strictness::Strict {
            if routes.last() == Some(&Route::Rejected) {
                let line = updates[routes.len() - 1].line;
                let why = why.expect("a rejection names its reason");
                out.error = Some(InputError::new(source, line, why));
            }
        } else {
            out.skipped = routes.iter().filter(|&&r| r == Route::Rejected).count();
        }
        out.graph = updates
            .iter()
            .zip(&routes)
            .filter(|(_, r)| r.to_graph())
            .map(|(lu, _)| *lu)
            .collect();
        out.routes = routes;
        out
    }
}

/// What one valid-looking edge update does ([`step`]).
enum Step {
    Graph,
    Insert,
    Remove,
    Duplicate,
    /// A deletion of a dropped edge that names another label than its
    /// own (this one).
    Mismatch(Label),
}

/// One edge update `u` at an edge in `place`: where it goes and the edge's
/// place after it. `labelled`: whether edges carry labels (a deletion
/// must name its edge's); `in_graph`: the edge's label in the graph before
/// the batch, `None` when absent there (asked only when needed, and only
/// answered with edge labels).
fn step(place: Place, u: &EdgeUpdate, labelled: bool, in_graph: impl FnOnce() -> Option<Label>) -> (Step, Place) {
    let names_another = |stored: Label| labelled && stored != u.label;
    match (place, u.insert) {
        (Place::Other(_), true) => (Step::Duplicate, place),
        (Place::Other(Some(l)), false) if names_another(l) => (Step::Mismatch(l), place),
        (Place::Other(_), false) => (Step::Remove, Place::Absent),
        // present in the graph (a duplicate, which the graph rejects) or
        // added there (whether it was absent or not, it is there after)
        (Place::Graph(_) | Place::GraphOrNew(_), true) => (Step::Graph, place),
        (Place::Absent, true) if u.kept => (Step::Graph, Place::Graph(u.label)),
        (Place::GraphOrAbsent, true) if u.kept => (Step::Graph, Place::GraphOrNew(u.label)),
        (Place::GraphOrAbsent, true) => match in_graph() {
            Some(l) => (Step::Graph, Place::Graph(l)),
            None => (Step::Insert, Place::Other(Some(u.label))),
        },
        (Place::Absent, true) => (Step::Insert, Place::Other(Some(u.label))),
        // a deletion the graph rejects, for naming another label (the edge
        // stays) or for a missing edge, or accepts (absent after)
        (Place::Graph(l), false) if names_another(l) => (Step::Graph, place),
        (Place::GraphOrNew(l), false) => match in_graph().unwrap_or(l) {
            l if names_another(l) => (Step::Graph, Place::Graph(l)),
            _ => (Step::Graph, Place::Absent),
        },
        (Place::GraphOrAbsent, false) => match in_graph() {
            Some(l) if names_another(l) => (Step::Graph, Place::Graph(l)),
            _ => (Step::Graph, Place::Absent),
        },
        (Place::Graph(_) | Place::Absent, false) => (Step::Graph, Place::Absent),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lu(line: usize, update: Update) -> LocatedUpdate {
        LocatedUpdate { line, update }
    }

    /// Labels 0 and 1; the filter keeps 0-1 edges only.
    fn setup(edge_labelled: bool) -> (DynamicGraph, EdgeFilter, OtherEdges) {
        let g = GraphData {
            labels: vec![0, 1, 0, 1],
            edges: vec![Edge::new(0, 1, 0), Edge::new(0, 2, 0), Edge::new(1, 3, 0)],
            edge_labelled,
        };
        let filter = EdgeFilter::new([(0, 1, 0)], edge_labelled);
        let (kept, other) = filter.split(&g).expect("a valid graph");
        (DynamicGraph::from_data(&kept).unwrap(), filter, other)
    }

    #[test]
    fn split_keeps_the_query_triples() {
        let (g, _, other) = setup(false);
        assert_eq!(g.num_edges(), 1);
        assert!(other.contains(0, 2) && other.contains(3, 1) && !other.contains(0, 1));
    }

    #[test]
    fn split_declines_invalid_graphs() {
        let f = EdgeFilter::new([(0, 1, 0)], true);
        let g = |edges: Vec<Edge>| GraphData {
            labels: vec![0, 1, 0, ABSENT],
            edges,
            edge_labelled: true,
        };
        assert!(f.split(&g(vec![Edge::new(0, 1, 0), Edge::new(0, 2, 0)])).is_some());
        for bad in [
            vec![Edge::new(2, 2, 0)],
            vec![Edge::new(0, 3, 0)],
            vec![Edge::new(0, 7, 0)],
            vec![Edge::new(0, 2, 0), Edge::new(2, 0, 4)],
            vec![Edge::new(0, 1, 0), Edge::new(1, 0, 4)],
        ] {
            assert!(f.split(&g(bad.clone())).is_none(), "{bad:?}");
        }
    }

    /// `kept` (on a pool, in chunks) keeps exactly the filter's edges in
    /// their order, and declines a graph with a self-loop or an unknown
    /// endpoint wherever it lies.
    #[test]
    fn kept_keeps_the_filters_edges_in_order() {
        let f = EdgeFilter::new([(0, 1, NO_EDGE_LABEL)], false);
        let n = 1_000u32;
        let labels: Vec<Label> = (0..n).map(|v| v % 3).collect();
        let edges: Vec<Edge> = (0..200_000u32)
            .map(|i| Edge::new(i % n, (i * 7 + 1 + i / n) % n, NO_EDGE_LABEL))
            .filter(|e| e.u != e.v)
            .collect();
        let mut g = GraphData {
            labels,
            edges,
            edge_labelled: false,
        };
        let want: Vec<Edge> = (g.edges.iter())
            .filter(|e| {
                let (a, b) = (g.labels[e.u as usize], g.labels[e.v as usize]);
                (a, b) == (0, 1) || (a, b) == (1, 0)
            })
            .copied()
            .collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let kept = pool.install(|| f.kept(&g)).expect("a valid graph");
        assert!(!want.is_empty() && kept.edges == want);
        for bad in [Edge::new(5, 5, NO_EDGE_LABEL), Edge::new(5, n + 3, NO_EDGE_LABEL)] {
            let mid = g.edges.len() / 2 + 12_345;
            g.edges.insert(mid, bad);
            assert!(pool.install(|| f.kept(&g)).is_none(), "{bad:?}");
            g.edges.remove(mid);
        }
    }

    #[test]
    fn a_dropped_edge_is_inserted_deleted_and_inserted_again_in_one_batch() {
        let (g, f, other) = setup(false);
        let e = Edge::new(2, 3, 0); // labels 0-1: kept
        let d = Edge::new(2, 0, 0); // labels 0-0: dropped, present
        let ups = [
            lu(1, Update::RemoveEdge(d)),
            lu(2, Update::AddEdge(d)),
            lu(3, Update::AddEdge(e)),
            lu(4, Update::RemoveEdge(d)),
        ];
        let r = other.route(&g, &f, &ups, "s", Strictness::Strict);
        assert!(r.error.is_none());
        assert_eq!(
            r.routes,
            [
                Route::Remove((0, 2)),
                Route::Insert((0, 2), 0),
                Route::Graph,
                Route::Remove((0, 2))
            ]
        );
        assert_eq!(r.graph.len(), 1);
    }

    /// A vertex removed and added back under another label: a batch's
    /// validation rejects the addition (the graph names it), so the
    /// vertex's edges after it are routed by no label; one update at a time
    /// it is valid and its edges go by the new label.
    #[test]
    fn a_relabelled_vertex_routes_its_edges_by_its_new_label_one_update_at_a_time() {
        let (g, f, other) = setup(false);
        let ups = [
            lu(1, Update::RemoveVertex { id: 2, label: None }),
            lu(2, Update::AddVertex { id: 2, label: 1 }),
            lu(3, Update::AddEdge(Edge::new(2, 0, 0))), // 1-0: kept
            lu(4, Update::AddEdge(Edge::new(2, 3, 0))), // 1-1: dropped
        ];
        let batch = other.route(&g, &f, &ups, "s", Strictness::Lenient);
        assert_eq!(
            batch.routes,
            [Route::GraphRemoving(2), Route::Graph, Route::Graph, Route::Graph]
        );
        let each = other.route_each(&g, &f, &ups, "s", Strictness::Lenient);
        assert_eq!(
            each.routes,
            [
                Route::GraphRemoving(2),
                Route::Graph,
                Route::Graph,
                Route::Insert((2, 3), 0)
            ]
        );
    }

    #[test]
    fn a_duplicate_of_a_dropped_edge_is_rejected_here_with_its_line() {
        let (g, f, other) = setup(false);
        let ups = [
            lu(7, Update::AddEdge(Edge::new(1, 2, 0))),
            lu(8, Update::AddEdge(Edge::new(2, 0, 0))),
            lu(9, Update::AddEdge(Edge::new(3, 0, 0))),
        ];
        let r = other.route(&g, &f, &ups, "s", Strictness::Strict);
        let err = r.error.expect("a duplicate");
        assert_eq!(err.line, 8);
        assert_eq!(r.routes.len(), 2, "routing stops at the error");
        let r = other.route(&g, &f, &ups, "s", Strictness::Lenient);
        assert_eq!((r.skipped, r.routes.len()), (1, 3));
    }

    #[test]
    fn updates_the_graph_rejects_go_to_the_graph() {
        let (g, f, other) = setup(false);
        let ups = [
            lu(1, Update::AddEdge(Edge::new(2, 2, 0))),    // self-loop
            lu(2, Update::AddEdge(Edge::new(0, 9, 0))),    // unknown vertex
            lu(3, Update::RemoveEdge(Edge::new(3, 3, 0))), // self-loop
            lu(4, Update::RemoveEdge(Edge::new(2, 1, 0))), // missing, kept triple
            lu(5, Update::RemoveEdge(Edge::new(0, 3, 0))), // missing, kept triple
        ];
        let r = other.route(&g, &f, &ups, "s", Strictness::Strict);
        assert!(r.routes.iter().all(|&x| x == Route::Graph));
        // a vertex added in the batch gives its label to later edges
        let ups = [
            lu(1, Update::AddVertex { id: 9, label: 0 }),
            lu(2, Update::AddEdge(Edge::new(0, 9, 0))),
        ];
        let r = other.route(&g, &f, &ups, "s", Strictness::Strict);
        assert_eq!(r.routes, [Route::Graph, Route::Insert((0, 9), 0)]);
    }

    #[test]
    fn with_edge_labels_a_key_lives_where_its_present_edge_is() {
        let (g, f, other) = setup(true);
        // 0-1 holds label 0 (kept); inserting it with label 5 (dropped
        // triple) is a duplicate the graph must see
        let ups = [lu(1, Update::AddEdge(Edge::new(1, 0, 5)))];
        assert_eq!(
            other.route(&g, &f, &ups, "s", Strictness::Strict).routes,
            [Route::Graph]
        );
        // deleted first, it is a new dropped edge
        let ups = [
            lu(1, Update::RemoveEdge(Edge::new(1, 0, 0))),
            lu(2, Update::AddEdge(Edge::new(1, 0, 5))),
            lu(3, Update::AddEdge(Edge::new(1, 0, 0))),
        ];
        let r = other.route(&g, &f, &ups, "s", Strictness::Strict);
        assert_eq!(r.routes, [Route::Graph, Route::Insert((0, 1), 5), Route::Rejected]);
        // 0-2 is held here with label 0; a kept label does not move it
        let ups = [lu(4, Update::AddEdge(Edge::new(0, 2, 0)))];
        let f01 = EdgeFilter::new([(0, 0, 0)], true);
        assert_eq!(
            other.route(&g, &f01, &ups, "s", Strictness::Strict).routes,
            [Route::Rejected]
        );
    }

    #[test]
    fn a_deletion_must_name_its_edges_label() {
        let (g, f, other) = setup(true);
        // 0-2 is held here with label 0: a deletion naming 3 is rejected
        // here with its reason, and the edge stays
        let ups = [
            lu(5, Update::RemoveEdge(Edge::new(2, 0, 3))),
            lu(6, Update::AddEdge(Edge::new(0, 2, 3))),
        ];
        let r = other.route(&g, &f, &ups, "s", Strictness::Strict);
        let err = r.error.expect("a mismatch");
        assert_eq!(err.line, 5);
        assert_eq!(
            err.kind,
            ErrorKind::EdgeLabelMismatch {
                u: 0,
                v: 2,
                stored: 0,
                named: 3
            }
        );
        let r = other.route(&g, &f, &ups, "s", Strictness::Lenient);
        assert_eq!(
            (r.routes.as_slice(), r.skipped),
            ([Route::Rejected, Route::Rejected].as_slice(), 2)
        );
        // a graph edge (0-1, label 0): the graph rejects the mismatch, so
        // the edge stays there and a later insertion is the graph's duplicate
        let ups = [
            lu(1, Update::RemoveEdge(Edge::new(0, 1, 4))),
            lu(2, Update::AddEdge(Edge::new(0, 1, 4))),
        ];
        let r = other.route(&g, &f, &ups, "s", Strictness::Lenient);
        assert_eq!(r.routes, [Route::Graph, Route::Graph]);
        // the same after a kept insertion (label 4) the graph rejects as a
        // duplicate: the edge keeps its label from before the batch (0), so
        // a deletion naming 4 fails and a dropped triple's insertion is the
        // graph's duplicate too
        let f4 = EdgeFilter::new([(0, 1, 0), (0, 1, 4)], true);
        let ups = [
            lu(1, Update::AddEdge(Edge::new(0, 1, 4))),
            lu(2, Update::RemoveEdge(Edge::new(0, 1, 4))),
            lu(3, Update::AddEdge(Edge::new(0, 1, 7))),
        ];
        let r = other.route(&g, &f4, &ups, "s", Strictness::Lenient);
        assert_eq!(r.routes, [Route::Graph, Route::Graph, Route::Graph]);
        // a vertex removal naming another label is the graph's to reject:
        // the vertex's edges held here stay
        let ups = [lu(1, Update::RemoveVertex { id: 2, label: Some(1) })];
        let r = other.route(&g, &f, &ups, "s", Strictness::Lenient);
        assert_eq!(r.routes, [Route::Graph]);
        let ups = [lu(1, Update::RemoveVertex { id: 2, label: Some(0) })];
        let r = other.route(&g, &f, &ups, "s", Strictness::Lenient);
        assert_eq!(r.routes, [Route::GraphRemoving(2)]);
    }
}

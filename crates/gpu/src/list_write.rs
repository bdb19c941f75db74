//! How the host mirror ([`crate::HostGraph`]) brings one neighbour list in
//! step with the graph, apart from where the list's memory lives, so that
//! the rule can be tested without a GPU.
//!
//! GCSM keeps a touched list in place while a batch is staged (Sec. V-A,
//! Fig. 5): deleted entries of the old part carry a mark, inserted ones are
//! appended after it, and the list is reorganised only after the kernel.
//! The mirror follows the same layout. So when a slot already holds the
//! committed list, staging changes only the marked words and the appended
//! part, and [`write_appended`] writes just those. On the bench's R-MAT
//! (scale 22) an 8,192-update batch touches 14 K lists of 29.6 M words in
//! all, of which 8 K are appended and 8 K marked; rewriting every touched
//! list whole ([`write_whole`]) copied the hubs' lists on every batch.
//!
//! A slot's window is `[0, cap)` for the ids and, in edge-labelled graphs,
//! `[cap, 2 cap)` for the edge labels, as [`crate::HostGraph`] lays it out.

use csm_graph::view::MARK;
use csm_graph::{Label, Nbrs};

/// How a list is brought in step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListWrite {
    /// Every entry (and label) of the raw list.
    Whole,
    /// The appended part, and the mark bit on the old part's deleted entries.
    Appended,
}

/// What a slot holds before the write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stored {
    /// Entries written (both parts).
    pub len: usize,
    /// Capacity in entries.
    pub cap: usize,
    /// Whether the slot holds a plain list (no marks, nothing appended),
    /// i.e. the vertex's committed list when it was last written.
    pub clean: bool,
}

/// The write that brings a slot holding `stored` in step with `nb`.
///
/// [`ListWrite::Appended`] needs a clean slot holding as many entries as
/// `nb`'s old part (by the mirror's contract, every change to a committed
/// list is synced, so that slot holds the old part), room for the appended
/// part, a write in place (`in_place`: host memory, and the caller asks
/// for it), and the positions of the old part's marks (`marks_known`)
/// when it has any.
pub(crate) fn choose(stored: Stored, nb: &Nbrs<'_>, marks_known: bool, in_place: bool) -> ListWrite {
    let fits = nb.base.len() + nb.delta.len() <= stored.cap;
    if in_place && stored.clean && stored.len == nb.base.len() && fits && (nb.marked == 0 || marks_known) {
        ListWrite::Appended
    } else {
        ListWrite::Whole
    }
}

/// Writes `nb`'s raw list whole into a slot's `window` of capacity `cap`.
pub(crate) fn write_whole(window: &mut [u32], cap: usize, nb: &Nbrs<'_>, edge_labelled: bool) {
    let (b, d) = (nb.base.len(), nb.delta.len());
    window[..b].copy_from_slice(nb.base);
    window[b..b + d].copy_from_slice(nb.delta);
    if edge_labelled {
        let labels = &mut window[cap..];
        copy_labels(&mut labels[..b], nb.base_labels);
        copy_labels(&mut labels[b..b + d], nb.delta_labels);
    }
}

/// Writes `nb`'s appended part after the old part a clean slot holds, and
/// sets [`MARK`] on the old part's entries at `marks` (positions in the old
/// part, as [`csm_graph::DynamicGraph::pending_marks`] gives them).
pub(crate) fn write_appended(
    window: &mut [u32],
    cap: usize,
    nb: &Nbrs<'_>,
    marks: impl IntoIterator<Item = u32>,
    edge_labelled: bool,
) {
    let (b, d) = (nb.base.len(), nb.delta.len());
    for q in marks {
        window[q as usize] |= MARK;
    }
    window[b..b + d].copy_from_slice(nb.delta);
    if edge_labelled {
        copy_labels(&mut window[cap + b..cap + b + d], nb.delta_labels);
    }
}

/// Copies `src` into `dst`, or zeros when `src` is empty (an unlabelled view).
pub(crate) fn copy_labels(dst: &mut [u32], src: &[Label]) {
    if src.len() == dst.len() {
        dst.copy_from_slice(src);
    } else {
        dst.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use csm_graph::gen::{graph_from_pairs, make_stream, rmat, StreamAmount, RMAT_STANDARD};
    use csm_graph::{DynamicGraph, GraphView, Strictness, Version, VertexId};

    /// A mirror in plain memory, by the rules of `HostGraph::sync`: a slot
    /// per vertex, relocated with doubled capacity when a list outgrows it.
    struct Model {
        windows: Vec<Vec<u32>>,
        stored: Vec<Stored>,
        labelled: bool,
        appended: usize,
    }

    impl Model {
        fn build(g: &DynamicGraph) -> Model {
            let labelled = g.edge_labelled();
            let mut m = Model {
                windows: Vec::new(),
                stored: Vec::new(),
                labelled,
                appended: 0,
            };
            let all: Vec<VertexId> = (0..g.num_vertices() as VertexId).collect();
            m.sync(g, &all);
            m
        }

        fn sync(&mut self, g: &DynamicGraph, vertices: &[VertexId]) {
            let factor = if self.labelled { 2 } else { 1 };
            while self.windows.len() < g.num_vertices() {
                self.windows.push(Vec::new());
                self.stored.push(Stored::default());
            }
            let mut marks = g.pending_marks().to_vec();
            marks.sort_unstable();
            for &v in vertices {
                let vi = v as usize;
                let nb = g.nbrs(v, Version::New);
                let len = nb.base.len() + nb.delta.len();
                let kind = choose(self.stored[vi], &nb, g.is_pending(), true);
                if kind == ListWrite::Whole && len > self.stored[vi].cap {
                    let cap = (2 * len).max(8);
                    // a fresh slot: what a relocation finds there is garbage
                    self.windows[vi] = vec![0xdead_beef; cap * factor];
                    self.stored[vi].cap = cap;
                }
                let cap = self.stored[vi].cap;
                let w = &mut self.windows[vi];
                match kind {
                    ListWrite::Whole => write_whole(w, cap, &nb, self.labelled),
                    ListWrite::Appended => {
                        let lo = marks.partition_point(|&(x, _)| x < v);
                        let hi = marks.partition_point(|&(x, _)| x <= v);
                        write_appended(w, cap, &nb, marks[lo..hi].iter().map(|m| m.1), self.labelled);
                        self.appended += 1;
                    }
                }
                self.stored[vi] = Stored {
                    len,
                    cap,
                    clean: kind == ListWrite::Whole && nb.is_plain(),
                };
            }
        }

        fn check(&self, g: &DynamicGraph, what: &str) {
            for v in 0..g.num_vertices() as VertexId {
                let nb = g.nbrs(v, Version::New);
                let (vi, cap) = (v as usize, self.stored[v as usize].cap);
                let len = nb.base.len() + nb.delta.len();
                assert_eq!(self.stored[vi].len, len, "{what}: vertex {v}'s length");
                let want: Vec<u32> = nb.base.iter().chain(nb.delta).copied().collect();
                assert_eq!(&self.windows[vi][..len], &want[..], "{what}: vertex {v}'s ids");
                if self.labelled {
                    let labels: Vec<u32> = nb.base_labels.iter().chain(nb.delta_labels).copied().collect();
                    assert_eq!(
                        &self.windows[vi][cap..cap + len],
                        &labels[..],
                        "{what}: vertex {v}'s labels"
                    );
                }
            }
        }
    }

    /// Stages, commits and aborts random batches (inserts and deletes,
    /// hubs touched again and again) and checks after every step that the
    /// model mirror holds each vertex's raw list exactly: the oracle is
    /// the graph's own raw list, read entry by entry. `pool`: on a pool of
    /// 3 threads, with batches large enough for the graph's parallel
    /// staging and commit (forced on this small graph).
    fn mirror_follows_batches(labelled: bool, seed: u64, pool: bool) {
        let scale = 9;
        let (a, b, c) = RMAT_STANDARD;
        let pairs = rmat(scale, 4 << scale, a, b, c, seed);
        let g = graph_from_pairs(1 << scale, &pairs, vec![0; 1 << scale], labelled.then_some((3, seed)));
        let count = if pool { 7000 } else { 3000 };
        let (g0, stream) = make_stream(&g, StreamAmount::Count(count), 0.5, seed);
        let mut dg = DynamicGraph::from_data(&g0).expect("a valid graph");
        let threads = rayon::ThreadPoolBuilder::new()
            .num_threads(if pool { 3 } else { 1 })
            .build()
            .expect("a pool");
        if pool {
            dg.set_parallel_min_arena(0);
        }
        let sizes: &[usize] = if pool { &[2100, 7, 2500, 64] } else { &[1, 7, 64, 300] };
        let mut m = Model::build(&dg);
        m.check(&dg, "built");
        let mut off = 0;
        let mut step = 0;
        while off < stream.len() {
            let size = sizes[step % 4].min(stream.len() - off);
            let batch = &stream[off..off + size];
            threads
                .install(|| dg.stage(batch, "stream", Strictness::Strict).map(drop))
                .expect("a valid batch");
            let changed = dg.touched().to_vec();
            m.sync(&dg, &changed);
            m.check(&dg, &format!("batch {step} staged"));
            if step % 5 == 3 {
                dg.abort();
                m.sync(&dg, &changed);
                m.check(&dg, &format!("batch {step} aborted"));
            } else {
                threads.install(|| dg.commit());
                m.sync(&dg, &changed);
                m.check(&dg, &format!("batch {step} committed"));
                off += size;
            }
            step += 1;
        }
        assert!(m.appended > 100, "the appended path ran only {} times", m.appended);
    }

    #[test]
    fn appended_writes_keep_the_mirror_exact() {
        for seed in 1..4 {
            mirror_follows_batches(false, seed, false);
        }
    }

    /// The same with large batches staged and committed on a pool: marks
    /// and appends sorted by list, lists moved for all their appends at
    /// once.
    #[test]
    fn appended_writes_keep_the_mirror_exact_after_pool_staging() {
        for (seed, labelled) in [(1, false), (2, true)] {
            mirror_follows_batches(labelled, seed, true);
        }
    }

    #[test]
    fn appended_writes_keep_edge_labelled_mirrors_exact() {
        for seed in 1..3 {
            mirror_follows_batches(true, seed, false);
        }
    }

    #[test]
    fn the_whole_list_is_written_where_appending_cannot_work() {
        let plain = Nbrs::plain(&[1, 2, 3], &[]);
        let staged = Nbrs {
            base: &[1, 2 | MARK, 3],
            delta: &[5],
            marked: 1,
            ..Nbrs::EMPTY
        };
        let clean = Stored {
            len: 3,
            cap: 8,
            clean: true,
        };
        assert_eq!(choose(clean, &staged, true, true), ListWrite::Appended);
        assert_eq!(choose(clean, &plain, true, true), ListWrite::Appended);
        // marks unknown, device memory, a dirty slot, a different old part, no room
        assert_eq!(choose(clean, &staged, false, true), ListWrite::Whole);
        assert_eq!(choose(clean, &staged, true, false), ListWrite::Whole);
        assert_eq!(
            choose(Stored { clean: false, ..clean }, &staged, true, true),
            ListWrite::Whole
        );
        assert_eq!(
            choose(Stored { len: 4, ..clean }, &staged, true, true),
            ListWrite::Whole
        );
        assert_eq!(
            choose(Stored { cap: 3, ..clean }, &staged, true, true),
            ListWrite::Whole
        );
    }
}

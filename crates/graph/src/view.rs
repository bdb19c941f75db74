//! The read interface every matcher uses: [`GraphView`] hands out neighbour
//! lists of a chosen [`Version`] without copying them.
//!
//! While a batch is pending in a [`crate::DynamicGraph`], each list is laid out
//! as in GCSM Fig. 5: the sorted list of G_k with deleted entries marked (top bit
//! set), followed by the sorted neighbours appended by the batch. A [`Nbrs`] is a
//! window on that layout:
//!
//! | version | meaning | entries |
//! |---|---|---|
//! | [`Version::Old`] | N(v) in G_k | base, marks ignored |
//! | [`Version::Common`] | N(v) ∩ N'(v) | base minus marked |
//! | [`Version::New`] | N'(v) in G_k+1 | base minus marked, plus appended |

use crate::types::{Label, VertexId};

/// Top bit of a stored neighbour: the edge is deleted by the pending batch.
pub const MARK: u32 = 1 << 31;

/// Which snapshot of a neighbour list to read (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    Old,
    Common,
    New,
}

/// A neighbour list window: a sorted `base` part (entries may carry [`MARK`])
/// and a sorted `delta` part. Edge-label slices are empty when the graph has
/// no edge labels, else parallel to the id slices.
#[derive(Clone, Copy, Debug)]
pub struct Nbrs<'a> {
    pub base: &'a [u32],
    pub base_labels: &'a [Label],
    pub delta: &'a [u32],
    pub delta_labels: &'a [Label],
    /// Marked entries of `base` are not part of this list (Common, New).
    pub skip_marked: bool,
    /// How many entries of `base` carry [`MARK`].
    pub marked: u32,
}

impl<'a> Nbrs<'a> {
    pub const EMPTY: Nbrs<'static> = Nbrs {
        base: &[],
        base_labels: &[],
        delta: &[],
        delta_labels: &[],
        skip_marked: false,
        marked: 0,
    };

    /// A clean sorted list.
    pub fn plain(ids: &'a [u32], labels: &'a [Label]) -> Self {
        Nbrs {
            base: ids,
            base_labels: labels,
            delta: &[],
            delta_labels: &[],
            skip_marked: false,
            marked: 0,
        }
    }

    /// True when the list is exactly `base` with no marks and nothing appended:
    /// matchers take their fast slice paths then.
    #[inline]
    pub fn is_plain(&self) -> bool {
        self.marked == 0 && self.delta.is_empty()
    }

    /// The entries from `first` on, as a subslice, when the list is plain
    /// (`None` otherwise).
    #[inline]
    pub fn plain_from(&self, first: VertexId) -> Option<Nbrs<'a>> {
        if !self.is_plain() {
            return None;
        }
        let k = self.base.partition_point(|&e| e < first);
        let labels = if self.base_labels.is_empty() {
            self.base_labels
        } else {
            &self.base_labels[k..]
        };
        Some(Nbrs::plain(&self.base[k..], labels))
    }

    /// Exact number of neighbours in this version.
    #[inline]
    pub fn len(&self) -> usize {
        let skipped = if self.skip_marked { self.marked as usize } else { 0 };
        self.base.len() - skipped + self.delta.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Edge label of the entry at `i` of `base` (0 without edge labels).
    #[inline]
    pub fn base_label(&self, i: usize) -> Label {
        if self.base_labels.is_empty() {
            0
        } else {
            self.base_labels[i]
        }
    }

    #[inline]
    pub fn delta_label(&self, i: usize) -> Label {
        if self.delta_labels.is_empty() {
            0
        } else {
            self.delta_labels[i]
        }
    }

    /// Label of the edge to `x` if `x` is in this list.
    pub fn find(&self, x: VertexId) -> Option<Label> {
        if let Ok(i) = self.base.binary_search_by(|&e| (e & !MARK).cmp(&x)) {
            if !(self.skip_marked && self.base[i] & MARK != 0) {
                return Some(self.base_label(i));
            }
        }
        self.delta.binary_search(&x).ok().map(|i| self.delta_label(i))
    }

    pub fn contains(&self, x: VertexId) -> bool {
        self.find(x).is_some()
    }

    /// Entries `(neighbour, edge label)` in ascending neighbour order.
    pub fn iter(&self) -> NbrsIter<'a> {
        NbrsIter {
            list: *self,
            i: 0,
            j: 0,
        }
    }

    /// Collects the list (ascending); allocation, so for tests and tooling.
    pub fn to_vec(&self) -> Vec<(VertexId, Label)> {
        self.iter().collect()
    }
}

/// Ascending merge of the live base entries and the delta entries.
pub struct NbrsIter<'a> {
    list: Nbrs<'a>,
    i: usize,
    j: usize,
}

impl Iterator for NbrsIter<'_> {
    type Item = (VertexId, Label);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let l = &self.list;
        while self.i < l.base.len() && l.skip_marked && l.base[self.i] & MARK != 0 {
            self.i += 1;
        }
        let b = l.base.get(self.i).map(|&e| e & !MARK);
        let d = l.delta.get(self.j).copied();
        match (b, d) {
            (Some(x), Some(y)) if y < x => {
                self.j += 1;
                Some((y, l.delta_label(self.j - 1)))
            }
            (Some(x), _) => {
                self.i += 1;
                Some((x, l.base_label(self.i - 1)))
            }
            (None, Some(y)) => {
                self.j += 1;
                Some((y, l.delta_label(self.j - 1)))
            }
            (None, None) => None,
        }
    }
}

/// A list read by label ([`GraphView::nbrs_with_label`]).
#[derive(Clone, Copy, Debug)]
pub struct LabelGroup<'a> {
    /// Sorted entries, all of the vertex label asked for.
    pub list: Nbrs<'a>,
    /// Whether every entry also has the edge label asked for (the store
    /// groups by both labels), so that readers need not filter it.
    pub elabel_applied: bool,
}

impl<'a> LabelGroup<'a> {
    /// A group by vertex label only.
    pub fn by_vertex_label(list: Nbrs<'a>) -> Self {
        LabelGroup {
            list,
            elabel_applied: false,
        }
    }
}

/// Read access to a (possibly pending) labelled graph.
///
/// Implemented by [`crate::CsrGraph`] (all versions equal) and
/// [`crate::DynamicGraph`]; researchers can plug in their own store.
pub trait GraphView: Sync {
    /// Number of vertex slots; every id below it may be read.
    fn num_vertices(&self) -> usize;
    /// Label of every vertex slot ([`crate::ABSENT`] for missing vertices).
    fn labels(&self) -> &[Label];
    /// Neighbour list of `v` in version `ver`.
    fn nbrs(&self, v: VertexId, ver: Version) -> Nbrs<'_>;
    /// Whether edge labels carry meaning.
    fn edge_labelled(&self) -> bool;
    /// An upper bound on the degree of any vertex in any version (D in GCSM Sec. IV).
    fn max_degree(&self) -> usize;

    /// True when [`GraphView::nbrs_with_label`] may answer (for every vertex,
    /// as [`crate::CsrByLabel`], or for some, as [`crate::HubLabelGroups`]);
    /// readers may then skip label lookups. A wrapper that changes lists
    /// forwards it only where the inner view's groups match its own lists
    /// ([`crate::CommonView`]: the common version; [`crate::VersionView`]:
    /// lists unchanged by its time, and its own grouped versions).
    fn has_label_groups(&self) -> bool {
        false
    }

    /// The entries of `nbrs(v, ver)` whose vertex has label `label`, as a
    /// sorted list, where the store keeps `v`'s list grouped by label;
    /// `None` otherwise, and readers filter by label themselves (an
    /// intersection with one label group needs no filter). With `elabel`
    /// (a query edge's label), a store that groups by (vertex label, edge
    /// label) gives only those edges and says so
    /// ([`LabelGroup::elabel_applied`]); readers filter the edge label of
    /// other groups.
    #[inline]
    fn nbrs_with_label(
        &self,
        _v: VertexId,
        _ver: Version,
        _label: Label,
        _elabel: Option<Label>,
    ) -> Option<LabelGroup<'_>> {
        None
    }

    #[inline]
    fn label(&self, v: VertexId) -> Label {
        self.labels()[v as usize]
    }
}

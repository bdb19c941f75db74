//! csm-graph: the data side of csm.
//!
//! * [`types`]: ids, labels, edges, updates, the owned edge list [`GraphData`].
//! * [`dynamic`]: [`DynamicGraph`], the host-resident mutable store of GCSM
//!   Sec. V-A / Fig. 5, with old/new/common neighbour views while a batch is pending.
//! * [`csr`]: [`CsrGraph`], an immutable snapshot for static matching, packing and upload.
//! * [`by_label`]: [`CsrByLabel`], a CSR whose lists can be read one neighbour label at a time.
//! * [`hub_groups`]: [`HubLabelGroups`], label groups of a view's hub lists, built lazily per batch.
//! * [`view`]: the [`GraphView`] trait every matcher reads graphs through.
//! * [`edge_set`]: [`EdgeSet`], a compact mutable set of undirected edges (lookups only).
//! * [`compact`]: a graph without its isolated vertices, renumbered (static counts).
//! * [`relevant`]: [`EdgeFilter`] and [`OtherEdges`], a one-query matcher's graph split
//!   into the edges the query can use and the rest (RapidFlow's views by label triple).
//! * [`common_view`]: [`CommonView`], G ∩ G' of a one-edge batch with plain lists.
//! * [`versions`]: [`UpdateVersions`], per-update list versions of a run of
//!   single-edge updates (DCSM's multi-version graph), to match them concurrently.
//! * [`ids`]: [`IdMap`], dense renumbering of sparse vertex ids (and of their streams).
//! * [`format`](mod@format): readers and writers for the graph and update-stream formats.
//! * [`gen`]: seeded generators (R-MAT, Erdős–Rényi, grids, streams, queries).

/// Inside an `impl GraphView`: the methods a view that adds label groups to
/// another view (the field `$inner`) forwards unchanged (vertices, labels,
/// whole lists, edge labels, maximum degree).
macro_rules! forward_whole_lists {
    ($inner:ident) => {
        fn num_vertices(&self) -> usize {
            self.$inner.num_vertices()
        }
        fn labels(&self) -> &[$crate::types::Label] {
            self.$inner.labels()
        }
        #[inline]
        fn nbrs(&self, v: $crate::types::VertexId, ver: $crate::view::Version) -> $crate::view::Nbrs<'_> {
            self.$inner.nbrs(v, ver)
        }
        fn edge_labelled(&self) -> bool {
            self.$inner.edge_labelled()
        }
        fn max_degree(&self) -> usize {
            self.$inner.max_degree()
        }
    };
}

pub mod by_label;
pub mod common_view;
pub mod compact;
pub mod csr;
mod degree_count;
pub mod dynamic;
pub mod edge_set;
pub mod error;
pub mod format;
pub mod gen;
pub mod hub_groups;
pub mod ids;
pub mod phases;
pub mod relevant;
mod slices;
pub mod types;
pub mod versions;
pub mod view;

pub use by_label::CsrByLabel;
pub use common_view::CommonView;
pub use csr::CsrGraph;
pub use dynamic::{BatchDelta, DynamicGraph, Staging, Strictness};
pub use edge_set::{EdgeKey, EdgeSet};
pub use error::{ErrorKind, InputError};
pub use hub_groups::{HubLabelGroups, Hubs, NewGroups};
pub use ids::{IdMap, IdPolicy};
pub use phases::{split_relabels, Phases, StartState};
pub use relevant::{EdgeFilter, OtherEdges, Route, Routed, WholeGraph};
pub use types::*;
pub use versions::{UpdateVersions, VersionView};
pub use view::{GraphView, LabelGroup, Nbrs, Version};

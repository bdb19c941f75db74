//! The parallel CSR build behind [`super::CsrGraph::from_parts`]: a radix
//! pass by vertex ranges, with no atomic operation.
//!
//! 1. The edges are cut into chunks; each chunk validates its edges (the
//!    first bad one in order wins) and counts its half-edges (`u → v` and
//!    `v → u`) per *bucket*, a range of `2^shift` consecutive vertices.
//! 2. Each chunk writes its half-edges into its own piece of each bucket's
//!    region (bucket-major, chunk order inside), as `source << 32 | target`
//!    words, and their labels at the same positions of the label output.
//! 3. Each bucket, on its own: degrees of its vertices, their offsets (the
//!    bucket's region starts where its first list starts, so the offsets
//!    are the bucket's base plus a local prefix sum), a counting sort of
//!    its half-edges into its lists, and each list sorted (by neighbour,
//!    then edge label) and checked for a repeated neighbour.
//!
//! Every write goes to a slice only one job holds, so the passes cost what
//! the sequential build's do (an earlier build with an atomic counter per
//! vertex was slower on two threads than one thread without them: each
//! half-edge paid two contended atomic adds).

use rayon::prelude::*;

use crate::error::{ErrorKind, InputError};
use crate::slices::{sort_paired_in, windows_mut};
use crate::types::{Edge, Label, VertexId, ABSENT};

/// The arrays of a CSR: offsets (`n + 1`), neighbours, edge labels (empty
/// without edge labels), largest degree.
pub(super) struct Arrays {
    pub offsets: Vec<u64>,
    pub nbrs: Vec<VertexId>,
    pub elabels: Vec<Label>,
    pub max_degree: usize,
}

/// Jobs below this many edges (or half-edges) are not split further:
/// small graphs build as one job (PBE builds one per partition).
const MIN: usize = 1 << 12;

/// Builds the arrays, or names the first bad edge (self-loop, unknown
/// endpoint: its index + 1) or, for repeated pairs, the last occurrence of
/// the lowest vertex's repeated pair, as the sequential build did.
pub(super) fn build(labels: &[Label], edges: &[Edge], edge_labelled: bool, source: &str) -> Result<Arrays, InputError> {
    let n = labels.len();
    let bad = |e: &Edge| {
        if e.u == e.v {
            return Some(ErrorKind::SelfLoop(e.u));
        }
        [e.u, e.v]
            .into_iter()
            .find(|&x| x as usize >= n || labels[x as usize] == ABSENT)
            .map(ErrorKind::UnknownVertex)
    };
    let threads = rayon::current_num_threads().max(1);
    let chunk_len = (edges.len() / (4 * threads)).max(MIN);
    let chunks: Vec<&[Edge]> = edges.chunks(chunk_len).collect();
    // buckets: about 64 a thread (power-law hubs make a few of them heavy)
    let wanted = if edges.len() < 2 * MIN {
        1
    } else {
        (64 * threads).min(4096)
    };
    let shift = (n.div_ceil(wanted).max(1)).next_power_of_two().trailing_zeros();
    let buckets = n.div_ceil(1 << shift).max(1);
    let bucket = |v: VertexId| (v >> shift) as usize;

    // 1. validate and count per chunk and bucket
    let counts: Vec<Result<Vec<usize>, usize>> = chunks
        .par_iter()
        .enumerate()
        .map(|(c, es)| {
            let mut count = vec![0usize; buckets];
            for (i, e) in es.iter().enumerate() {
                if bad(e).is_some() {
                    return Err(c * chunk_len + i);
                }
                count[bucket(e.u)] += 1;
                count[bucket(e.v)] += 1;
            }
            Ok(count)
        })
        .collect();
    let counts: Vec<Vec<usize>> = match counts.iter().find_map(|c| c.as_ref().err()) {
        Some(&i) => return Err(InputError::new(source, i + 1, bad(&edges[i]).expect("bad"))),
        None => counts.into_iter().map(|c| c.expect("checked")).collect(),
    };
    let mut starts = vec![0usize; buckets + 1];
    for b in 0..buckets {
        starts[b + 1] = starts[b] + counts.iter().map(|c| c[b]).sum::<usize>();
    }
    let total = starts[buckets];

    // 2. scatter each chunk's half-edges into its pieces of the buckets
    let mut half: Vec<u64> = (0..total).into_par_iter().with_min_len(MIN).map(|_| 0).collect();
    let mut nbrs: Vec<VertexId> = vec![0; total];
    let mut elabels: Vec<Label> = vec![0; if edge_labelled { total } else { 0 }];
    {
        let mut half_pieces = pieces(&mut half, &counts);
        let mut label_pieces = match edge_labelled {
            true => pieces(&mut elabels, &counts).into_iter().map(Some).collect(),
            false => (0..chunks.len()).map(|_| None).collect::<Vec<_>>(),
        };
        (chunks.par_iter().zip(&mut half_pieces).zip(&mut label_pieces)).for_each(|((es, hp), lp)| {
            let mut at = vec![0usize; buckets];
            for e in es.iter() {
                for (a, b) in [(e.u, e.v), (e.v, e.u)] {
                    let k = bucket(a);
                    hp[k][at[k]] = (a as u64) << 32 | b as u64;
                    if let Some(lp) = lp.as_mut() {
                        lp[k][at[k]] = e.label;
                    }
                    at[k] += 1;
                }
            }
        });
    }

    // 3. each bucket: offsets, lists, sorting, repeated pairs
    let mut offsets = vec![0u64; n + 1];
    let width = 1usize << shift;
    let regions = || starts.windows(2).map(|w| (w[0], w[1]));
    let half_regions = windows_mut(&mut half, regions());
    let nbr_regions = windows_mut(&mut nbrs, regions());
    let label_regions: Vec<Option<&mut [Label]>> = match edge_labelled {
        true => windows_mut(&mut elabels, regions()).into_iter().map(Some).collect(),
        false => (0..buckets).map(|_| None).collect(),
    };
    let offset_regions: Vec<&mut [u64]> = offsets[1..].chunks_mut(width).collect();
    let repeated = (half_regions
        .into_par_iter()
        .zip(nbr_regions)
        .zip(label_regions)
        .zip(offset_regions))
    .enumerate()
    .map(|(b, (((keys, out), labels_out), offs))| {
        let lo = b << shift;
        sort_bucket(keys, lo, starts[b] as u64, offs, out, labels_out)
    })
    .flatten()
    .min();
    drop(half);
    if let Some((v, x)) = repeated {
        let key = (v.min(x), v.max(x));
        let pos = edges.iter().rposition(|e| e.key() == key).unwrap_or(0);
        return Err(InputError::new(source, pos + 1, ErrorKind::DuplicateEdge(key.0, key.1)));
    }
    let max_degree = (offsets.par_windows(2).with_min_len(MIN).map(|w| (w[1] - w[0]) as usize))
        .max()
        .unwrap_or(0);
    Ok(Arrays {
        offsets,
        nbrs,
        elabels,
        max_degree,
    })
}

/// One bucket (vertices `lo..lo + offs.len()`, half-edges `keys` as
/// `source << 32 | target`, labels already at the keys' positions in
/// `labels`): writes the offsets `offs[i]` = end of vertex `lo + i`'s list,
/// the sorted lists into `out` (and `labels`), and returns the lowest
/// vertex with a repeated neighbour, with that neighbour.
fn sort_bucket(
    keys: &[u64],
    lo: usize,
    base: u64,
    offs: &mut [u64],
    out: &mut [VertexId],
    labels: Option<&mut [Label]>,
) -> Option<(VertexId, VertexId)> {
    let mut start = vec![0usize; offs.len() + 1];
    for &k in keys {
        start[(k >> 32) as usize - lo + 1] += 1;
    }
    for i in 0..offs.len() {
        start[i + 1] += start[i];
        offs[i] = base + start[i + 1] as u64;
    }
    let mut at = start[..offs.len()].to_vec();
    let old_labels = labels.as_ref().map(|l| l.to_vec());
    let mut labels = labels;
    for (i, &k) in keys.iter().enumerate() {
        let s = &mut at[(k >> 32) as usize - lo];
        out[*s] = k as VertexId;
        if let (Some(l), Some(old)) = (labels.as_mut(), old_labels.as_ref()) {
            l[*s] = old[i];
        }
        *s += 1;
    }
    let mut pairs = Vec::new();
    let mut repeated = None;
    for (i, w) in start.windows(2).enumerate() {
        let list = &mut out[w[0]..w[1]];
        // by neighbour, then label
        match labels.as_mut() {
            Some(l) => sort_paired_in(list, &mut l[w[0]..w[1]], &mut pairs),
            None => list.sort_unstable(),
        }
        if repeated.is_none() {
            if let Some(p) = list.windows(2).find(|p| p[0] == p[1]) {
                repeated = Some(((lo + i) as VertexId, p[0]));
            }
        }
    }
    repeated
}

/// `xs` laid out bucket-major (bucket `b`'s region holds chunk 0's part,
/// then chunk 1's, ...), cut into each chunk's pieces: `[chunk][bucket]`.
fn pieces<'a, T>(xs: &'a mut [T], counts: &[Vec<usize>]) -> Vec<Vec<&'a mut [T]>> {
    let buckets = counts.first().map_or(0, |c| c.len());
    let sizes = (0..buckets).flat_map(|b| counts.iter().map(move |c| c[b]));
    let spans = sizes.scan(0, |at, size| {
        *at += size;
        Some((*at - size, *at))
    });
    let mut out: Vec<Vec<&mut [T]>> = (0..counts.len()).map(|_| Vec::with_capacity(buckets)).collect();
    for (i, piece) in windows_mut(xs, spans).into_iter().enumerate() {
        out[i % counts.len()].push(piece);
    }
    out
}

//! Per-vertex edge counts of an edge slice on rayon's pool, without atomics.

use crate::types::VertexId;
use rayon::prelude::*;

/// How many of `items` have each vertex `0..n` as an endpoint (`ends` gives
/// an item's two endpoints). Groups of items count into arrays of their
/// own, no more of them than three per item (so they take no more memory
/// than a copy of the edges), and the arrays are summed by vertex ranges.
pub(crate) fn degrees<T: Sync>(items: &[T], n: usize, ends: impl Fn(&T) -> (VertexId, VertexId) + Sync) -> Vec<u32> {
    let groups = rayon::current_num_threads().min(3 * items.len() / n.max(1)).max(1);
    let count = |part: &[T]| {
        let mut d = vec![0u32; n];
        for x in part {
            let (u, v) = ends(x);
            d[u as usize] += 1;
            d[v as usize] += 1;
        }
        d
    };
    if groups == 1 {
        return count(items);
    }
    let counts: Vec<Vec<u32>> = items.par_chunks(items.len().div_ceil(groups)).map(count).collect();
    let mut total = vec![0u32; n];
    let range = n.div_ceil(rayon::current_num_threads()).max(1 << 12);
    total.par_chunks_mut(range).enumerate().for_each(|(r, out)| {
        let at = r * range;
        let len = out.len();
        for c in &counts {
            for (o, &x) in out.iter_mut().zip(&c[at..at + len]) {
                *o += x;
            }
        }
    });
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_sum_to_the_counts() {
        let edges: Vec<(u32, u32)> = (0..1000u32).map(|i| (i % 7, 7 + i % 5)).collect();
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let d = pool.install(|| degrees(&edges, 13, |&e| e));
            let mut want = vec![0u32; 13];
            for &(u, v) in &edges {
                want[u as usize] += 1;
                want[v as usize] += 1;
            }
            assert_eq!(d, want);
        }
    }
}

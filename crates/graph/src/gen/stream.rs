//! Update streams from a static graph, following GCSM Sec. VI-A
//! ("Experimental Setup"): pick edges of the data graph at random, mark each
//! as an insertion or a deletion with equal probability, and remove the
//! insertions from the initial graph.

use crate::types::{GraphData, LocatedUpdate, Update};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How many edges a stream takes from the data graph.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StreamAmount {
    /// This fraction of the edges, rounded (GCSM Sec. VI-A uses 10% for AZ,
    /// LJ, PA and CA: [`PAPER_FRACTION`]).
    Fraction(f64),
    /// This many edges, capped at the edge count (GCSM Sec. VI-A uses
    /// 12 x 8192 for FR, SF3K and SF10K: [`PAPER_COUNT`]).
    Count(usize),
}

/// The fraction of edges GCSM Sec. VI-A turns into updates for the smaller graphs.
pub const PAPER_FRACTION: f64 = 0.1;
/// The number of updates GCSM Sec. VI-A uses for the billion-edge graphs.
pub const PAPER_COUNT: usize = 12 * 8192;
/// GCSM Sec. VI-A marks insertions and deletions with equal probability.
pub const DEFAULT_INSERT_PROB: f64 = 0.5;

/// `count` distinct indices of `0..m`, uniformly, by rejection against a
/// bitmap (drawing the complement when `count > m / 2`). The order is not
/// random; the caller shuffles.
fn choose(m: usize, count: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let complement = count > m / 2;
    let draws = if complement { m - count } else { count };
    let mut hit = vec![false; m];
    let mut picked = Vec::with_capacity(draws);
    while picked.len() < draws {
        let i = rng.random_range(0..m);
        if !hit[i] {
            hit[i] = true;
            picked.push(i);
        }
    }
    if complement {
        (0..m).filter(|&i| !hit[i]).collect()
    } else {
        picked
    }
}

/// Splits `g` into an initial graph `G_0` and an edge update stream, as in
/// GCSM Sec. VI-A.
///
/// `amount` edges are chosen uniformly at random without replacement. Each
/// becomes an insertion with probability `insert_prob`: it is removed from
/// `G_0` and appears as [`Update::AddEdge`]; otherwise it stays in `G_0` and
/// appears as [`Update::RemoveEdge`]. The stream is shuffled, and line numbers
/// are positions plus one (as [`crate::format::write_updates`] would write
/// them). Every edge appears at most once, so every update is valid when
/// applied in order to `G_0`; `G_0` keeps `g`'s edge order, and after the
/// whole stream the graph holds exactly the edges of `g` minus the deletions.
///
/// Deviation from the paper: the paper also removes a vertex from the initial
/// graph when all its edges are removed; here every vertex of `g` stays in
/// `G_0` (possibly isolated), so the stream needs no vertex insertions and
/// vertex ids stay stable. Deterministic for a given `seed`.
///
/// # Panics
/// If a fraction or `insert_prob` is outside `[0, 1]`.
pub fn make_stream(
    g: &GraphData,
    amount: StreamAmount,
    insert_prob: f64,
    seed: u64,
) -> (GraphData, Vec<LocatedUpdate>) {
    assert!(
        (0.0..=1.0).contains(&insert_prob),
        "insert_prob must be in [0, 1], got {insert_prob}"
    );
    let m = g.edges.len();
    let count = match amount {
        StreamAmount::Fraction(f) => {
            assert!((0.0..=1.0).contains(&f), "stream fraction must be in [0, 1], got {f}");
            ((f * m as f64).round() as usize).min(m)
        }
        StreamAmount::Count(c) => c.min(m),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let chosen = choose(m, count, &mut rng);
    let mut inserted = vec![false; m];
    let mut updates: Vec<Update> = Vec::with_capacity(count);
    for i in chosen {
        let e = g.edges[i];
        if rng.random_bool(insert_prob) {
            inserted[i] = true;
            updates.push(Update::AddEdge(e));
        } else {
            updates.push(Update::RemoveEdge(e));
        }
    }
    updates.shuffle(&mut rng);
    let edges = g
        .edges
        .iter()
        .zip(&inserted)
        .filter(|(_, &ins)| !ins)
        .map(|(e, _)| *e)
        .collect();
    let g0 = GraphData {
        labels: g.labels.clone(),
        edges,
        edge_labelled: g.edge_labelled,
    };
    let stream = updates
        .into_iter()
        .enumerate()
        .map(|(i, update)| LocatedUpdate { line: i + 1, update })
        .collect();
    (g0, stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{erdos_renyi, graph_from_pairs};
    use std::collections::HashSet;

    fn data() -> GraphData {
        let pairs = erdos_renyi(300, 2000, 11);
        graph_from_pairs(300, &pairs, vec![0; 300], Some((2, 1)))
    }

    #[test]
    fn updates_apply_in_order() {
        let g = data();
        for (amount, p) in [
            (StreamAmount::Fraction(0.1), 0.5),
            (StreamAmount::Count(500), 0.8),
            (StreamAmount::Count(5000), 0.0),
        ] {
            let (g0, stream) = make_stream(&g, amount, p, 42);
            let want = match amount {
                StreamAmount::Fraction(f) => (f * 2000.0) as usize,
                StreamAmount::Count(c) => c.min(2000),
            };
            assert_eq!(stream.len(), want);
            assert_eq!(g0.labels, g.labels);
            let mut live: HashSet<(u32, u32, u32)> = g0.edges.iter().map(|e| (e.key().0, e.key().1, e.label)).collect();
            assert_eq!(live.len(), g0.edges.len());
            let inserts = stream.iter().filter(|u| matches!(u.update, Update::AddEdge(_))).count();
            assert_eq!(g0.edges.len() + inserts, g.edges.len());
            for (i, lu) in stream.iter().enumerate() {
                assert_eq!(lu.line, i + 1);
                match lu.update {
                    Update::AddEdge(e) => {
                        assert!(live.insert((e.key().0, e.key().1, e.label)), "insert of present {e:?}")
                    }
                    Update::RemoveEdge(e) => {
                        assert!(live.remove(&(e.key().0, e.key().1, e.label)), "delete of absent {e:?}")
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
            let deleted = stream.len() - inserts;
            assert_eq!(live.len(), g.edges.len() - deleted);
        }
    }

    #[test]
    fn deterministic_and_mixed() {
        let g = data();
        let a = make_stream(&g, StreamAmount::Fraction(PAPER_FRACTION), DEFAULT_INSERT_PROB, 5);
        assert_eq!(
            a,
            make_stream(&g, StreamAmount::Fraction(PAPER_FRACTION), DEFAULT_INSERT_PROB, 5)
        );
        assert_ne!(
            a.1,
            make_stream(&g, StreamAmount::Fraction(PAPER_FRACTION), DEFAULT_INSERT_PROB, 6).1
        );
        let ins = a.1.iter().filter(|u| matches!(u.update, Update::AddEdge(_))).count();
        assert!((60..140).contains(&ins), "{ins} insertions of 200");
    }
}

//! Counts past 64 bits saturate ([`csm_planner::count`]) instead of
//! wrapping: on stars whose embeddings have a closed form, the `cpu`
//! engines give the exact count below 2^64 − 1 and the saturated count at
//! or above it, statically and per batch.

mod common;

use common::located;
use common::stars::{per_center, process_joins, star_query, stars, take_joins};
use csm_baselines::registry::{continuous_engine, static_engine, EngineOptions};
use std::sync::Arc;

use csm_engine::Batch;
use csm_graph::{CsrGraph, Edge, Strictness, Update};
use csm_planner::count::SATURATED;
use csm_planner::{CostOrder, GcsmOrder, OrderStrategy};
use proptest::prelude::*;

/// What an engine must report for a true count of `n`.
fn as_count(n: u128) -> u64 {
    u64::try_from(n).ok().filter(|&c| c != SATURATED).unwrap_or(SATURATED)
}

/// The engines' options: `order` 0 the default (sampled), 1 cost, 2 GCSM's.
fn opts(threads: usize, order: u8) -> EngineOptions {
    let order: Arc<dyn OrderStrategy> = match order {
        0 => EngineOptions::default().order,
        1 => Arc::new(CostOrder),
        _ => Arc::new(GcsmOrder),
    };
    EngineOptions {
        threads,
        order,
        ..EngineOptions::default()
    }
}

/// Per-label leaf counts (2-60) for `labels` labels, and a star of 6-24
/// leaves using each label at most five times (so that counting, not
/// listing, finds them: a label group of a wide tail, whose leaves are
/// twins, or a part of a split). About a quarter of the cases have 2^64
/// embeddings or more.
fn case() -> impl Strategy<Value = (Vec<u32>, Vec<u32>)> {
    (1usize..=16).prop_flat_map(|labels| {
        (
            proptest::collection::vec(2u32..=60, labels),
            proptest::collection::vec(1u32..=labels as u32, 6..=24),
        )
            .prop_map(|(m, mut leaves)| {
                leaves.sort_unstable();
                // at most five leaves per label
                let mut kept: Vec<u32> = Vec::new();
                for l in leaves {
                    if kept.iter().filter(|&&x| x == l).count() < 5 {
                        kept.push(l);
                    }
                }
                (m, kept)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Static counts: exact below 2^64 − 1, saturated from it on.
    #[test]
    fn static_counts_saturate(
        (m, leaves) in case(),
        c in 1u32..=3,
        h in 0u32..=3,
        threads in 1usize..=2,
        order in 0u8..=2,
    ) {
        let handle = (h > 0).then_some(m.len() as u32 + 1);
        let q = star_query(&leaves, handle);
        let want = as_count((u128::from(c) * u128::from(h.max(1))).saturating_mul(per_center(&m, &leaves)));
        let csr = CsrGraph::from_data(&stars(c, &m, h)).unwrap();
        for name in ["cpu", "cpu-nosym"] {
            let got = static_engine(name, &opts(threads, order)).unwrap().count(&csr, &q).unwrap();
            prop_assert_eq!(got, want, "{} on m = {:?}, leaves = {:?}, c = {}, h = {}", name, m, leaves, c, h);
        }
    }

    /// A batch joining center 0 to every leaf of label 1 adds the star's
    /// embeddings at that center; deleting those edges again removes them.
    #[test]
    fn batch_counts_saturate(
        (m, leaves) in case(),
        c in 1u32..=2,
        h in 0u32..=2,
        threads in 1usize..=2,
        order in 0u8..=2,
    ) {
        prop_assume!(leaves.contains(&1));
        let handle = (h > 0).then_some(m.len() as u32 + 1);
        let q = star_query(&leaves, handle);
        let want = as_count(u128::from(h.max(1)).saturating_mul(per_center(&m, &leaves)));
        let mut g = stars(c, &m, h);
        let joins = take_joins(&mut g);
        for name in ["cpu", "cpu-whole"] {
            let mut eng = continuous_engine(name, &opts(threads, order)).unwrap();
            eng.init(&g, &q).unwrap();
            for insert in [true, false] {
                let want = if insert { (want, 0) } else { (0, want) };
                prop_assert_eq!(process_joins(eng.as_mut(), &joins, insert), want, "{} on m = {:?}, leaves = {:?}", name, m, leaves);
            }
        }
    }
}

/// The star of the brief's example: 16 leaves of distinct labels, 20
/// leaves of each label: 20^16 ≈ 6.6 · 10^20 embeddings, once wrapped to a
/// wrong 64-bit number.
#[test]
fn a_star_of_sixteen_labels_saturates() {
    let m = vec![20; 16];
    let leaves: Vec<u32> = (1..=16).collect();
    let csr = CsrGraph::from_data(&stars(1, &m, 0)).unwrap();
    let got = static_engine("cpu", &opts(1, 0))
        .unwrap()
        .count(&csr, &star_query(&leaves, None))
        .unwrap();
    assert_eq!(got, SATURATED);
    // three centers: three saturated counts summed
    let csr = CsrGraph::from_data(&stars(3, &m, 0)).unwrap();
    for threads in [1, 2] {
        let got = static_engine("cpu", &opts(threads, 0))
            .unwrap()
            .count(&csr, &star_query(&leaves, None))
            .unwrap();
        assert_eq!(got, SATURATED, "{threads} threads");
    }
    // one leaf fewer: 20^15 ≈ 3.3 · 10^19, still past 2^64; 14: exact
    let m14 = vec![20; 14];
    let csr = CsrGraph::from_data(&stars(1, &m14, 0)).unwrap();
    let got = static_engine("cpu", &opts(1, 0))
        .unwrap()
        .count(&csr, &star_query(&leaves[..14], None))
        .unwrap();
    assert_eq!(got, 20u64.pow(14));
}

/// A label with more query leaves (three of label 5) than data leaves (two)
/// has no embedding, however many the other labels give (about 10^23
/// tuples, past 2^64). Without symmetry breaking the leaves are parts of
/// one split; before the split multiplied its label clusters' counts, the
/// overlaps of every part saturated and the engine reported a saturated
/// count for 0 (found by `static_counts_saturate`).
#[test]
fn a_label_short_of_leaves_counts_zero_beside_a_saturated_product() {
    let m = vec![4, 4, 14, 37, 2, 20, 40, 2, 14, 45, 47, 2, 39, 2, 38];
    let leaves = vec![1, 2, 3, 3, 4, 5, 5, 5, 6, 7, 9, 10, 10, 11, 13, 15, 15];
    assert_eq!(per_center(&m, &leaves), 0);
    let q = star_query(&leaves, Some(m.len() as u32 + 1));
    let csr = CsrGraph::from_data(&stars(1, &m, 3)).unwrap();
    for name in ["cpu", "cpu-nosym"] {
        for order in 0..=2 {
            let got = static_engine(name, &opts(1, order)).unwrap().count(&csr, &q).unwrap();
            assert_eq!(got, 0, "{name}, order {order}");
        }
    }
}

/// A star whose count needs more than 128 bits (60 leaves of each of five
/// labels, 24 query leaves: about 10^42 per center), on three centers with
/// three handles: the oracle itself must saturate, and the engines too.
#[test]
fn a_star_past_128_bits_saturates() {
    let m = vec![60; 5];
    let leaves: Vec<u32> = (1..=5).flat_map(|l| std::iter::repeat_n(l, 5)).skip(1).collect();
    assert_eq!(per_center(&m, &leaves), u128::MAX);
    let q = star_query(&leaves, Some(6));
    let csr = CsrGraph::from_data(&stars(3, &m, 3)).unwrap();
    for name in ["cpu", "cpu-nosym"] {
        let got = static_engine(name, &opts(2, 0)).unwrap().count(&csr, &q).unwrap();
        assert_eq!(got, SATURATED, "{name}");
    }
}

/// One update at a time: joining center 0 to its label-1 leaves one edge
/// per batch adds, in total, the stars at center 0, and parting them again
/// removes them (the closed form, below 2^64). Each update's delta plans
/// bind the center's label-1 leaves to its old list and its new one; the
/// wide tail counts such a group as two classes of twins
/// ([`csm_planner::count::two_classes`]). Before, every update after the
/// first listed the other labels' leaves (3 s an update on the case
/// `batch_counts_saturate` found, minutes for the run).
#[test]
fn single_updates_add_up_to_the_closed_form() {
    let (m, leaves, h) = (vec![12, 9, 10], vec![1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3], 2u32);
    let q = star_query(&leaves, Some(m.len() as u32 + 1));
    let want = as_count(u128::from(h) * per_center(&m, &leaves));
    assert!(want > 0 && want < SATURATED);
    let mut g = stars(2, &m, h);
    let joins = take_joins(&mut g);
    for name in ["cpu", "cpu-nosym", "cpu-whole"] {
        for (threads, order) in [(1, 0), (2, 0), (1, 1), (2, 2)] {
            let mut eng = continuous_engine(name, &opts(threads, order)).unwrap();
            eng.init(&g, &q).unwrap();
            for insert in [true, false] {
                let (mut pos, mut neg) = (0u64, 0u64);
                for e in &joins {
                    let (p, n) = process_joins(eng.as_mut(), std::slice::from_ref(e), insert);
                    (pos, neg) = (pos + p, neg + n);
                }
                let expected = if insert { (want, 0) } else { (0, want) };
                assert_eq!(
                    (pos, neg),
                    expected,
                    "{name}, {threads} threads, order {order}, insert {insert}"
                );
            }
        }
    }
}

/// A batch that parts center 0 from some of its label-1 leaves and joins
/// it to others: the delta plans' label-1 leaves read two lists of the
/// center (the kept leaves and the new list, or the old one), counted as
/// two classes of twins from their sizes and their overlap (an overlap
/// taken as 0 fails this test and the one above). positive = the stars at
/// center 0 after less those on the kept leaves, negative = those before
/// less those on the kept leaves.
#[test]
fn mixed_batches_count_two_overlapping_classes() {
    let (m, leaves, h) = (vec![14, 6, 7], vec![1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3], 2u32);
    let q = star_query(&leaves, Some(m.len() as u32 + 1));
    let g_all = stars(2, &m, h);
    let label1: Vec<Edge> = (g_all.edges.iter())
        .filter(|e| e.u == 0 && g_all.labels[e.v as usize] == 1)
        .copied()
        .collect();
    // center 0 starts with leaves 0..9 of label 1; the batch parts it from
    // 0..3 and joins it to 9..14: kept 3..9
    let (old, new, kept) = (9u32, 11u32, 6u32);
    let stars_with = |k: u32| u128::from(h) * per_center(&[k, m[1], m[2]], &leaves);
    let want = (
        as_count(stars_with(new) - stars_with(kept)),
        as_count(stars_with(old) - stars_with(kept)),
    );
    let mut g = g_all.clone();
    g.edges.retain(|e| !label1[9..].contains(e));
    let batch = located(
        (label1[..3].iter().map(|&e| Update::RemoveEdge(e))).chain(label1[9..].iter().map(|&e| Update::AddEdge(e))),
    );
    for name in ["cpu", "cpu-nosym", "cpu-whole"] {
        for (threads, order) in [(1, 0), (2, 0), (1, 1), (2, 2)] {
            let mut eng = continuous_engine(name, &opts(threads, order)).unwrap();
            eng.init(&g, &q).unwrap();
            let r = eng
                .process(Batch {
                    updates: &batch,
                    source: "mixed",
                    strictness: Strictness::Strict,
                })
                .unwrap();
            assert_eq!(
                (r.positive, r.negative),
                want,
                "{name}, {threads} threads, order {order}"
            );
        }
    }
}

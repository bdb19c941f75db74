//! A model of the kernel's staging-area bookkeeping (`kernels/match.cu`,
//! `stage_level`): a warp copies short host lists of a level into its
//! staging area and records, per read, which vertex's list lies at which
//! offset, so that a later node reading the same list at the same offset
//! skips the copy. Windows of long lists (`block_accept`) are written
//! after the staged part. Nodes of different delta plans share the area
//! of a level index, and their levels have different read counts.
//!
//! The model replays random sequences of nodes and checks the invariant
//! the reuse relies on: a reused copy still holds its list. The kernel's
//! rule before the thirty-fifth session (records of reads past the
//! node's read count left alone) breaks it; the kernel's rule now (those
//! records dropped first) keeps it. The GPU tests check the kernel's
//! counts; this checks the rule, which a rare warp schedule exercises.

use proptest::prelude::*;

const MAXR: usize = 7;
const NONE: u32 = u32::MAX;

/// One read of a node: the vertex whose list it reads, and whether the
/// kernel finds staging it worthwhile.
#[derive(Clone, Debug)]
struct Read {
    v: u32,
    worth: bool,
}

/// A list's words (its length depends on the vertex only, as a host list
/// does not change during a launch).
fn list(v: u32) -> Vec<u32> {
    (0..(v % 13 + 1)).map(|i| v * 1000 + i).collect()
}

/// Replays `nodes` through one level's area of `cap` words; returns
/// whether a reused copy ever differed from its list.
fn stale_reuse(nodes: &[Vec<Read>], cap: usize, drop_other_plans: bool) -> bool {
    let mut area = vec![0u32; cap];
    let mut rec = [(NONE, 0u32, 0u32); MAXR]; // (vertex, offset, words)
    for (n, reads) in nodes.iter().enumerate() {
        let nr = reads.len();
        if drop_other_plans {
            for r in rec.iter_mut().skip(nr) {
                r.0 = NONE;
            }
        }
        let mut used = 0usize;
        for (k, r) in reads.iter().enumerate() {
            let l = list(r.v);
            let words = l.len();
            let reuse = rec[k] == (r.v, used as u32, words as u32);
            if used + words > cap || !(reuse || r.worth) {
                rec[k].0 = NONE;
                continue;
            }
            if reuse {
                if area[used..used + words] != l[..] {
                    return true;
                }
            } else {
                area[used..used + words].copy_from_slice(&l);
            }
            rec[k] = (r.v, used as u32, words as u32);
            used += words;
        }
        // a window of a long list after the staged part
        for (i, w) in area[used..].iter_mut().enumerate() {
            *w = 7_000_000 + (n * 31 + i) as u32;
        }
    }
    false
}

fn nodes() -> impl Strategy<Value = Vec<Vec<Read>>> {
    let read = (0u32..6, any::<bool>()).prop_map(|(v, worth)| Read { v, worth });
    prop::collection::vec(prop::collection::vec(read, 1..=3), 1..40)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
    #[test]
    fn reused_copies_hold_their_lists(nodes in nodes(), cap in 8usize..48) {
        prop_assert!(!stale_reuse(&nodes, cap, true));
    }
}

/// The sequence that breaks the earlier rule: plan P1 stages lists 1 and
/// 2; plan P2, one read at that level, stages a longer list over them;
/// P1 stages list 1 again and takes its record of list 2.
#[test]
fn the_earlier_rule_reuses_an_overwritten_copy() {
    let r = |v| Read { v, worth: true };
    let nodes = vec![vec![r(1), r(2)], vec![r(12)], vec![r(1), r(2)]];
    assert!(stale_reuse(&nodes, 40, false));
    assert!(!stale_reuse(&nodes, 40, true));
}

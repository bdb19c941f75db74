//! SNAP pairs read on the pool ([`super::parallel`]) against the
//! sequential loop: the same graph, report or error for every file, strict
//! and lenient, under every id policy and cut.

use super::{parallel, read_snap_with};
use crate::format::pieces::{Cut, Pool};
use crate::format::ReadOptions;
use crate::gen::Labeller;
use crate::ids::IdPolicy;
use proptest::prelude::*;

/// Lines of every kind the reader meets.
fn line(kind: u8, a: u32, b: u32) -> String {
    match kind % 16 {
        0..=5 => format!("{a}\t{b}"),
        6 => format!("{a} {b}"),
        7 => format!("  {a}  {b} \r"),
        8 => format!("{a} {a}"),
        9 => String::new(),
        10 => "# FromNodeId\tToNodeId".into(),
        11 => format!("{a} {b} 3"),
        12 => format!("{} {b}", 3_000_000_000u32 + a),
        13 => format!("{} {b}", SPARSE + a),
        14 => format!("{a}\u{2003}{b}"),
        _ => format!("{a} x"),
    }
}

/// Ids past [`crate::ids::DENSE_ID_FLOOR`] (the sparse ones).
const SPARSE: u32 = 40_000_000;

fn compare(text: &str) {
    // (renumbering draws labels for every id up to the largest: only
    // without sparse ids, which Keep refuses at the line naming the largest)
    let policies = if text.contains(&SPARSE.to_string()[..5]) {
        &[IdPolicy::Keep][..]
    } else {
        &[IdPolicy::Keep, IdPolicy::CompactIfSparse, IdPolicy::Compact][..]
    };
    for lenient in [false, true] {
        for &ids in policies {
            let opts = ReadOptions {
                lenient,
                ids,
                labeller: Labeller::Uniform { num_labels: 3, seed: 2 },
            };
            let want = read_snap_with(text, "s", &opts, Pool::Never);
            for pieces in [1, 2, 3, 7] {
                let got = read_snap_with(text, "s", &opts, Pool::Always(Cut { pieces }));
                assert_eq!(got, want, "lenient {lenient}, {ids:?}, {pieces} pieces, file:\n{text}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn pool_reads_as_the_loop(
        lines in prop::collection::vec((0u8..16, 0u32..20, 0u32..20), 0..40),
        usual in any::<bool>(),
        crlf in any::<bool>(),
        bom in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        // half the files have only the usual lines, so that the pool reads them
        let lines: Vec<String> = lines
            .iter()
            .map(|&(k, a, b)| line(if usual { k % 11 } else { k }, a, b))
            .filter(|l| !usual || !l.ends_with(" 3"))
            .collect();
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut text = if bom { "\u{feff}".to_string() } else { String::new() };
        text += &lines.join(eol);
        if final_newline {
            text += eol;
        }
        compare(&text);
    }
}

#[test]
fn a_usual_file_is_read_on_the_pool() {
    let text: String = (0..3000u32).map(|i| format!("{}\t{}\n", i % 97, i * 7 % 101)).collect();
    let text = format!("# Directed graph\n{text}5 5\n");
    compare(&text);
    let p = parallel::pairs(&text, Cut { pieces: 4 }).expect("every line is usual");
    assert_eq!(
        p.loop_ids.len(),
        1 + (0..3000u32).filter(|i| i % 97 == i * 7 % 101).count()
    );
    assert_eq!(p.max_id.map(|m| m.0), Some(100));
}

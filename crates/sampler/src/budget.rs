//! How many walks to draw (`M`).
//!
//! * [`paper_walks`]: the fixed rule of GCSM's experiments (Sec. VI-A),
//!   `M = |ΔE| · D^(n-2) / 32^n`, at least 1.
//! * [`eq5_walks`]: the confidence bound of Eq. (5),
//!   `M ≥ (n-1)(2+α) R D^(n-2) / (α² (1-δ) C_y)`, which by Theorem 1 makes
//!   the probability of ranking `y` before `x` (with `C_x = (1+α) C_y`) at
//!   most `1-δ` ([`misrank_bound`] is Eq. (4)). `R`, the number of roots,
//!   plays `|ΔE|`.
//! * [`estimate_with_confidence`]: the refinement described after Eq. (5):
//!   draw a small `M`, set `C_y` to the smallest estimated frequency among the
//!   vertices that would be cached, recompute `M` from Eq. (5), draw the
//!   missing walks (pooled with the earlier ones), and repeat until `M`
//!   suffices or a cap is reached.
//!
//! Note on `C_y`: when every sampled vertex would be cached (a large byte
//! budget), the smallest estimate is that of a vertex seen by a single walk,
//! about `R / M`, and Eq. (5) then asks for more walks than it has whatever
//! `M` is. [`Confidence::focus`] therefore restricts the vertices whose
//! ranking must be confident to the top fraction of the sampled ones (default
//! 5%, the hot set of GCSM Fig. 15); `focus = 1` is the literal reading.

use csm_graph::GraphView;
use serde::Serialize;

use crate::tree::ExecutionTree;
use crate::walk::{Estimate, WalkOptions};

/// The walk-count rule.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum WalkRule {
    /// Exactly this many walks.
    Fixed(u64),
    /// [`paper_walks`].
    #[default]
    Paper,
    /// [`estimate_with_confidence`].
    Confidence(Confidence),
}

/// Parameters of the Eq. (5) refinement.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Confidence {
    /// Relative frequency gap to resolve (`C_x = (1+α) C_y`), > 0.
    pub alpha: f64,
    /// Confidence: misranking probability at most `1 - δ`, in (0, 1).
    pub delta: f64,
    /// Walks of the first round.
    pub initial: u64,
    /// Never draw more than this many walks in total.
    pub max_walks: u64,
    /// Fraction of the sampled vertices (highest estimates first) whose
    /// ranking Eq. (5) must secure, within those the byte budget caches.
    pub focus: f64,
    /// Never run more than this many rounds.
    pub max_rounds: usize,
}

impl Default for Confidence {
    fn default() -> Self {
        Confidence {
            alpha: 0.5,
            delta: 0.9,
            initial: 1024,
            max_walks: 1 << 26,
            focus: 0.05,
            max_rounds: 8,
        }
    }
}

impl Confidence {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(format!("alpha must be > 0, got {}", self.alpha));
        }
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return Err(format!("delta must be in (0, 1), got {}", self.delta));
        }
        if !(self.focus > 0.0 && self.focus <= 1.0) {
            return Err(format!("focus must be in (0, 1], got {}", self.focus));
        }
        if self.initial == 0 || self.max_walks == 0 || self.max_rounds == 0 {
            return Err("initial walks, max walks and max rounds must be at least 1".into());
        }
        Ok(())
    }
}

fn to_walks(x: f64) -> u64 {
    if x.is_nan() || x >= u64::MAX as f64 {
        u64::MAX
    } else {
        (x.ceil() as u64).max(1)
    }
}

/// GCSM Sec. VI-A: `M = |ΔE| · D^(n-2) / 32^n`, at least 1
/// (`batch_edges` = `|ΔE|`, the batch's net inserted plus deleted edges).
pub fn paper_walks(batch_edges: usize, max_degree: usize, query_size: usize) -> u64 {
    let n = query_size as i32;
    let m = batch_edges as f64 * (max_degree.max(1) as f64).powi(n - 2) / 32f64.powi(n);
    if m < 1.0 {
        1
    } else {
        to_walks(m.floor())
    }
}

/// Eq. (5): the fewest walks for misranking probability `≤ 1 - δ` at gap
/// `α` and boundary frequency `c_y` (`u64::MAX` when `c_y ≤ 0`).
pub fn eq5_walks(query_size: usize, alpha: f64, delta: f64, roots: usize, max_degree: usize, c_y: f64) -> u64 {
    if c_y <= 0.0 {
        return u64::MAX;
    }
    let n = query_size.max(2) as i32;
    let m = (n - 1) as f64 * (2.0 + alpha) * roots as f64 * (max_degree.max(1) as f64).powi(n - 2)
        / (alpha * alpha * (1.0 - delta) * c_y);
    to_walks(m)
}

/// Eq. (4): the bound on `Pr[C̃_x < C̃_y]` after `walks` walks.
pub fn misrank_bound(query_size: usize, alpha: f64, roots: usize, max_degree: usize, walks: u64, c_y: f64) -> f64 {
    let n = query_size.max(2) as i32;
    (n - 1) as f64 * (2.0 + alpha) * roots as f64 * (max_degree.max(1) as f64).powi(n - 2)
        / (alpha * alpha * walks as f64 * c_y)
}

/// What the refinement did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Refinement {
    pub rounds: usize,
    /// Walks drawn in total.
    pub walks: u64,
    /// Eq. (5) at the final `C_y`.
    pub required: u64,
    /// The final `C_y` (0 when nothing was sampled).
    pub c_y: f64,
    /// Stopped at `max_walks` or `max_rounds` before `walks ≥ required`.
    pub capped: bool,
}

/// The seed of refinement round `k` (round 0 uses `seed` itself).
pub fn round_seed(seed: u64, k: usize) -> u64 {
    seed ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The refinement loop (see the module docs). `boundary` returns `C_y` for
/// the current estimate: the smallest estimated frequency among the vertices
/// that would be cached (None when nothing was sampled).
pub fn estimate_with_confidence<G: GraphView + ?Sized>(
    tree: &ExecutionTree<'_, G>,
    conf: &Confidence,
    opts: WalkOptions,
    seed: u64,
    boundary: impl Fn(&Estimate) -> Option<f64>,
) -> (Estimate, Refinement) {
    let n = tree.query_size();
    let (r, d) = (tree.num_roots(), tree.max_degree);
    let first = conf.initial.min(conf.max_walks);
    let mut est = opts.run(tree, first, seed);
    let mut out = Refinement {
        rounds: 1,
        walks: first,
        ..Refinement::default()
    };
    if r == 0 || tree.reads_per_path() == 0 {
        return (est, out);
    }
    loop {
        let c_y = boundary(&est).unwrap_or(0.0);
        let required = if c_y > 0.0 {
            eq5_walks(n, conf.alpha, conf.delta, r, d, c_y)
        } else {
            est.walks.saturating_mul(2)
        };
        out.c_y = c_y;
        out.required = required;
        out.walks = est.walks;
        if est.walks >= required {
            break;
        }
        if est.walks >= conf.max_walks || out.rounds >= conf.max_rounds {
            out.capped = true;
            break;
        }
        let target = required.min(conf.max_walks).max(est.walks + 1);
        est.merge(opts.run(tree, target - est.walks, round_seed(seed, out.rounds)));
        out.rounds += 1;
    }
    (est, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_rule() {
        // 4096 · 1000^3 / 32^5 = 4096e9 / 33554432 ≈ 122070
        assert_eq!(paper_walks(4096, 1000, 5), 122_070);
        assert_eq!(paper_walks(10, 10, 7), 1);
        assert_eq!(paper_walks(0, 10, 3), 1);
    }

    #[test]
    fn eq5_and_eq4_agree() {
        let m = eq5_walks(5, 0.5, 0.9, 100, 20, 300.0);
        // (4)·(2.5)·100·8000 / (0.25·0.1·300) = 8e6 / 7.5 = 1,066,666.67
        assert_eq!(m, 1_066_667);
        let b = misrank_bound(5, 0.5, 100, 20, m, 300.0);
        assert!(b <= 0.1 + 1e-9 && b > 0.0999, "{b}");
        assert_eq!(eq5_walks(5, 0.5, 0.9, 100, 20, 0.0), u64::MAX);
    }

    #[test]
    fn validation() {
        assert!(Confidence::default().validate().is_ok());
        assert!(Confidence {
            delta: 1.0,
            ..Confidence::default()
        }
        .validate()
        .is_err());
        assert!(Confidence {
            alpha: 0.0,
            ..Confidence::default()
        }
        .validate()
        .is_err());
    }
}

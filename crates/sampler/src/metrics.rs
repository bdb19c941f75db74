//! How good a cache is for one batch, judged against the exact access
//! counts (GCSM Sec. VI-D, Fig. 15).
//!
//! * Percentages are of the *accessed* vertices (exact count > 0): the top
//!   `p` set `S` holds the `⌈p · |accessed|⌉` vertices with the highest exact
//!   counts, ties broken by ascending id.
//! * coverage(p) = `|S ∩ T| / |S|` with `T` the cached set (Fig. 15b).
//! * access share(p) = accesses made to `S` / all accesses (Fig. 15a).
//! * hit rate = accesses served by the cache / all accesses.
//! * FE fraction = frequency-estimation (selection) time / exact incremental
//!   matching time (Table II reports FE against GCSM's total time; here the
//!   denominator is the CPU matcher's time).

use csm_graph::VertexId;
use serde::Serialize;

use crate::freq::{Freq, IdMap};

/// The top `p` of the accessed vertices by exact count (see the module docs).
pub fn top_set(exact: &Freq, p: f64) -> Vec<VertexId> {
    let ranked = exact.ranked();
    let k = top_len(ranked.len(), p);
    ranked.into_iter().take(k).map(|x| x.0).collect()
}

fn top_len(accessed: usize, p: f64) -> usize {
    if accessed == 0 {
        0
    } else {
        ((p * accessed as f64).ceil() as usize).clamp(1, accessed)
    }
}

/// `|S ∩ T| / |S|` for the top-`p` set `S` (1 when nothing was accessed).
pub fn coverage(exact: &Freq, cached: &[VertexId], p: f64) -> f64 {
    let s = top_set(exact, p);
    if s.is_empty() {
        return 1.0;
    }
    let t: IdMap<()> = cached.iter().map(|&v| (v, ())).collect();
    s.iter().filter(|v| t.contains_key(v)).count() as f64 / s.len() as f64
}

/// Share of all accesses made to the top-`p` vertices (0 when none).
pub fn top_access_share(exact: &Freq, p: f64) -> f64 {
    let ranked = exact.ranked();
    let total: f64 = ranked.iter().map(|x| x.1).sum();
    if total == 0.0 {
        return 0.0;
    }
    ranked.iter().take(top_len(ranked.len(), p)).map(|x| x.1).sum::<f64>() / total
}

/// Share of all accesses whose list is cached (0 when none).
pub fn hit_rate(exact: &Freq, cached: &[VertexId]) -> f64 {
    let total = exact.total();
    if total == 0.0 {
        return 0.0;
    }
    let mut c = cached.to_vec();
    c.sort_unstable();
    c.dedup();
    c.iter().fold(0.0, |a, &v| a + exact.get(v)) / total
}

/// `estimate_seconds / exact_seconds` (0 when no exact time was measured).
pub fn fe_fraction(estimate_seconds: f64, exact_seconds: f64) -> f64 {
    if exact_seconds > 0.0 && exact_seconds.is_finite() {
        estimate_seconds / exact_seconds
    } else {
        0.0
    }
}

/// The per-batch cache metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CacheMetrics {
    /// Vertices with an exact count > 0.
    pub accessed_vertices: usize,
    /// Σ exact counts (list reads).
    pub total_accesses: f64,
    pub coverage_top1: f64,
    pub coverage_top5: f64,
    pub top1_access_share: f64,
    pub top5_access_share: f64,
    pub hit_rate: f64,
}

/// All of [`CacheMetrics`] in one pass over the ranking.
pub fn cache_metrics(exact: &Freq, cached: &[VertexId]) -> CacheMetrics {
    let ranked = exact.ranked();
    let n = ranked.len();
    let total: f64 = ranked.iter().map(|x| x.1).sum();
    let t: IdMap<()> = cached.iter().map(|&v| (v, ())).collect();
    let cov = |p: f64| {
        let k = top_len(n, p);
        if k == 0 {
            1.0
        } else {
            ranked[..k].iter().filter(|x| t.contains_key(&x.0)).count() as f64 / k as f64
        }
    };
    let share = |p: f64| {
        if total == 0.0 {
            0.0
        } else {
            ranked[..top_len(n, p)].iter().fold(0.0, |a, x| a + x.1) / total
        }
    };
    let hits = t.keys().fold(0.0, |a, &v| a + exact.get(v));
    CacheMetrics {
        accessed_vertices: n,
        total_accesses: total,
        coverage_top1: cov(0.01),
        coverage_top5: cov(0.05),
        top1_access_share: share(0.01),
        top5_access_share: share(0.05),
        hit_rate: if total == 0.0 { 0.0 } else { hits / total },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_example() {
        // 200 accessed vertices: v has count 1000 - v
        let mut f = Freq::dense(300);
        for v in 0..200 {
            f.add(v, 1000.0 - v as f64);
        }
        assert_eq!(top_set(&f, 0.01), vec![0, 1]);
        assert_eq!(top_set(&f, 0.05).len(), 10);
        let cached = [0, 5, 250];
        assert_eq!(coverage(&f, &cached, 0.01), 0.5);
        assert_eq!(coverage(&f, &cached, 0.05), 0.2);
        let m = cache_metrics(&f, &cached);
        assert_eq!(m.coverage_top1, 0.5);
        assert_eq!(m.coverage_top5, 0.2);
        assert_eq!(m.accessed_vertices, 200);
        let total: f64 = (0..200).map(|v| 1000.0 - v as f64).sum();
        assert!((m.hit_rate - 1995.0 / total).abs() < 1e-12);
        assert!((hit_rate(&f, &cached) - m.hit_rate).abs() < 1e-12);
        assert!((m.top5_access_share - top_access_share(&f, 0.05)).abs() < 1e-12);
        assert_eq!(fe_fraction(1.0, 0.0), 0.0);
        assert_eq!(cache_metrics(&Freq::sparse(), &[]).coverage_top1, 1.0);
    }
}

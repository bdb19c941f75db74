//! [`Quota`]: a cap on how many matches a count looks for, shared by the
//! threads of one run, so that a count of a query with astronomically many
//! embeddings (a 16-vertex path in a social graph) can stop once it has
//! seen enough, as the `-num` option of the SubgraphMatching study's and
//! RapidFlow's tools does.
//!
//! Each [`crate::Executor`] adds what its terminal nodes count (a last
//! level's candidate-set size, a tail's product) to a local tally and
//! flushes the tally into the shared total every [`FLUSH_NODES`] nodes
//! visited (matching or not: a thread deep in a fruitless subtree must
//! still learn that the others have found enough) or [`FLUSH_MATCHES`]
//! matches; once the total reaches the limit every executor of the run
//! stops descending. Counts returned after the stop are
//! partial but never below the limit, so a caller reports
//! `min(count, limit)`: the exact count when it is under the limit, and the
//! limit otherwise, whatever the threads' timing.
//!
//! A quota may also carry a deadline ([`Quota::until`]): the executors then
//! stop at their first flush after it as well, and the caller, seeing
//! [`Quota::expired`] with the limit not reached, must drop the partial
//! count (an engine that races two orders for the first embeddings tries
//! each for a time slice and starts again with a longer one).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Nodes an executor visits between flushes of its tally.
pub const FLUSH_NODES: u32 = 256;

/// Matches an executor tallies before flushing regardless of nodes.
pub const FLUSH_MATCHES: u64 = 1 << 16;

/// The shared side of a capped count; see the module docs.
#[derive(Debug)]
pub struct Quota {
    limit: u64,
    found: AtomicU64,
    deadline: Option<Instant>,
    /// Set once an executor saw the deadline pass.
    expired: AtomicBool,
}

impl Quota {
    /// A quota of `limit` matches (as the executor counts them: a caller
    /// that scales counts, e.g. by automorphisms, divides the limit first,
    /// rounding up).
    pub fn new(limit: u64) -> Quota {
        Quota {
            limit,
            found: AtomicU64::new(0),
            deadline: None,
            expired: AtomicBool::new(false),
        }
    }

    /// This quota, stopping its executors also at `deadline` (see the
    /// module docs): a count cut by it is partial and below the limit.
    pub fn until(self, deadline: Instant) -> Quota {
        Quota {
            deadline: Some(deadline),
            ..self
        }
    }

    /// Whether the deadline stopped (or would now stop) the executors.
    /// After a run, `expired() && !reached()` means its count is partial.
    pub fn expired(&self) -> bool {
        if self.expired.load(Ordering::Relaxed) {
            return true;
        }
        let past = self.deadline.is_some_and(|d| Instant::now() >= d);
        if past {
            self.expired.store(true, Ordering::Relaxed);
        }
        past
    }

    /// Whether executors must stop: the limit is reached or the deadline
    /// passed.
    #[inline]
    pub fn stops(&self) -> bool {
        self.reached() || self.expired()
    }

    /// The limit this quota was made with.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Matches flushed so far by all executors (at least the limit once
    /// [`Quota::reached`]).
    pub fn found(&self) -> u64 {
        self.found.load(Ordering::Relaxed)
    }

    /// Whether the flushed matches reach the limit.
    #[inline]
    pub fn reached(&self) -> bool {
        self.found() >= self.limit
    }

    /// Adds `n` flushed matches; returns whether the limit is now reached.
    #[inline]
    pub fn add(&self, n: u64) -> bool {
        let before = self.found.fetch_add(n, Ordering::Relaxed);
        before.saturating_add(n) >= self.limit
    }
}

/// An executor's private side of a quota: its unflushed tally.
#[derive(Debug, Default, Clone)]
pub(crate) struct Tally {
    quota: Option<std::sync::Arc<Quota>>,
    pending: u64,
    nodes: u32,
    /// Set once the shared total reached the limit: stop descending.
    pub(crate) stop: bool,
}

impl Tally {
    /// Starts counting against `quota` (none: no cap); `stop` is set at
    /// once when the quota is already reached.
    pub(crate) fn set(&mut self, quota: Option<std::sync::Arc<Quota>>) {
        self.flush();
        self.stop = quota.as_ref().is_some_and(|q| q.stops());
        self.quota = quota;
    }

    /// Whether counts run against a quota (then every match must pass
    /// through [`Tally::note`] as it is counted).
    #[inline]
    pub(crate) fn capped(&self) -> bool {
        self.quota.is_some()
    }

    /// Notes `n` matches counted at one terminal node.
    #[inline]
    pub(crate) fn note(&mut self, n: u64) {
        self.pending = self.pending.saturating_add(n);
        if self.pending >= FLUSH_MATCHES {
            self.flush();
        }
    }

    /// Notes one node visited; returns whether to stop (flushing every
    /// [`FLUSH_NODES`] nodes).
    #[inline]
    pub(crate) fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes >= FLUSH_NODES {
            self.flush();
        }
        self.stop
    }

    /// Adds the unflushed tally to the shared total and looks whether the
    /// limit is reached (by this executor or another).
    pub(crate) fn flush(&mut self) {
        self.nodes = 0;
        let Some(q) = &self.quota else {
            self.pending = 0;
            return;
        };
        let reached = if self.pending > 0 {
            q.add(self.pending)
        } else {
            q.reached()
        };
        self.stop |= reached || q.expired();
        self.pending = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_tally_stops_once_the_shared_total_reaches_the_limit() {
        let q = Arc::new(Quota::new(100));
        let mut a = Tally::default();
        let mut b = Tally::default();
        a.set(Some(q.clone()));
        b.set(Some(q.clone()));
        a.note(60);
        a.flush();
        assert!(!a.stop);
        b.note(40);
        assert!(!b.stop, "nothing flushed yet");
        b.flush();
        assert!(b.stop);
        assert_eq!(q.found(), 100);
        // a learns of the stop at its next flush, even with nothing to add
        a.flush();
        assert!(a.stop);
        // a fresh start on a reached quota stops at once
        let mut c = Tally::default();
        c.set(Some(q));
        assert!(c.stop);
    }

    #[test]
    fn a_deadline_stops_tallies_without_reaching_the_limit() {
        let past = Arc::new(Quota::new(100).until(Instant::now()));
        let mut a = Tally::default();
        a.set(Some(past.clone()));
        assert!(a.stop, "a passed deadline stops at once");
        assert!(past.expired() && !past.reached());
        let later = Arc::new(Quota::new(100).until(Instant::now() + std::time::Duration::from_secs(3600)));
        let mut b = Tally::default();
        b.set(Some(later.clone()));
        for _ in 0..FLUSH_NODES {
            assert!(!b.tick());
        }
        b.note(100);
        b.flush();
        assert!(b.stop && later.reached() && !later.expired());
    }

    #[test]
    fn a_large_count_flushes_at_once_and_no_quota_never_stops() {
        let q = Arc::new(Quota::new(10));
        let mut a = Tally::default();
        a.set(Some(q.clone()));
        a.note(FLUSH_MATCHES);
        assert!(a.stop);
        let mut free = Tally::default();
        free.note(u64::MAX);
        free.flush();
        assert!(!free.stop);
        assert!(!(0..10 * FLUSH_NODES).any(|_| free.tick()));
    }

    #[test]
    fn ticks_alone_learn_of_a_stop() {
        let q = Arc::new(Quota::new(5));
        let mut idle = Tally::default();
        idle.set(Some(q.clone()));
        assert!(q.add(5));
        let ticks = (1..=FLUSH_NODES).find(|_| idle.tick());
        assert_eq!(ticks, Some(FLUSH_NODES));
    }
}

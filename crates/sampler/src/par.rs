//! Per-thread accumulators for the rayon versions of the exact counter and
//! the merged walk: one slot per worker of the current pool, each only ever
//! touched by its own thread, merged by the caller at the end.

use std::sync::Mutex;

/// One slot per thread of the current rayon pool.
pub fn per_thread<T>(make: impl Fn() -> T) -> Vec<Mutex<T>> {
    (0..rayon::current_num_threads()).map(|_| Mutex::new(make())).collect()
}

/// Runs `f` on the calling worker thread's slot. Each slot is only ever
/// locked by its own thread (the work inside `f` is sequential), so the lock
/// is uncontended; off-pool callers share the last slot.
pub fn with_own<T, R>(slots: &[Mutex<T>], f: impl FnOnce(&mut T) -> R) -> R {
    let i = rayon::current_thread_index()
        .unwrap_or(slots.len() - 1)
        .min(slots.len() - 1);
    let mut g = slots[i].lock().unwrap_or_else(|e| e.into_inner());
    f(&mut g)
}

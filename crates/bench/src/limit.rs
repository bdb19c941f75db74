//! `--time-limit`: ends a `match` or `stream` run that takes too long and
//! still reports what it has, as query suites expect (RapidFlow and the
//! continuous-matching study give each query a time limit and count the
//! unsolved ones).
//!
//! A stream stops between batches once the limit has passed; one update
//! at a time, the engine itself starts no update after it
//! (`ContinuousMatcher::process_each_until`), so every update that
//! finished in time is reported. A batch (or a static count) still running
//! at the limit cannot be interrupted, so a watchdog thread reports
//! instead, a short grace after the limit ([`watchdog_deadline`]), and
//! ends the process with status 0. The main thread and the watchdog print
//! under one lock, so no line is cut or printed twice.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

/// Checks a `--time-limit` value (seconds, positive and finite).
pub fn parse_limit(s: &str) -> Result<f64, String> {
    let x: f64 = s.parse().map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if x > 0.0 && x.is_finite() {
        Ok(x)
    } else {
        Err(format!("the time limit must be positive, not {s}"))
    }
}

/// The instant a limit of `seconds` from now ends, if there is one.
pub fn deadline(seconds: Option<f64>) -> Result<Option<Instant>> {
    match seconds {
        None => Ok(None),
        Some(s) => match Instant::now().checked_add(Duration::from_secs_f64(s)) {
            Some(t) => Ok(Some(t)),
            None => bail!("time limit {s} s is too far away"),
        },
    }
}

/// When a stream's watchdog fires for a limit of `seconds` ending at
/// `deadline`: a twentieth of the limit later (0.1 to 5 s), so that an
/// update or batch that ends just after the limit is reported by the run
/// itself rather than cut off with the others of its run.
pub fn watchdog_deadline(deadline: Option<Instant>, seconds: f64) -> Option<Instant> {
    let grace = Duration::from_secs_f64((seconds / 20.0).clamp(0.1, 5.0));
    deadline.map(|d| d + grace)
}

struct Shared<T> {
    state: T,
    done: bool,
}

/// State that the run and its watchdog share; see the module docs.
pub struct Watchdog<T> {
    shared: Arc<Mutex<Shared<T>>>,
}

impl<T: Send + 'static> Watchdog<T> {
    /// Starts a watchdog that, at `deadline` (none: never), calls `fire`
    /// with the state unless [`Watchdog::finish`] came first, then exits.
    pub fn start(deadline: Option<Instant>, state: T, fire: impl FnOnce(&T) + Send + 'static) -> Self {
        Self::arm(deadline, state, fire, true)
    }

    fn arm(deadline: Option<Instant>, state: T, fire: impl FnOnce(&T) + Send + 'static, exit: bool) -> Self {
        let shared = Arc::new(Mutex::new(Shared { state, done: false }));
        if let Some(at) = deadline {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                std::thread::sleep(at.saturating_duration_since(Instant::now()));
                let s = lock(&shared);
                if !s.done {
                    fire(&s.state);
                    if exit {
                        std::process::exit(0);
                    }
                }
            });
        }
        Watchdog { shared }
    }

    /// Changes the state (and prints, if `f` prints) under the lock.
    pub fn update<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut lock(&self.shared).state)
    }

    /// Disarms the watchdog; the caller reports from here on.
    pub fn finish(&self) {
        lock(&self.shared).done = true;
    }
}

fn lock<T>(m: &Mutex<Shared<T>>) -> MutexGuard<'_, Shared<T>> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_must_be_positive_numbers() {
        assert_eq!(parse_limit("2.5"), Ok(2.5));
        for bad in ["0", "-1", "inf", "NaN", "soon"] {
            assert!(parse_limit(bad).is_err(), "{bad}");
        }
    }

    use std::sync::atomic::{AtomicBool, Ordering};

    fn fired_after(finish: bool) -> bool {
        let fired = Arc::new(AtomicBool::new(false));
        let f = Arc::clone(&fired);
        let w = Watchdog::arm(
            deadline(Some(0.05)).unwrap(),
            0u32,
            move |_| f.store(true, Ordering::SeqCst),
            false,
        );
        w.update(|n| *n += 1);
        if finish {
            w.finish();
        }
        std::thread::sleep(Duration::from_millis(300));
        fired.load(Ordering::SeqCst)
    }

    #[test]
    fn the_watchdog_fires_unless_the_run_finished() {
        assert!(fired_after(false));
        assert!(!fired_after(true));
    }
}

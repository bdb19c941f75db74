//! Host work of a batch run beside other host work (match v20).
//!
//! A `gcsm-persist` batch's resident refresh (or mask) and its seeds and
//! task split are independent host steps that both come before the kernel:
//! the refresh reads the staged graph and writes the resident cache, the
//! seeds and the split read the staged graph and the plans. Run one after
//! the other (match v7-v19), a 8,192-update batch paid both in full: a
//! refresh of 0.6-1.0 ms of bookkeeping and 0.6-0.8 ms of seeds and split
//! on the H200's host. [`beside`] runs the first on a helper thread while
//! the calling thread does the second, and reports how long the calling
//! thread then waited: the part of the side job the batch still pays.
//! Smaller batches keep their callers' in-turn path.
//!
//! Thirty-eighth session: the refresh is independent of the host mirror's
//! sync too, which every batch pays (0.07-4 ms on the H200's host), so
//! `GpuEngine` now runs it beside the sync, from the first update, and
//! [`wake_helper`] wakes the helper when the batch's staging starts (a
//! parked helper took up to 0.4 ms to wake). The placement beside the
//! seeds and split above is kept for `with_refresh_beside_sync(false)`.
//!
//! The side job runs on one helper thread kept for the process (a rayon
//! pool of one thread, parked between batches; jobs of several engines
//! queue there). Waking it costs microseconds, so callers overlap only
//! from [`OVERLAP_FROM`] updates (the global pool took about 0.1 ms to
//! wake on that host: match v18, run 3).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Batches of at least this many updates run their resident refresh or
/// mask beside their seeds and split; smaller ones run them in turn. On
/// the H200's host (match v20, runs 1-2; 500 M-edge bench, medians) the
/// overlap was slower at 1,024 updates (1.41x `zp` against 1.54x in turn:
/// the refresh there is about 0.14 ms, little more than the thread's own
/// cost) and quicker at 2,048 (1.64x against 1.58x), 4,096 (1.81x against
/// 1.74x) and 8,192 (2.08x against 1.84-1.92x).
pub const OVERLAP_FROM: usize = 2048;

/// What [`beside`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Overlap {
    /// Host time of the main job (on the calling thread).
    pub main_seconds: f64,
    /// Host time of the side job (on the helper thread).
    pub side_seconds: f64,
    /// Time the calling thread waited for the side job after its own work.
    pub wait_seconds: f64,
}

impl Overlap {
    /// What the caller is charged for a side job that queued `dev` seconds
    /// of device work as it finished (a resident refresh beside the host
    /// mirror's sync): the wait after its own job, plus the device work
    /// that outlasts the time the side job finished before the main one
    /// did (the kernel queued after it waits only for that part).
    pub fn charge_with_device(&self, dev: f64) -> f64 {
        let slack = (self.main_seconds - self.side_seconds).max(0.0);
        self.wait_seconds + (dev - slack).max(0.0)
    }
}

/// Runs `side` on the helper thread while `main` runs on the calling
/// thread, and returns both results. A panic in `side` is resumed on the
/// calling thread.
pub fn beside<A, B>(main: impl FnOnce() -> A, side: impl FnOnce() -> B + Send) -> (A, B, Overlap)
where
    B: Send,
{
    // One helper thread kept for the process (rayon's, parked between
    // batches): a scoped thread per batch paid its start and its end, and
    // lost at 1,024 updates (match v20, run 5).
    // (a helper kept awake by `wake_helper` takes this job at once)
    HANDED.store(true, Ordering::Release);
    let mut out = None;
    let (a, main_seconds, waiting) = helper().in_place_scope(|s| {
        s.spawn(|_| {
            let t = Instant::now();
            let b = side();
            out = Some((b, t.elapsed().as_secs_f64()));
        });
        let t = Instant::now();
        let a = main();
        (a, t.elapsed().as_secs_f64(), Instant::now())
    });
    let wait_seconds = waiting.elapsed().as_secs_f64();
    let (b, side_seconds) = out.expect("the scope waits for its job");
    (
        a,
        b,
        Overlap {
            main_seconds,
            side_seconds,
            wait_seconds,
        },
    )
}

/// Set by [`beside`] when it hands the helper a job: ends [`wake_helper`]'s
/// spin.
static HANDED: AtomicBool = AtomicBool::new(false);

/// Keeps the helper thread of [`beside`] awake (spinning) until the next
/// [`beside`] hands it a job, or for at most `at_most`. A parked helper
/// took up to 0.2-0.4 ms to wake on the H200's host (thirty-eighth
/// session), several times a 64-update batch's resident refresh: a caller
/// that knows a [`beside`] is coming (a batch about to be staged) wakes
/// it first. Costs one core for that time.
pub fn wake_helper(at_most: Duration) {
    HANDED.store(false, Ordering::Release);
    helper().spawn(move || {
        let t = Instant::now();
        while !HANDED.load(Ordering::Acquire) && t.elapsed() < at_most {
            std::hint::spin_loop();
        }
    });
}

/// How long [`wake_helper`]'s callers keep the helper awake at most: about
/// a 1,024-update batch's staging on the H200's host; larger batches' syncs
/// hide the wake.
pub const WAKE_AT_MOST: Duration = Duration::from_millis(1);

/// The helper thread of [`beside`]: a rayon pool of one thread, apart from
/// the global pool (whose 16 workers took about 0.1 ms to wake on the
/// H200's host, match v18 run 3).
fn helper() -> &'static rayon::ThreadPool {
    static HELPER: OnceLock<rayon::ThreadPool> = OnceLock::new();
    HELPER.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .thread_name(|_| "csm-gpu-beside".into())
            .build()
            .expect("a one-thread pool")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn both_jobs_run_and_return_their_results() {
        let mut log = Vec::new();
        let side_ran = AtomicUsize::new(0);
        let (a, b, _) = beside(
            || {
                log.push("main");
                7
            },
            || {
                side_ran.fetch_add(1, Ordering::SeqCst);
                "side"
            },
        );
        assert_eq!((a, b), (7, "side"));
        assert_eq!(log, ["main"]);
        assert_eq!(side_ran.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn the_side_job_runs_while_the_main_one_does() {
        // The side job waits for a message the main job sends: beside each
        // other it gets it; run in turn (side first) it would time out.
        let (tx, rx) = mpsc::channel::<u32>();
        let (_, got, o) = beside(
            move || tx.send(42).expect("side job listening"),
            move || rx.recv_timeout(Duration::from_secs(20)),
        );
        assert_eq!(got, Ok(42));
        assert!(o.main_seconds >= 0.0 && o.side_seconds >= 0.0, "{o:?}");
    }

    #[test]
    fn a_side_job_is_charged_what_outlasts_the_main_one() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        let ov = |main_seconds, side_seconds, wait_seconds| Overlap {
            main_seconds,
            side_seconds,
            wait_seconds,
        };
        // done 0.5 ms before the main job, its 0.02 ms of device work long over
        assert!(close(ov(1e-3, 0.5e-3, 0.0).charge_with_device(0.02e-3), 0.0));
        // waited for 0.1 ms, then 0.03 ms of device work ahead of the kernel
        assert!(close(ov(1e-3, 1.1e-3, 0.1e-3).charge_with_device(0.03e-3), 0.13e-3));
        // done 0.01 ms before the main job: 0.02 of its 0.03 ms still to run
        assert!(close(ov(1e-3, 0.99e-3, 0.0).charge_with_device(0.03e-3), 0.02e-3));
    }

    #[test]
    fn a_woken_helper_still_runs_the_next_side_job() {
        // woken for longer than the test should take: the side job ends
        // the spin
        wake_helper(Duration::from_secs(30));
        let t = Instant::now();
        let (_, b, _) = beside(|| (), || 5);
        assert_eq!(b, 5);
        assert!(t.elapsed() < Duration::from_secs(20), "the spin was not ended");
    }

    #[test]
    #[should_panic(expected = "side job failed")]
    fn a_panic_in_the_side_job_reaches_the_caller() {
        let _ = beside(|| 1, || -> u32 { panic!("side job failed") });
    }
}

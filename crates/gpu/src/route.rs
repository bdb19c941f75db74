//! Light batches on the CPU (opt-in: [`crate::GpuEngine::with_light_on_cpu`]).
//!
//! A GPU batch pays a floor of host work and launches: the task split, the
//! uploads, one to three launches and their waits, the mirror's sync. On
//! the H200 that floor is 0.1-0.3 ms (docs/GPU_NOTES.md, "The first GPU
//! engine of a row"), while the CPU engine counts a 64-update 7-wheel batch
//! in about 0.14 ms and a single update in microseconds. GCSM offloads every
//! batch (Sec. V); a stream of small batches is better served by counting
//! the light ones on the host, over the same staged graph
//! (`csm_baselines::cpu::count_delta_parallel`, exact like the kernel).
//!
//! [`LightRoute`] learns, per size class of batch (the power of two of its
//! update count), the matching time of batches run on each side, and sends a
//! batch to the CPU only when its class's GPU time is predicted under
//! [`LightRoute::light_below`] and the CPU's is predicted lower. A class
//! whose CPU time is unknown tries the CPU once (only light classes, so the
//! probe costs at most a few milliseconds), and every
//! [`LightRoute::reprobe`]-th batch of a class takes the other side, so
//! that both estimates follow the stream.

use crate::plan::{BySizeClass, UnitTime};

/// Where a batch is matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    Gpu,
    Cpu,
}

/// One size class of [`LightRoute`].
#[derive(Clone, Debug, Default, PartialEq)]
struct RouteClass {
    /// Matching seconds per update on each side.
    gpu: UnitTime,
    cpu: UnitTime,
    batches: u64,
}

/// Chooses, per batch, between the GPU and a CPU count (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct LightRoute {
    /// Only classes whose GPU matching is predicted under this many seconds
    /// may go to the CPU.
    pub light_below: f64,
    /// Every this many batches of a class, the side not preferred runs
    /// once ([`LightRoute::REPROBE`]; 0: never).
    pub reprobe: u64,
    classes: BySizeClass<RouteClass>,
}

impl Default for LightRoute {
    fn default() -> Self {
        LightRoute::new(LightRoute::LIGHT_BELOW)
    }
}

impl LightRoute {
    /// Default of [`LightRoute::light_below`]: 1 ms.
    pub const LIGHT_BELOW: f64 = 1e-3;

    /// Default of [`LightRoute::reprobe`].
    pub const REPROBE: u64 = 64;

    /// A router with no history.
    pub fn new(light_below: f64) -> LightRoute {
        LightRoute {
            light_below,
            reprobe: Self::REPROBE,
            classes: BySizeClass::default(),
        }
    }

    fn class(&self, updates: usize) -> Option<&RouteClass> {
        self.classes.get(updates)
    }

    /// Predicted matching seconds of a batch of `updates` updates on `route`.
    pub fn predicted(&self, updates: usize, route: Route) -> Option<f64> {
        let c = self.class(updates)?;
        match route {
            Route::Gpu => c.gpu.predict(updates),
            Route::Cpu => c.cpu.predict(updates),
        }
    }

    /// Where the next batch, of `updates` updates, runs.
    pub fn choose(&self, updates: usize) -> Route {
        let Some((c, gpu)) = self.class(updates).and_then(|c| Some((c, c.gpu.predict(updates)?))) else {
            return Route::Gpu;
        };
        if gpu >= self.light_below {
            return Route::Gpu;
        }
        let Some(cpu) = c.cpu.predict(updates) else {
            return Route::Cpu;
        };
        let preferred = if cpu < gpu { Route::Cpu } else { Route::Gpu };
        if self.reprobe > 0 && c.batches > 0 && c.batches % self.reprobe == 0 {
            return match preferred {
                Route::Cpu => Route::Gpu,
                Route::Gpu => Route::Cpu,
            };
        }
        preferred
    }

    /// Forgets every class (a new graph or query).
    pub fn forget(&mut self) {
        self.classes = BySizeClass::default();
    }

    /// Records a batch of `updates` updates matched on `route` in `seconds`.
    pub fn observe(&mut self, updates: usize, route: Route, seconds: f64) {
        let e = self.classes.entry(updates);
        e.batches += 1;
        match route {
            Route::Gpu => e.gpu.observe(updates, seconds),
            Route::Cpu => e.cpu.observe(updates, seconds),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn light_classes_go_where_they_run_quicker() {
        let mut r = LightRoute::default();
        // Nothing known: the GPU, and learn.
        assert_eq!(r.choose(64), Route::Gpu);
        r.observe(64, Route::Gpu, 0.3e-3);
        // A light class with no CPU time yet: try the CPU once.
        assert_eq!(r.choose(64), Route::Cpu);
        r.observe(64, Route::Cpu, 0.1e-3);
        assert_eq!(r.choose(64), Route::Cpu);
        // A CPU slower than the GPU sends the class back.
        r.observe(64, Route::Cpu, 2e-3);
        r.observe(64, Route::Cpu, 2e-3);
        assert_eq!(r.choose(64), Route::Gpu);
        // A heavy class never probes the CPU.
        r.observe(8192, Route::Gpu, 30e-3);
        assert_eq!(r.choose(8192), Route::Gpu);
        assert_eq!(r.predicted(8192, Route::Cpu), None);
        // Single updates: their own class.
        assert_eq!(r.choose(1), Route::Gpu);
        r.observe(1, Route::Gpu, 0.15e-3);
        assert_eq!(r.choose(1), Route::Cpu);
    }

    #[test]
    fn the_other_side_is_probed_every_reprobe_batches() {
        let mut r = LightRoute::default();
        r.observe(1, Route::Gpu, 0.2e-3);
        r.observe(1, Route::Cpu, 0.01e-3);
        let mut gpu = 0;
        for _ in 0..(3 * LightRoute::REPROBE) {
            let route = r.choose(1);
            if route == Route::Gpu {
                gpu += 1;
            }
            let secs = if route == Route::Gpu { 0.2e-3 } else { 0.01e-3 };
            r.observe(1, route, secs);
        }
        assert_eq!(gpu, 3, "one GPU batch per {} batches", LightRoute::REPROBE);
    }
}

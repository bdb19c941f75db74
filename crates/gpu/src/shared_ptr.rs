//! [`SharedPtr`]: one buffer's raw pointer, shared by the threads that fill
//! disjoint ranges of it (the host graph's and the DCSR pack's parallel
//! copies, the host graph's per-vertex table updates, the bench's parallel
//! CSR build).

/// A `*mut T` (by default `*mut u32`) that may cross threads. Making one is
/// safe; writing through [`SharedPtr::get`] is `unsafe`, and each use says
/// why its threads' ranges are disjoint.
#[derive(Debug)]
pub struct SharedPtr<T = u32>(pub *mut T);

impl<T> Clone for SharedPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SharedPtr<T> {}

// SAFETY: the pointer is only written through in disjoint ranges, by the
// callers' own `unsafe` blocks.
unsafe impl<T: Send> Send for SharedPtr<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedPtr<T> {}

impl<T> SharedPtr<T> {
    /// The pointer (a method, so that closures capture the whole wrapper).
    pub fn get(self) -> *mut T {
        self.0
    }
}

//! [`SharedPtr`]: one buffer's raw pointer, shared by the threads that fill
//! disjoint ranges of it (the host graph's and the DCSR pack's parallel
//! copies, the bench's parallel CSR build).

/// A `*mut u32` that may cross threads. Making one is safe; writing through
/// [`SharedPtr::get`] is `unsafe`, and each use says why its threads' ranges
/// are disjoint.
#[derive(Clone, Copy, Debug)]
pub struct SharedPtr(pub *mut u32);

// SAFETY: the pointer is only written through in disjoint ranges, by the
// callers' own `unsafe` blocks.
unsafe impl Send for SharedPtr {}
// SAFETY: as above.
unsafe impl Sync for SharedPtr {}

impl SharedPtr {
    /// The pointer (a method, so that closures capture the whole wrapper).
    pub fn get(self) -> *mut u32 {
        self.0
    }
}

//! The worker's allocator: every call forwarded to the system's; an allocation the
//! address-space cap refuses sends a prebuilt `too_large` reply before the child dies.

use super::*;

/// Free heap a worker keeps between jobs (bytes); past it, it trims.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(super) const KEEP_FREE: usize = 16 << 20;

/// Where replies go: a private copy of the original stdout. fd 1 itself is pointed at
/// stderr, so a native library that prints cannot corrupt the frames.
pub(super) static FRAMES: std::sync::OnceLock<std::sync::Mutex<std::fs::File>> =
    std::sync::OnceLock::new();

/// The reply channel's descriptor and the `OutOfMemory` frame, made at start-up so that an
/// allocation failure can report itself without allocating.
pub(super) static FRAMES_FD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);
pub(super) static OOM_FRAME: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
pub(super) static OOM_SENT: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// The global allocator: the system's, plus one thing in worker processes: when an
/// allocation fails (the memory cap), say so on the reply channel before Rust aborts, so
/// the read fails as `too_large` instead of an unexplained crash.
pub struct CapAwareAlloc;

impl CapAwareAlloc {
    #[cold]
    fn failed() {
        let fd = FRAMES_FD.load(Ordering::Relaxed);
        if fd < 0 || OOM_SENT.swap(true, Ordering::Relaxed) {
            return;
        }
        if let Some(frame) = OOM_FRAME.get() {
            // SAFETY: a plain write of a static buffer to an open descriptor.
            unsafe {
                libc::write(fd, frame.as_ptr().cast(), frame.len());
            }
        }
    }
}

// SAFETY: every call is forwarded to `System`; the failure path only writes a prebuilt buffer.
unsafe impl std::alloc::GlobalAlloc for CapAwareAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let p = std::alloc::System.alloc(layout);
        if p.is_null() {
            Self::failed();
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        let p = std::alloc::System.alloc_zeroed(layout);
        if p.is_null() {
            Self::failed();
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        let p = std::alloc::System.realloc(ptr, layout, new);
        if p.is_null() {
            Self::failed();
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        std::alloc::System.dealloc(ptr, layout)
    }
}

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

/// How much address space an abort must find left for it not to count as the memory cap:
/// an eighth of the cap, at least 16 MB (set at start-up; 0 = no cap, no handler).
static CAP_PROBE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Native code (glibc's own bookkeeping, PDFium, ONNX Runtime) allocates outside Rust's
/// allocator; when the cap refuses it, it aborts without passing through `CapAwareAlloc`
/// (glibc: "failed to register TLS destructor: out of memory"). On SIGABRT, if the address
/// space is (nearly) exhausted, the abort is the cap's doing: send the same `too_large`
/// frame, then let the abort go on. Only async-signal-safe calls (mmap, munmap, write).
extern "C" fn on_abort(_sig: libc::c_int) {
    let probe = CAP_PROBE.load(Ordering::Relaxed);
    if probe == 0 {
        return;
    }
    // SAFETY: an anonymous, inaccessible mapping that is released at once; it still counts
    // against RLIMIT_AS, so failing to get it means the cap is (almost) reached.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            probe,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            CapAwareAlloc::failed();
        } else {
            libc::munmap(p, probe);
        }
    }
}

/// Install `on_abort` for a worker under a cap of `cap_mb` MB (once, at start-up). The
/// handler runs once (`SA_RESETHAND`): when it returns, abort() raises SIGABRT again with
/// the default action and the process dies as before.
pub(super) fn report_aborts_at_the_cap(cap_mb: u64) {
    if cap_mb == 0 {
        return;
    }
    let probe = ((cap_mb as usize) << 20) / 8;
    CAP_PROBE.store(probe.max(16 << 20), Ordering::Relaxed);
    // SAFETY: a zeroed sigaction with a plain handler and an empty mask, installed before
    // any job runs.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_abort as extern "C" fn(libc::c_int) as usize;
        sa.sa_flags = libc::SA_RESETHAND;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGABRT, &sa, std::ptr::null_mut());
    }
}

//! When a read must stop: its deadline, or earlier when whoever asked for it is gone (the
//! client closed the connection while the read ran in this process). Page-based
//! extractors check it between pages, the OCR engine between model runs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A read's deadline and its stop signal. Cheap to clone; clones share the signal.
#[derive(Debug, Clone, Default)]
pub struct Deadline {
    at: Option<Instant>,
    stop: Option<Arc<AtomicBool>>,
}

/// Stops the reads holding clones of its deadline.
#[derive(Debug, Clone)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Deadline {
    /// No deadline: the read runs to its end.
    pub fn none() -> Self {
        Self::default()
    }

    /// Stop at `at`.
    pub fn at(at: Instant) -> Self {
        Self {
            at: Some(at),
            stop: None,
        }
    }

    /// This deadline, which `Stop::stop` also ends early.
    pub fn stoppable(mut self) -> (Self, Stop) {
        let flag = Arc::new(AtomicBool::new(false));
        self.stop = Some(flag.clone());
        (self, Stop(flag))
    }

    /// The instant, if there is one.
    pub fn instant(&self) -> Option<Instant> {
        self.at
    }

    /// Whether the read was stopped (not merely out of time).
    pub fn stopped(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// Whether the read must stop now.
    pub fn passed(&self) -> bool {
        self.stopped() || self.at.is_some_and(|d| Instant::now() >= d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_stop_ends_every_clone_before_its_time() {
        let (d, stop) = Deadline::at(Instant::now() + Duration::from_secs(3600)).stoppable();
        let other = d.clone();
        assert!(!d.passed() && !other.passed());
        stop.stop();
        assert!(d.passed() && other.passed() && other.stopped());
        assert!(!Deadline::none().passed());
        assert!(Deadline::at(Instant::now()).passed());
    }
}

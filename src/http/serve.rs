//! The accept loop: every connection served with a header-read timeout (which also closes a
//! keep-alive connection left idle), at most `max_connections` at once (so idle sockets
//! cannot use up the descriptors `/healthz` needs), and a graceful shutdown whose drain is
//! bounded. `axum::serve` has none of these knobs.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How connections are served.
#[derive(Debug, Clone)]
pub struct ConnLimits {
    /// A request's headers must arrive within this, and a keep-alive connection may stay
    /// idle between requests no longer than this.
    pub header_read_timeout: Duration,
    /// Connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// How long a graceful shutdown waits for requests in progress before closing them.
    pub drain_timeout: Duration,
}

/// Serve `app` on `listener` until `shutdown` resolves, then stop accepting and let the
/// requests in progress finish, for at most `drain_timeout`. Returns whether the drain
/// finished in time.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()>,
) -> bool {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        // A slot first: past the cap, connections wait in the kernel's backlog instead of
        // taking a descriptor each.
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = &mut shutdown => break,
        };
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and friends: wait a moment rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let conn = builder.serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _permit = permit;
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => true,
        _ = tokio::time::sleep(limits.drain_timeout) => {
            tracing::warn!(
                drain_ms = limits.drain_timeout.as_millis() as u64,
                "requests still in progress at the end of the drain were cut"
            );
            false
        }
    }
}

/// Raise the soft limit of open files to the hard limit, and say how many there are.
pub fn raise_fd_limit() -> u64 {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit fill and read the struct they are given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) != 0 {
            return 1024;
        }
        if rl.rlim_cur < rl.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: rl.rlim_max,
                rlim_max: rl.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                rl.rlim_cur = rl.rlim_max;
            }
        }
    }
    rl.rlim_cur as u64
}

/// The connection cap: the operator's, or what the descriptor limit leaves after the files,
/// the database, the workers' pipes and the spare room a probe needs.
pub fn connection_cap(configured: usize, fd_limit: u64) -> usize {
    if configured > 0 {
        return configured;
    }
    (fd_limit.saturating_sub(128) / 2).clamp(16, 4096) as usize
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cap_stays_below_the_descriptor_limit() {
        use super::connection_cap;
        assert_eq!(connection_cap(10, 256), 10);
        assert_eq!(connection_cap(0, 256), 64);
        assert_eq!(connection_cap(0, 1024), 448);
        assert_eq!(connection_cap(0, 1 << 20), 4096);
        assert_eq!(connection_cap(0, 100), 16);
    }
}

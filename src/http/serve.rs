//! The accept loop: every connection served with a header-read timeout (which also closes a
//! keep-alive connection left idle), at most `max_connections` at once and at most
//! `per_peer` from one address (so one client's idle or stalled sockets cannot use up the
//! slots everyone else and `/healthz` need), and a graceful shutdown whose drain is
//! bounded. `axum::serve` has none of these knobs.
//!
//! A connection that finds no slot (the service full, or its address at its share) is not
//! left waiting in the kernel's backlog behind the sockets that filled it: it is taken into
//! a small reserve (a quarter of it at most for one address), where only the probes (`/healthz`, `/readyz`) are answered and every
//! other request gets a 503 `unavailable` with `Retry-After`, its headers within a short
//! timeout, and the connection is then closed. Past the reserve too, a connection is closed
//! at once. So probes answer while thousands of sockets stall, and the stalled ones end
//! with their header or body timeout.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::response::IntoResponse;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt;

use crate::error::{ApiError, ErrorCode};

/// How connections are served.
#[derive(Debug, Clone)]
pub struct ConnLimits {
    /// A request's headers must arrive within this, and a keep-alive connection may stay
    /// idle between requests no longer than this.
    pub header_read_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
    /// Connections served at once from one peer address (gateways listed in
    /// `trusted_proxies` are not held to it).
    pub per_peer: usize,
    /// Peers (a gateway's addresses) not held to `per_peer`.
    pub trusted_proxies: Vec<(IpAddr, u8)>,
    /// How long a graceful shutdown waits for requests in progress before closing them.
    pub drain_timeout: Duration,
}

/// Connections past the caps that are still answered (probes; everything else a 503).
const RESERVE: usize = 128;

/// The reserve's connections one address may hold: one client's flood cannot fill it, so a
/// probe from elsewhere (an orchestrator, a monitor) always finds room.
const RESERVE_PER_PEER: usize = RESERVE / 4;

/// How long a connection in the reserve may take to send its request's headers.
const RESERVE_HEADER_TIMEOUT: Duration = Duration::from_secs(2);

/// How often the server gives freed memory back to the system, and how much it keeps.
const TRIM_EVERY: Duration = Duration::from_secs(5);
const KEEP_FREE: usize = 32 << 20;

/// Give the heap's free pages back to the system once more than `KEEP_FREE` of it is free:
/// glibc keeps what a peak (a long answer, a large read, many at once) freed in its arenas,
/// and a server that served one 50 MB read stayed at its peak, idle (the attack pass of
/// 2026-12-07). Only after a quiet spell (no answer begun or held for `TRIM_EVERY`): a trim
/// holds the allocator's locks while it walks the heap, and the next read faults the pages
/// back in, so one under load slowed reads by a third in bench/pdf. On the blocking pool.
fn trim_freed_memory() -> tokio::task::JoinHandle<()> {
    tokio::spawn(async {
        let mut tick = tokio::time::interval(TRIM_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut seen = u64::MAX;
        loop {
            tick.tick().await;
            let (started, held) = super::answers::activity();
            let quiet = started == seen && held == 0;
            seen = started;
            if !quiet {
                continue;
            }
            #[cfg(all(target_os = "linux", target_env = "gnu"))]
            let _ = tokio::task::spawn_blocking(|| {
                // SAFETY: mallinfo2 only reads the allocator's counters (all arenas);
                // malloc_trim only releases free heap pages.
                unsafe {
                    if libc::mallinfo2().fordblks > KEEP_FREE {
                        libc::malloc_trim(0);
                    }
                }
            })
            .await;
        }
    })
}

/// The peer's address, as the connection it came on saw it (an extension on every request).
pub type Peer = ConnectInfo<SocketAddr>;

/// Open connections per peer address.
#[derive(Default)]
struct PerPeer(Mutex<HashMap<IpAddr, usize>>);

/// One connection counted against its peer; uncounted when dropped.
struct PeerSlot(Arc<PerPeer>, IpAddr);

impl PerPeer {
    fn take(self: &Arc<Self>, ip: IpAddr, cap: usize) -> Option<PeerSlot> {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let n = m.entry(ip).or_insert(0);
        if *n >= cap {
            return None;
        }
        *n += 1;
        Some(PeerSlot(self.clone(), ip))
    }
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut m = self.0 .0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = m.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.1);
            }
        }
    }
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
    let trimmer = trim_freed_memory();
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let reserve = Arc::new(Semaphore::new(RESERVE));
    let peers = Arc::new(PerPeer::default());
    let reserved = Arc::new(PerPeer::default());
    let graceful = GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let mut spare = hyper::server::conn::http1::Builder::new();
    spare
        .timer(TokioTimer::new())
        .header_read_timeout(RESERVE_HEADER_TIMEOUT.min(limits.header_read_timeout))
        .keep_alive(false);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
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
        let ip = canonical(peer.ip());
        let exempt = crate::fetch::in_ranges(ip, &limits.trusted_proxies);
        let peer_slot = match exempt {
            true => None,
            false => peers.take(ip, limits.per_peer.max(1)),
        };
        let slot = match (
            exempt || peer_slot.is_some(),
            slots.clone().try_acquire_owned(),
        ) {
            (true, Ok(p)) => Some(p),
            _ => None,
        };
        match slot {
            Some(permit) => {
                let app = app.clone();
                let service = tower::service_fn(
                    move |mut req: axum::extract::Request<hyper::body::Incoming>| {
                        req.extensions_mut().insert(ConnectInfo(peer));
                        app.clone().oneshot(req)
                    },
                );
                let conn = builder
                    .serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    let _permit = (permit, peer_slot);
                    if let Err(e) = conn.await {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                });
            }
            None => {
                drop(peer_slot);
                let share = match exempt {
                    true => None,
                    false => match reserved.take(ip, RESERVE_PER_PEER) {
                        Some(s) => Some(s),
                        None => {
                            // This address holds its share of the reserve: closed at once.
                            drop(stream);
                            continue;
                        }
                    },
                };
                let Ok(permit) = reserve.clone().try_acquire_owned() else {
                    // Past the reserve too: closed at once, so the backlog never fills.
                    drop(stream);
                    continue;
                };
                let app = app.clone();
                let service = tower::service_fn(
                    move |mut req: axum::extract::Request<hyper::body::Incoming>| {
                        req.extensions_mut().insert(ConnectInfo(peer));
                        let app = app.clone();
                        async move {
                            match req.uri().path() {
                                "/healthz" | "/readyz" => app.oneshot(req).await,
                                _ => Ok(overloaded()),
                            }
                        }
                    },
                );
                let conn =
                    spare.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    let _permit = (permit, share);
                    let _ = conn.await;
                });
            }
        }
    }
    drop(listener);
    trimmer.abort();
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

/// The client a peer address stands for: an IPv4 peer seen through an IPv6 socket counts as
/// its IPv4 address, and an IPv6 peer as its /64 (one host owns a whole /64 and can take any
/// address in it, so its addresses share one share).
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None if v6.is_loopback() => ip,
            None => IpAddr::V6(std::net::Ipv6Addr::from(
                u128::from(v6) & !((1u128 << 64) - 1),
            )),
        },
        v4 => v4,
    }
}

/// The answer on a connection past the caps.
fn overloaded() -> axum::response::Response {
    let mut resp = ApiError::new(
        ErrorCode::Unavailable,
        "the service has no free connection for this client right now",
    )
    .with_hint("Retry after a moment; a client holding many connections open should reuse fewer.")
    .into_response();
    resp.headers_mut().insert(
        axum::http::header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    resp
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
    (fd_limit.saturating_sub(128 + RESERVE as u64) / 2).clamp(16, 4096) as usize
}

/// The per-peer cap: the operator's, or a quarter of the connections (at least 8), so one
/// address (one client, not a gateway listed as trusted) leaves room for the others.
pub fn per_peer_cap(configured: usize, max_connections: usize) -> usize {
    if configured > 0 {
        return configured;
    }
    (max_connections / 4).max(8)
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_ipv6_client_is_its_slash_64() {
        use super::canonical;
        let a = canonical("2001:db8:1:2:aaaa::1".parse().unwrap());
        let b = canonical("2001:db8:1:2:bbbb::9".parse().unwrap());
        assert_eq!(a, b);
        assert_ne!(a, canonical("2001:db8:1:3::1".parse().unwrap()));
        assert_eq!(
            canonical("::ffff:10.1.2.3".parse().unwrap()).to_string(),
            "10.1.2.3"
        );
        assert_eq!(canonical("::1".parse().unwrap()).to_string(), "::1");
    }

    #[test]
    fn the_cap_stays_below_the_descriptor_limit() {
        use super::connection_cap;
        assert_eq!(connection_cap(10, 256), 10);
        assert_eq!(connection_cap(0, 256), 16);
        assert_eq!(connection_cap(0, 1024), 384);
        assert_eq!(connection_cap(0, 1 << 20), 4096);
        assert_eq!(connection_cap(0, 100), 16);
    }
}

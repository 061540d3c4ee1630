//! Long answers and the clients that do not read them.
//!
//! The attack pass of 2026-12-07 found that clients which ask for long answers and never
//! read them hold the service: 540 such connections held every thread of the blocking pool
//! (`/readyz` with them), and sixty held 3.2 GB. Every answer that can be long — an
//! envelope from `POST /read` (JSON, one-shot, server-sent events, `file_ids`), a job's
//! result (`GET /jobs/{id}`, its event stream) — therefore
//!
//! - holds a [`Place`] from before its text is read or loaded until its body is written:
//!   a tenant has `TENANT_ANSWERS` of them (or twice `max_concurrent_reads`), the server
//!   four tenants' worth, so stalled answers are few and one tenant's cannot keep
//!   another's waiting;
//! - is written into its body a chunk at a time (`STREAM_CHUNK`), never as a second whole
//!   copy beside the value it is written from;
//! - must go out at `MIN_RATE` or faster after `RATE_GRACE`, or it is cut off and its place
//!   and memory freed.

use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// A value whose JSON is at most about this long is answered as one body; a longer one is
/// written into the body as it is serialised.
pub(super) const STREAM_TEXT_BYTES: usize = 1024 * 1024;

/// The bytes a long answer's body goes out in.
const STREAM_CHUNK: usize = 256 * 1024;

/// Answers of one tenant under way at once (see the module's note).
const TENANT_ANSWERS: usize = 8;

/// A long answer's body goes out at least this fast (bytes a second, after `RATE_GRACE`),
/// or it is cut off and its place freed.
const MIN_RATE: f64 = 256.0 * 1024.0;
const RATE_GRACE: Duration = Duration::from_secs(30);

/// An event stream with nothing to say sends a comment this often (gateways close idle
/// connections).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

type Places = std::sync::Arc<tokio::sync::Semaphore>;

/// Answers begun since the server started, and held now: the memory trimmer
/// (`serve::trim_freed_memory`) waits for a quiet spell, never trimming under a read.
static STARTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static HELD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// (answers begun so far, answers held now).
pub(super) fn activity() -> (u64, usize) {
    use std::sync::atomic::Ordering::Relaxed;
    (STARTED.load(Relaxed), HELD.load(Relaxed))
}

/// An answer's place among those held (`TENANT_ANSWERS`).
pub(super) struct Place {
    _tenant: Option<tokio::sync::OwnedSemaphorePermit>,
    _all: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl Drop for Place {
    fn drop(&mut self) {
        HELD.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Waits until the tenant, and the server, have a place for another answer (`lanes`: the
/// reads the server runs at once, `max_concurrent_reads`).
pub(super) async fn place_for_an_answer(tenant: &str, lanes: usize) -> Place {
    type Tenants = std::sync::Mutex<std::collections::HashMap<String, Places>>;
    static ALL: std::sync::OnceLock<Places> = std::sync::OnceLock::new();
    static TENANTS: std::sync::OnceLock<Tenants> = std::sync::OnceLock::new();
    let per_tenant = TENANT_ANSWERS.max(2 * lanes);
    let all = ALL
        .get_or_init(|| std::sync::Arc::new(tokio::sync::Semaphore::new(4 * per_tenant)))
        .clone();
    let mine = TENANTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(tenant.to_string())
        .or_insert_with(|| std::sync::Arc::new(tokio::sync::Semaphore::new(per_tenant)))
        .clone();
    let own = mine.acquire_owned().await.ok();
    let all = all.acquire_owned().await.ok();
    // Counted once the place exists (a wait dropped with its request counts nothing).
    STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    HELD.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Place {
        _tenant: own,
        _all: all,
    }
}

/// How long the next bytes of an answer may take: `MIN_RATE` over what was sent, after
/// `RATE_GRACE`.
struct Pace {
    started: Instant,
    sent: usize,
}

impl Pace {
    fn new() -> Self {
        Pace {
            started: Instant::now(),
            sent: 0,
        }
    }

    fn left(&self) -> Duration {
        let due = self.started + RATE_GRACE + Duration::from_secs_f64(self.sent as f64 / MIN_RATE);
        due.saturating_duration_since(Instant::now())
    }
}

type Chunk = Result<Bytes, std::io::Error>;

fn too_slow() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "the client reads the answer too slowly",
    )
}

/// Send one chunk within its pace: `Err` when the client is gone or too slow.
async fn send_paced(
    tx: &tokio::sync::mpsc::Sender<Chunk>,
    pace: &mut Pace,
    bytes: Bytes,
) -> std::io::Result<()> {
    let len = bytes.len();
    match tokio::time::timeout(pace.left(), tx.send(Ok(bytes))).await {
        Ok(Ok(())) => {
            pace.sent += len;
            Ok(())
        }
        Ok(Err(_)) => Err(std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "client gone",
        )),
        Err(_) => Err(too_slow()),
    }
}

/// A value as the answer's JSON body. A long one (`long`) is serialised straight into the
/// body, a chunk at a time, on the blocking pool: never a second whole copy of it (a 52 MB
/// read whole held its text twice more in the server, as a JSON buffer, before the first
/// byte went out). The status and headers are a JSON answer's; its length is unknown
/// (chunked). The `place` is held until the body is written or cut off.
pub(super) fn long_json<T>(value: T, long: bool, place: Place) -> Response
where
    T: serde::Serialize + Send + 'static,
{
    if !long {
        return Json(value).into_response();
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Chunk>(2);
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let _place = place;
        let mut out = Chunks::new(tx, handle);
        write_json(&mut out, &value);
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        axum::body::Body::from_stream(receive(rx)),
    )
        .into_response()
}

/// Serialise into `out` and flush it; a client gone away, or reading slower than
/// `MIN_RATE`, ends the writing at its next chunk, and a serialisation that fails part way
/// aborts the body rather than ending it as if it were whole.
fn write_json<T: serde::Serialize>(out: &mut Chunks, value: &T) -> bool {
    match serde_json::to_writer(&mut *out, value) {
        Ok(()) => std::io::Write::flush(out).is_ok(),
        Err(e) => {
            let _ = out.tx.blocking_send(Err(std::io::Error::other(e)));
            false
        }
    }
}

fn receive(
    rx: tokio::sync::mpsc::Receiver<Chunk>,
) -> impl futures_util::Stream<Item = Chunk> + Send + 'static {
    futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    })
}

/// A writer that hands what is written to a body, `STREAM_CHUNK` bytes at a time, each
/// within the time `MIN_RATE` leaves it.
struct Chunks {
    buf: Vec<u8>,
    tx: tokio::sync::mpsc::Sender<Chunk>,
    handle: tokio::runtime::Handle,
    pace: Pace,
}

impl Chunks {
    fn new(tx: tokio::sync::mpsc::Sender<Chunk>, handle: tokio::runtime::Handle) -> Self {
        Chunks {
            buf: Vec::with_capacity(STREAM_CHUNK),
            tx,
            handle,
            pace: Pace::new(),
        }
    }
}

impl std::io::Write for Chunks {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= STREAM_CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(STREAM_CHUNK));
        self.handle
            .block_on(send_paced(&self.tx, &mut self.pace, Bytes::from(chunk)))
    }
}

/// One server-sent event: `id` (if any), `event`, and `data` on as many `data:` lines as
/// it has lines.
pub(super) fn sse_event(id: Option<i64>, kind: &str, data: &str) -> Bytes {
    let mut out = String::with_capacity(data.len() + kind.len() + 32);
    if let Some(id) = id {
        out.push_str(&format!("id: {id}\n"));
    }
    out.push_str("event: ");
    out.push_str(kind);
    out.push('\n');
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line.strip_suffix('\r').unwrap_or(line));
        out.push('\n');
    }
    out.push('\n');
    Bytes::from(out)
}

/// Events for an event stream: small ones as they come (`progress`, unbounded: a read's
/// progress never waits on its client), then the long last one a chunk at a time, within
/// its pace.
pub(super) struct EventSender {
    progress: Option<tokio::sync::mpsc::UnboundedSender<Bytes>>,
    last: tokio::sync::mpsc::Sender<Chunk>,
}

/// The receiving side: the answer's body.
pub(super) struct EventReceiver {
    progress: Option<tokio::sync::mpsc::UnboundedReceiver<Bytes>>,
    last: tokio::sync::mpsc::Receiver<Chunk>,
}

pub(super) fn event_channel() -> (EventSender, EventReceiver) {
    let (ptx, prx) = tokio::sync::mpsc::unbounded_channel();
    let (ltx, lrx) = tokio::sync::mpsc::channel(4);
    (
        EventSender {
            progress: Some(ptx),
            last: ltx,
        },
        EventReceiver {
            progress: Some(prx),
            last: lrx,
        },
    )
}

impl EventSender {
    /// A sender of small events for a read's progress callback (dropped with the read).
    pub(super) fn progress(&self) -> tokio::sync::mpsc::UnboundedSender<Bytes> {
        self.progress
            .clone()
            .expect("progress before the last event")
    }

    /// A small event, in order with the rest, waiting for room.
    pub(super) async fn send(&mut self, event: Bytes) -> std::io::Result<()> {
        self.progress = None;
        self.last
            .send(Ok(event))
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "client gone"))
    }

    /// The client went away.
    pub(super) async fn closed(&self) {
        self.last.closed().await
    }

    /// The last event, whose `data` may be long (one line of JSON): written in chunks,
    /// within its pace, while `place` is held.
    pub(super) async fn send_last(
        self,
        id: Option<i64>,
        kind: &str,
        data: String,
        place: Option<Place>,
    ) {
        let _place = place;
        let EventSender { progress, last } = self;
        drop(progress);
        if data.len() <= STREAM_CHUNK || data.contains('\n') {
            let _ = last.send(Ok(sse_event(id, kind, &data))).await;
            return;
        }
        let mut pace = Pace::new();
        let head = sse_event(id, kind, "");
        // `…data: \n\n` without its end: the data follows, then the event's end.
        let head = head.slice(..head.len() - 2);
        if send_paced(&last, &mut pace, head).await.is_err() {
            return;
        }
        let data = Bytes::from(data);
        let mut at = 0;
        while at < data.len() {
            let end = (at + STREAM_CHUNK).min(data.len());
            if send_paced(&last, &mut pace, data.slice(at..end))
                .await
                .is_err()
            {
                return;
            }
            at = end;
        }
        let _ = send_paced(&last, &mut pace, Bytes::from_static(b"\n\n")).await;
    }

    /// The last event as a value serialised straight into the body (see [`long_json`]),
    /// on the blocking pool.
    pub(super) fn send_last_json<T>(self, kind: &'static str, value: T, place: Place)
    where
        T: serde::Serialize + Send + 'static,
    {
        let EventSender { progress, last } = self;
        drop(progress);
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let _place = place;
            let head = sse_event(None, kind, "");
            let mut out = Chunks::new(last, handle);
            out.buf.extend_from_slice(&head[..head.len() - 2]);
            if write_json(&mut out, &value) {
                out.buf.extend_from_slice(b"\n\n");
                let _ = std::io::Write::flush(&mut out);
            }
        });
    }
}

/// Server-sent events as a response (a streamed read, a job's events): the small events as
/// they come, then the last, with a comment every `KEEP_ALIVE` while there is nothing to
/// send. Gateways buffer responses by default; two headers ask nginx (and caches) to pass
/// each event on as it comes.
pub(super) fn event_stream(events: EventReceiver) -> Response {
    enum Got {
        Progress(Bytes),
        ProgressEnded,
        Last(Option<Chunk>),
    }
    let body = futures_util::stream::unfold(events, |mut ev| async move {
        loop {
            let next = async {
                let EventReceiver { progress, last } = &mut ev;
                match progress.as_mut() {
                    // Progress first, whatever is queued of it; the last event ends it
                    // even if a progress sender is still about.
                    Some(p) => tokio::select! {
                        biased;
                        m = p.recv() => m.map_or(Got::ProgressEnded, Got::Progress),
                        l = last.recv() => Got::Last(l),
                    },
                    None => Got::Last(last.recv().await),
                }
            };
            match tokio::time::timeout(KEEP_ALIVE, next).await {
                Err(_) => return Some((Ok(Bytes::from_static(b":\n\n")), ev)),
                Ok(Got::Progress(b)) => return Some((Ok(b), ev)),
                Ok(Got::ProgressEnded) => ev.progress = None,
                Ok(Got::Last(Some(chunk))) => {
                    ev.progress = None;
                    return Some((chunk, ev));
                }
                Ok(Got::Last(None)) => return None,
            }
        }
    });
    let mut res = (
        [(header::CONTENT_TYPE, "text/event-stream")],
        axum::body::Body::from_stream(body),
    )
        .into_response();
    let h = res.headers_mut();
    h.insert("x-accel-buffering", header::HeaderValue::from_static("no"));
    h.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache"),
    );
    res
}

//! Connections against the real binary on a real port, with real sockets (issue #15 item 3):
//! slow headers, idle keep-alive, stalled upload bodies, a connection cap, a bounded drain.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::common::Server;

/// `serve` in-process (`--workers 0`) with `flags`.
fn start(flags: &[&str]) -> Server {
    let mut all = vec!["--workers", "0"];
    all.extend_from_slice(flags);
    Server::start(&all, &[])
}

/// A new connection to the server, reads timing out after 20 s.
fn connect(srv: &Server) -> TcpStream {
    let s = TcpStream::connect(&srv.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// `GET /healthz` on a new connection: the status and how long it took.
fn health(srv: &Server) -> (u16, Duration) {
    let t = Instant::now();
    let mut s = connect(srv);
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, t.elapsed())
}

/// How long until the server closes `s` (reads return 0 or fail), reading what it sends.
fn closed_after(mut s: TcpStream) -> (Duration, String) {
    let t = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    (t.elapsed(), String::from_utf8_lossy(&got).into_owned())
}

#[test]
fn slow_headers_and_idle_keep_alive_are_closed() {
    let srv = start(&["--header-read-timeout-ms", "600"]);
    // A connection that never sends a byte.
    let (after, _) = closed_after(connect(&srv));
    assert!(after < Duration::from_secs(5), "idle socket kept {after:?}");
    // Headers trickled in slower than the timeout.
    let mut s = connect(&srv);
    s.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let _ = s.write_all(b"Host: 127.0.0.1\r\n");
    let (after, _) = closed_after(s);
    assert!(after < Duration::from_secs(5), "slow header kept {after:?}");
    // A keep-alive connection served once, then left idle.
    let mut s = connect(&srv);
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let (after, got) = closed_after(s);
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    assert!(
        after < Duration::from_secs(5),
        "idle keep-alive kept {after:?}"
    );
}

#[test]
fn a_stalled_upload_body_is_refused() {
    let srv = start(&["--body-timeout-ms", "500"]);
    let mut s = connect(&srv);
    let boundary = "BoUnDaRy";
    let part = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nthe first bytes, then nothing"
    );
    write!(
        s,
        "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: 100000\r\n\r\n{part}"
    )
    .unwrap();
    let (after, got) = closed_after(s);
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    assert!(got.contains("request_timeout"), "{got}");
    assert!(after < Duration::from_secs(5), "{after:?}");
    assert_eq!(health(&srv).0, 200);
}

#[test]
fn idle_sockets_past_the_cap_do_not_starve_health_checks() {
    let srv = start(&["--max-connections", "8", "--header-read-timeout-ms", "700"]);
    // Twice as many idle sockets as the cap: the rest wait in the backlog, and as the
    // header timeout closes the idle ones, the probe gets its turn.
    let idle: Vec<TcpStream> = (0..16).map(|_| connect(&srv)).collect();
    let (status, took) = health(&srv);
    assert_eq!(status, 200);
    assert!(took < Duration::from_secs(5), "{took:?}");
    drop(idle);
}

#[test]
fn sigterm_drains_within_its_bound() {
    let srv = start(&["--drain-timeout-ms", "800", "--body-timeout-ms", "60000"]);
    // An upload that keeps its request open (its body never completes).
    let mut s = connect(&srv);
    s.write_all(b"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: 100000\r\n\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nslow")
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    srv.terminate();
    let mut srv = srv;
    let (status, _) = srv.stop_logs();
    assert!(status.success(), "{status}");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "the drain is bounded: {:?}",
        t.elapsed()
    );
    drop(s);
}

//! Connections against the real binary on a real port, with real sockets (issue #15 item 3):
//! slow headers, idle keep-alive, stalled upload bodies, a connection cap, a bounded drain.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start(flags: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_docreader"))
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--workers",
                "0",
                "--data-dir",
            ])
            .arg(dir.path().join("data"))
            .args(flags)
            .stderr(Stdio::piped())
            .spawn()
            .expect("start docreader serve");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut addr = String::new();
        let mut line = String::new();
        while stderr.read_line(&mut line).unwrap() > 0 {
            if let Some(rest) = line.split("listening on http://").nth(1) {
                addr = rest.split_whitespace().next().unwrap().to_string();
                break;
            }
            line.clear();
        }
        assert!(!addr.is_empty(), "the server did not say where it listens");
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = stderr.read_to_string(&mut sink);
        });
        Self {
            child,
            addr,
            _dir: dir,
        }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s
    }

    /// `GET /healthz` on a new connection: the status and how long it took.
    fn health(&self) -> (u16, Duration) {
        let t = Instant::now();
        let mut s = self.connect();
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
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
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
    let srv = Server::start(&["--header-read-timeout-ms", "600"]);
    // A connection that never sends a byte.
    let (after, _) = closed_after(srv.connect());
    assert!(after < Duration::from_secs(5), "idle socket kept {after:?}");
    // Headers trickled in slower than the timeout.
    let mut s = srv.connect();
    s.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let _ = s.write_all(b"Host: x\r\n");
    let (after, _) = closed_after(s);
    assert!(after < Duration::from_secs(5), "slow header kept {after:?}");
    // A keep-alive connection served once, then left idle.
    let mut s = srv.connect();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
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
    let srv = Server::start(&["--body-timeout-ms", "500"]);
    let mut s = srv.connect();
    let boundary = "BoUnDaRy";
    let part = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nthe first bytes, then nothing"
    );
    write!(
        s,
        "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: 100000\r\n\r\n{part}"
    )
    .unwrap();
    let (after, got) = closed_after(s);
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    assert!(got.contains("request_timeout"), "{got}");
    assert!(after < Duration::from_secs(5), "{after:?}");
    assert_eq!(srv.health().0, 200);
}

#[test]
fn idle_sockets_past_the_cap_do_not_starve_health_checks() {
    let srv = Server::start(&["--max-connections", "8", "--header-read-timeout-ms", "700"]);
    // Twice as many idle sockets as the cap: the rest wait in the backlog, and as the
    // header timeout closes the idle ones, the probe gets its turn.
    let idle: Vec<TcpStream> = (0..16).map(|_| srv.connect()).collect();
    let (status, took) = srv.health();
    assert_eq!(status, 200);
    assert!(took < Duration::from_secs(5), "{took:?}");
    drop(idle);
}

#[test]
fn sigterm_drains_within_its_bound() {
    let srv = Server::start(&["--drain-timeout-ms", "800", "--body-timeout-ms", "60000"]);
    // An upload that keeps its request open (its body never completes).
    let mut s = srv.connect();
    s.write_all(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: 100000\r\n\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nslow")
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    let pid = srv.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let mut srv = srv;
    let status = srv.child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "the drain is bounded: {:?}",
        t.elapsed()
    );
    drop(s);
}

//! Service counters (requests by route and status, reads by format and outcome, read
//! latency, uploads, reads in flight, document-memory hits), the gauges read when scraped
//! (job queue, process memory) and their Prometheus text form. Kept below the HTTP layer, since
//! the read service counts into them whoever calls it.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

/// Latency buckets, seconds.
const BUCKETS: [f64; 10] = [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0, 60.0];

#[derive(Debug, Default)]
pub struct Metrics {
    /// (format, outcome code) → count.
    reads: Mutex<BTreeMap<(String, String), u64>>,
    /// format → (bucket counts, sum of seconds, count).
    latency: Mutex<BTreeMap<String, ([u64; BUCKETS.len()], f64, u64)>>,
    uploads: Mutex<BTreeMap<String, u64>>,
    /// (method, route template, status) → count.
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    pub in_flight: AtomicI64,
    pub cache_hits: AtomicU64,
    /// Reads whose text was left out of the search index because it was busy
    /// (`search::writer::READ_WAITS_AT_MOST`).
    pub index_skipped: AtomicU64,
}

impl Metrics {
    pub fn read_done(&self, format: &str, outcome: &str, seconds: f64) {
        *self
            .reads
            .lock()
            .expect("metrics lock")
            .entry((format.into(), outcome.into()))
            .or_default() += 1;
        let mut lat = self.latency.lock().expect("metrics lock");
        let e = lat
            .entry(format.into())
            .or_insert(([0; BUCKETS.len()], 0.0, 0));
        for (i, b) in BUCKETS.iter().enumerate() {
            if seconds <= *b {
                e.0[i] += 1;
            }
        }
        e.1 += seconds;
        e.2 += 1;
    }

    /// One answered request: its method, the route's template (`/files/{id}`, never the
    /// path itself, so the label set stays small; `unmatched` for no route) and status.
    pub fn request_done(&self, method: &str, route: &str, status: u16) {
        *self
            .requests
            .lock()
            .expect("metrics lock")
            .entry((method.into(), route.into(), status))
            .or_default() += 1;
    }

    pub fn upload_done(&self, outcome: &str) {
        *self
            .uploads
            .lock()
            .expect("metrics lock")
            .entry(outcome.into())
            .or_default() += 1;
    }

    /// The Prometheus text exposition (`restarts`: worker processes replaced so far; `jobs`:
    /// queued and running jobs, when the database answered).
    pub fn render(&self, restarts: u64, jobs: Option<(i64, i64)>) -> String {
        let mut out = String::new();
        out.push_str("# HELP docreader_http_requests_total Answered HTTP requests by method, route template and status.\n# TYPE docreader_http_requests_total counter\n");
        for ((m, r, s), n) in self.requests.lock().expect("metrics lock").iter() {
            let _ = writeln!(
                out,
                "docreader_http_requests_total{{method=\"{m}\",route=\"{}\",status=\"{s}\"}} {n}",
                label(r)
            );
        }
        if let Some((queued, running)) = jobs {
            out.push_str("# HELP docreader_jobs Read jobs by state, across every replica sharing the database.\n# TYPE docreader_jobs gauge\n");
            let _ = writeln!(out, "docreader_jobs{{state=\"queued\"}} {queued}");
            let _ = writeln!(out, "docreader_jobs{{state=\"running\"}} {running}");
        }
        let (server, workers) = resident_memory();
        out.push_str("# HELP docreader_resident_memory_bytes Resident memory of this replica: the server process, and its worker processes together.\n# TYPE docreader_resident_memory_bytes gauge\n");
        let _ = writeln!(
            out,
            "docreader_resident_memory_bytes{{process=\"server\"}} {server}"
        );
        let _ = writeln!(
            out,
            "docreader_resident_memory_bytes{{process=\"workers\"}} {workers}"
        );
        out.push_str("# HELP docreader_reads_total Reads by format family and outcome (ok or an error code).\n# TYPE docreader_reads_total counter\n");
        for ((f, o), n) in self.reads.lock().expect("metrics lock").iter() {
            let _ = writeln!(
                out,
                "docreader_reads_total{{format=\"{f}\",outcome=\"{o}\"}} {n}"
            );
        }
        out.push_str("# HELP docreader_read_seconds Read latency by format family.\n# TYPE docreader_read_seconds histogram\n");
        for (f, (buckets, sum, count)) in self.latency.lock().expect("metrics lock").iter() {
            for (b, n) in BUCKETS.iter().zip(buckets) {
                let _ = writeln!(
                    out,
                    "docreader_read_seconds_bucket{{format=\"{f}\",le=\"{b}\"}} {n}"
                );
            }
            let _ = writeln!(
                out,
                "docreader_read_seconds_bucket{{format=\"{f}\",le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(out, "docreader_read_seconds_sum{{format=\"{f}\"}} {sum}");
            let _ = writeln!(
                out,
                "docreader_read_seconds_count{{format=\"{f}\"}} {count}"
            );
        }
        out.push_str("# HELP docreader_uploads_total Uploaded files by outcome.\n# TYPE docreader_uploads_total counter\n");
        for (o, n) in self.uploads.lock().expect("metrics lock").iter() {
            let _ = writeln!(out, "docreader_uploads_total{{outcome=\"{o}\"}} {n}");
        }
        let _ = writeln!(out, "# HELP docreader_reads_in_flight Reads being extracted or waiting for a slot.\n# TYPE docreader_reads_in_flight gauge\ndocreader_reads_in_flight {}", self.in_flight.load(Ordering::Relaxed));
        let _ = writeln!(out, "# HELP docreader_worker_restarts_total Worker processes killed or found dead, and replaced.\n# TYPE docreader_worker_restarts_total counter\ndocreader_worker_restarts_total {restarts}");
        let _ = writeln!(out, "# HELP docreader_cache_hits_total Pages served from the document memory.\n# TYPE docreader_cache_hits_total counter\ndocreader_cache_hits_total {}", self.cache_hits.load(Ordering::Relaxed));
        let _ = writeln!(out, "# HELP docreader_index_skipped_total Reads whose text was left out of the search index because it was busy (POST /files/{{id}}/index adds such a file).\n# TYPE docreader_index_skipped_total counter\ndocreader_index_skipped_total {}", self.index_skipped.load(Ordering::Relaxed));
        out
    }
}

/// A label value with `\`, `"` and line breaks escaped (the exposition format's rule).
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Resident bytes of this process and of its children (the worker processes) together,
/// from /proc (0 where there is none to read).
fn resident_memory() -> (u64, u64) {
    let me = std::process::id();
    let rss = |pid: u32| -> u64 {
        // statm: size resident shared …, in pages.
        std::fs::read_to_string(format!("/proc/{pid}/statm"))
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map_or(0, |pages| pages * page_size())
    };
    let mut workers = 0;
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            // stat: pid (comm) state ppid …; comm may hold spaces and parentheses.
            let parent = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    let after = &s[s.rfind(')')? + 1..];
                    after.split_whitespace().nth(1)?.parse::<u32>().ok()
                });
            if parent == Some(me) {
                workers += rss(pid);
            }
        }
    }
    (rss(me), workers)
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions; it returns -1 when the value is unknown.
    match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as u64,
        _ => 4096,
    }
}

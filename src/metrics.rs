//! Service counters (reads by format and outcome, read latency, uploads, reads in flight,
//! document-memory hits) and their Prometheus text form. Kept below the HTTP layer, since
//! the read service counts into them whoever calls it.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

/// Latency buckets, seconds.
const BUCKETS: [f64; 10] = [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0, 60.0];

#[derive(Default)]
pub struct Metrics {
    /// (format, outcome code) → count.
    reads: Mutex<BTreeMap<(String, String), u64>>,
    /// format → (bucket counts, sum of seconds, count).
    latency: Mutex<BTreeMap<String, ([u64; BUCKETS.len()], f64, u64)>>,
    uploads: Mutex<BTreeMap<String, u64>>,
    pub in_flight: AtomicI64,
    pub cache_hits: AtomicU64,
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

    pub fn upload_done(&self, outcome: &str) {
        *self
            .uploads
            .lock()
            .expect("metrics lock")
            .entry(outcome.into())
            .or_default() += 1;
    }

    /// The Prometheus text exposition (`restarts`: worker processes replaced so far).
    pub fn render(&self, restarts: u64) -> String {
        let mut out = String::new();
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
        out
    }
}

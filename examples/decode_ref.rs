//! The reference for bench/text: a plain encoding_rs decode of a file in a named encoding,
//! nothing else (no detection, no line splitting). Prints the median milliseconds of RUNS.
//!
//!   cargo build --release --example decode_ref
//!   target/release/examples/decode_ref FILE LABEL [RUNS]

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(label)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: decode_ref FILE ENCODING-LABEL [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(5);
    let bytes = std::fs::read(path).expect("readable file");
    let enc = encoding_rs::Encoding::for_label(label.as_bytes()).expect("a known label");
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = std::time::Instant::now();
            let (text, _, _) = enc.decode(&bytes);
            std::hint::black_box(text.len());
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(|a, b| a.total_cmp(b));
    println!("{:.2}", times[times.len() / 2]);
}

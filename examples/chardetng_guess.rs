//! The reference for bench/text's accuracy table: chardetng (Firefox's detector) alone, fed
//! each file whole, as a browser would (no TLD hint, UTF-8 allowed). Prints one line a file:
//! the path, a tab, the encoding's WHATWG name.
//!
//!   cargo build --example chardetng_guess
//!   target/debug/examples/chardetng_guess FILE...

fn main() {
    for path in std::env::args().skip(1) {
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let mut d = chardetng::EncodingDetector::new();
        d.feed(&bytes, true);
        println!("{path}\t{}", d.guess(None, true).name());
    }
}

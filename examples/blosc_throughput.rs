//! Decode throughput of the blosc decoder on numcodecs-written frames (a measurement, not a test).
//!   python3 tests/fixtures/generate_blosc_vectors.py --bench /tmp/blosc-bench
//!   cargo run --release --example blosc_throughput -- /tmp/blosc-bench
use shardfetch::core::codec::blosc;
use std::time::Instant;

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: blosc_throughput <dir with *.blosc and *.raw>");
        std::process::exit(2);
    };
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("bench dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "blosc"))
        .collect();
    names.sort();
    for path in names {
        let frame = std::fs::read(&path).expect("frame");
        let raw = std::fs::read(path.with_extension("raw")).expect("raw");
        let out = blosc::decode(&frame, raw.len()).expect("decode");
        assert!(out == raw, "{}: wrong bytes", path.display());
        let rounds = 20;
        let t = Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(blosc::decode(std::hint::black_box(&frame), raw.len()).expect("decode"));
        }
        let secs = t.elapsed().as_secs_f64() / f64::from(rounds);
        println!(
            "{:<32} {:>8} -> {:>8} bytes  {:>7.1} MB/s (decoded bytes)",
            path.file_stem().unwrap_or_default().to_string_lossy(),
            frame.len(),
            raw.len(),
            raw.len() as f64 / secs / 1e6
        );
    }
}

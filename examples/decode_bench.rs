//! Native decode throughput of the library's codec path, for comparison with the same payloads
//! decoded by the wasm build in Chromium (`npm run bench`, see BENCHMARKS.md).
//!
//!     cargo run --release --example decode_bench [-- DIR...]    (default: bench/data/{u16_zstd,u16_gzip,u16_blosc_zstd,u16_blosc_lz4,u16_raw,u8_3d_zstd})
//!
//! Each DIR is a dataset written by bench/generate.py. Every inner chunk's stored bytes are
//! fetched once through the public core API (`open`, `Array::read` undecoded, served from the
//! files by an in-memory `HttpClient`), then decoded with `Array::decode` pass after pass until
//! at least 300 MiB of output; the median pass is reported. Copies of the payloads are made
//! before each pass, outside the timing. The output is checked against the generator's checksum.
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use futures_executor::block_on;
use serde_json::Value;
use shardfetch::core::open::{open, OpenOptions, Opened};
use shardfetch::core::read::plan::Want;
use shardfetch::core::read::Got;
use shardfetch::core::transport::{HttpClient, Method, Request, Response};
use shardfetch::core::{Error, ErrorCode, Result};

/// Serves `file://`-less URLs `mem:/<path>` from a directory, with single byte ranges.
struct Files(PathBuf);

impl HttpClient for Files {
    async fn send(&self, req: Request<'_>) -> Result<Response> {
        let path = self.0.join(req.url.trim_start_matches("mem:/"));
        let Ok(body) = fs::read(&path) else { return Ok(Response { status: 404, ..Response::default() }) };
        let n = body.len() as u64;
        let (a, b) = match req.range.as_deref().and_then(|r| r.strip_prefix("bytes=")) {
            None => (0, n),
            Some(r) => {
                let (x, y) = r.split_once('-').ok_or_else(|| Error::new(ErrorCode::Network, "bad range"))?;
                if x.is_empty() {
                    (n.saturating_sub(y.parse().unwrap_or(0)), n)
                } else {
                    let a: u64 = x.parse().unwrap_or(0);
                    (a, y.parse::<u64>().map(|e| (e + 1).min(n)).unwrap_or(n))
                }
            }
        };
        let partial = req.range.is_some();
        Ok(Response {
            retry_after: None,
            status: if partial { 206 } else { 200 },
            content_range: partial.then(|| format!("bytes {}-{}/{n}", a, b - 1)),
            content_length: Some(b - a),
            body: if req.method == Method::Head { Vec::new() } else { body[a as usize..b as usize].to_vec() },
            ..Default::default()
        })
    }
}

/// The checksum of bench/generate.py over raw-bit words of `size` bytes.
fn checksum(bytes: &[u8], size: usize) -> (u32, u32) {
    let (mut h, mut s, mut k) = (0u32, 0u32, 1u32);
    for w in bytes.chunks_exact(size) {
        let x = match size {
            1 => w[0] as u32,
            2 => u16::from_le_bytes([w[0], w[1]]) as u32,
            _ => u32::from_le_bytes([w[0], w[1], w[2], w[3]]),
        };
        h = h.wrapping_add(x.wrapping_mul(k));
        s = s.wrapping_add(x);
        k = if k == 65521 { 1 } else { k + 1 };
    }
    (h, s)
}

fn grid(shape: &[u64], chunk: &[u64]) -> Vec<Vec<u64>> {
    let g: Vec<u64> = shape.iter().zip(chunk).map(|(n, c)| n.div_ceil(*c)).collect();
    let total: u64 = g.iter().product();
    let mut out = Vec::new();
    let mut idx = vec![0u64; g.len()];
    for _ in 0..total {
        out.push(idx.clone());
        for d in (0..g.len()).rev() {
            idx[d] += 1;
            if idx[d] < g[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

fn run(dir: &Path) -> std::result::Result<(), String> {
    let info: Value = serde_json::from_slice(&fs::read(dir.join("bench.json")).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let u64s = |k: &str| -> Vec<u64> {
        info[k].as_array().map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default()
    };
    let (shape, chunk) = (u64s("shape"), u64s("chunkShape"));
    let size = match info["dtype"].as_str() {
        Some("uint8") => 1,
        Some("uint16") => 2,
        _ => 4,
    };
    let client = Files(dir.to_path_buf());
    let arr = match block_on(open(&client, "mem:", OpenOptions::default())).map_err(|e| e.message)? {
        Opened::Array(a) => a,
        Opened::Group(_) => return Err("a group".into()),
    };
    let coords = grid(&shape, &chunk);
    let mut payloads: Vec<Vec<u8>> = vec![Vec::new(); coords.len()];
    let mut failed = None;
    let plan = arr.plan(Want::Chunks(&coords)).map_err(|e| e.message)?;
    block_on(arr.read(&client, &plan, false, |i, got| {
        match got {
            Ok(Got::Encoded(b)) => payloads[i] = b,
            Ok(_) => failed = Some(format!("chunk {i} absent")),
            Err(e) => failed = Some(e.message),
        }
        Ok(())
    }))
    .map_err(|e| e.message)?;
    if let Some(f) = failed {
        return Err(f);
    }
    let stored: usize = payloads.iter().map(Vec::len).sum();
    let decoded = info["decodedBytes"].as_u64().unwrap_or(0) as f64;
    let passes = ((300.0 * 1048576.0 / decoded).ceil() as usize).max(5);
    let mut times = Vec::new();
    let mut tiles = 0u32;
    for pass in 0..passes {
        let copies = payloads.clone();
        let t = Instant::now();
        let out: Vec<_> = copies.into_iter().zip(&coords).map(|(b, c)| arr.decode(c, b)).collect();
        times.push(t.elapsed().as_secs_f64());
        if pass == 0 {
            for (c, d) in out.into_iter().enumerate() {
                let d = d.map_err(|e| e.message)?;
                let (h, s) = checksum(&d.bytes, size);
                tiles = tiles.wrapping_add(h.wrapping_mul(c as u32 + 1)).wrapping_add(s);
            }
        }
    }
    let want = info["tiles"].as_u64().unwrap_or(0) as u32;
    if tiles != want {
        return Err(format!("wrong data: tiles checksum {tiles}, generator's {want}"));
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let med = times[times.len() / 2];
    let mib = decoded / 1048576.0;
    println!(
        "{:<14} {:>5} chunks  {:>7.1} MiB stored  {:>3} passes  median {:>7.1} ms/pass  {:>7.0} MiB/s decoded  (min {:.1} ms, max {:.1} ms)",
        info["name"].as_str().unwrap_or("?"),
        coords.len(),
        stored as f64 / 1048576.0,
        passes,
        med * 1e3,
        mib / med,
        times[0] * 1e3,
        times[times.len() - 1] * 1e3,
    );
    Ok(())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/data");
    let mut dirs: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if dirs.is_empty() {
        dirs = ["u16_zstd", "u16_gzip", "u16_blosc_zstd", "u16_blosc_lz4", "u16_raw", "u8_3d_zstd"]
            .iter()
            .map(|d| root.join(d))
            .collect();
    }
    let mut status = 0;
    for d in dirs {
        if let Err(e) = run(&d) {
            eprintln!("{}: {e} (run `npm run bench` or `python bench/generate.py` first)", d.display());
            status = 1;
        }
    }
    std::process::exit(status);
}

//! blosc1 frames and numcodecs' standalone compressors, against the bytes numcodecs wrote
//! (tests/fixtures/generate_blosc_vectors.py), plus corrupted copies of them that must come back
//! as typed errors, without a panic and without allocating past the caller's limit.
#![cfg(not(target_arch = "wasm32"))]

use cap::Cap;
use serde_json::Value;
use shardfetch::core::codec::{blosc, gzip, lz4, zlib, zstd};
use shardfetch::core::{ErrorCode, Result};
use std::alloc::System;
use std::path::PathBuf;
use std::sync::Mutex;

/// Counts live heap bytes so the corruption test can cap what one decode may allocate.
#[global_allocator]
static ALLOC: Cap<System> = Cap::new(System, usize::MAX);

/// The tests of this binary run one at a time: the allocation cap is process-wide.
static SERIAL: Mutex<()> = Mutex::new(());

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/data/blosc_vectors")
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn vectors() -> Value {
    serde_json::from_slice(&read("vectors.json")).expect("vectors.json")
}

fn list<'a>(v: &'a Value, key: &str) -> &'a Vec<Value> {
    v[key].as_array().unwrap_or_else(|| panic!("vectors.json: no {key} list"))
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("missing {key} in {v}"))
}

/// The decoder numcodecs' `compressor` id maps to.
fn standalone(codec: &str) -> fn(&[u8], usize) -> Result<Vec<u8>> {
    match codec {
        "lz4" => lz4::numcodecs_lz4,
        "zlib" => zlib::unzlib,
        "gzip" => gzip::gunzip,
        "zstd" => zstd::unzstd,
        other => panic!("no decoder for {other}"),
    }
}

#[test]
fn decodes_every_numcodecs_blosc_frame() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let v = vectors();
    let mut n = 0;
    for case in list(&v, "blosc") {
        let name = s(case, "name");
        let frame = read(s(case, "file"));
        let raw = read(s(case, "raw"));
        let h = blosc::header(&frame).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = &case["header"];
        assert_eq!(u64::from(h.nbytes), want["nbytes"].as_u64().unwrap(), "{name}");
        assert_eq!(u64::from(h.blocksize), want["blocksize"].as_u64().unwrap(), "{name}");
        assert_eq!(u64::from(h.flags), want["flags"].as_u64().unwrap(), "{name}");
        let got = blosc::decode(&frame, raw.len()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(got == raw, "{name}: decoded bytes differ from numcodecs' input");
        // A larger limit changes nothing; a smaller one is refused.
        assert!(blosc::decode(&frame, raw.len() + 100).unwrap() == raw, "{name}");
        if !raw.is_empty() {
            let e = blosc::decode(&frame, raw.len() - 1).unwrap_err();
            assert_eq!(e.code, ErrorCode::CorruptChunk, "{name}: {e}");
        }
        // Bytes after `cbytes` are ignored, as c-blosc does.
        let mut longer = frame.clone();
        longer.extend_from_slice(b"trailing");
        assert!(blosc::decode(&longer, raw.len()).unwrap() == raw, "{name}");
        n += 1;
    }
    assert!(n >= 100, "only {n} blosc vectors ran");
    println!("{n} blosc frames decoded");
}

#[test]
fn vectors_cover_the_frame_features() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let v = vectors();
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for case in list(&v, "blosc") {
        for f in case["features"].as_array().unwrap() {
            *seen.entry(f.as_str().unwrap().to_string()).or_default() += 1;
        }
    }
    for f in [
        "format_blosclz",
        "format_lz4",
        "format_zlib",
        "format_zstd",
        "memcpyed",
        "empty",
        "multi_block",
        "leftover_block",
        "split",
        "unsplit_block",
        "dont_split_flag",
        "raw_stream",
        "compressed_stream",
        "byte_shuffle",
        "bitshuffle",
        "bitshuffle_skipped_block",
        "partial_element",
        "blosclz_far_match",
        "blosclz_run",
    ] {
        assert!(seen.contains_key(f), "no vector has {f} (found {seen:?})");
    }
}

#[test]
fn decodes_numcodecs_standalone_compressors() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let v = vectors();
    let mut n = 0;
    for case in list(&v, "standalone") {
        let name = s(case, "name");
        let data = read(s(case, "file"));
        let raw = read(s(case, "raw"));
        let decode = standalone(s(case, "codec"));
        let got = decode(&data, raw.len()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(got == raw, "{name}: decoded bytes differ from numcodecs' input");
        if !raw.is_empty() {
            match decode(&data, raw.len() - 1) {
                // Every codec says the data holds more than the limit.
                Err(e) => {
                    assert_eq!(e.code, ErrorCode::CorruptChunk, "{name}: {e}");
                    let limit = (raw.len() - 1).to_string();
                    assert!(e.message.contains(&limit), "{name}: {e}");
                }
                Ok(_) => panic!("{name}: accepted a limit below its size"),
            }
        }
        n += 1;
    }
    assert!(n >= 8, "only {n} standalone vectors ran");
}

#[test]
fn lying_sizes_are_refused_before_allocating() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let v = vectors();
    let case = list(&v, "blosc").iter().find(|c| c["name"] == "lz4_shuffle_ts4").expect("lz4_shuffle_ts4");
    let mut frame = read(s(case, "file"));
    frame[4..8].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let base = ALLOC.allocated();
    ALLOC.set_limit(base + (1 << 20)).unwrap();
    let r = blosc::decode(&frame, 4096);
    ALLOC.set_limit(usize::MAX).unwrap();
    assert_eq!(r.unwrap_err().code, ErrorCode::CorruptChunk);
    // numcodecs' LZ4 size prefix.
    let mut lz = read("nc_lz4_acc1.lz4");
    lz[..4].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    assert_eq!(lz4::numcodecs_lz4(&lz, 6000).unwrap_err().code, ErrorCode::CorruptChunk);
}

/// xorshift64*: a fixed, portable pseudo-random sequence.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One corrupted copy of `data`: flipped bytes (often in the header and offset table), a cut,
/// an extension, or a header field set to an extreme.
fn mutate(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut d = data.to_vec();
    match rng.below(7) {
        0 | 1 => {
            for _ in 0..1 + rng.below(4) {
                if d.is_empty() {
                    break;
                }
                let at = if rng.below(2) == 0 { rng.below(d.len().min(48)) } else { rng.below(d.len()) };
                d[at] ^= 1 << rng.below(8);
            }
        }
        2 => d.truncate(rng.below(d.len() + 1)),
        3 => {
            for _ in 0..1 + rng.below(64) {
                d.push(rng.next() as u8);
            }
        }
        4 => {
            // A 32-bit field of the header or the offset table set to an edge value.
            if d.len() >= 24 {
                let at = 4 + 4 * rng.below((d.len().min(64) - 4) / 4);
                let edge = [0u32, 1, 15, 16, 0x7fff_ffff, 0x8000_0000, u32::MAX, (d.len() as u32) - 1];
                let value = edge[rng.below(edge.len())];
                d[at..at + 4].copy_from_slice(&value.to_le_bytes());
            }
        }
        5 => {
            // Another typesize or flag byte.
            if d.len() > 3 {
                let at = 2 + rng.below(2);
                d[at] = rng.next() as u8;
            }
        }
        _ => {
            // A run of random bytes somewhere in the body.
            if !d.is_empty() {
                let at = rng.below(d.len());
                let end = (at + 1 + rng.below(32)).min(d.len());
                for b in &mut d[at..end] {
                    *b = rng.next() as u8;
                }
            }
        }
    }
    d
}

/// Run `decode` with the heap capped at what is live now plus `budget` bytes: a decoder that
/// allocated more would abort the process.
fn capped<T>(budget: usize, decode: impl FnOnce() -> T) -> T {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        // Report a panic (which allocates) with the cap lifted.
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = ALLOC.set_limit(usize::MAX);
            default(info);
        }));
    });
    let base = ALLOC.allocated();
    ALLOC.set_limit(base + budget).unwrap();
    let r = decode();
    ALLOC.set_limit(usize::MAX).unwrap();
    r
}

fn check_typed(name: &str, r: Result<Vec<u8>>, limit: usize) -> bool {
    match r {
        Ok(out) => {
            assert!(out.len() <= limit, "{name}: {} bytes decoded past the {limit}-byte limit", out.len());
            true
        }
        Err(e) => {
            assert!(
                matches!(
                    e.code,
                    ErrorCode::CorruptChunk
                        | ErrorCode::ChecksumMismatch
                        | ErrorCode::TooLarge
                        | ErrorCode::UnsupportedCodec
                ),
                "{name}: untyped error {e}"
            );
            assert!(!e.message.is_empty(), "{name}: error without a message");
            false
        }
    }
}

#[test]
fn corrupted_inputs_give_typed_errors_within_the_limit() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let v = vectors();
    let mut rng = Rng(0x5EED_B105_C0DE_2024);
    let (mut runs, mut ok) = (0usize, 0usize);
    // Budget per decode: the output and one block of scratch (each at most the limit) plus
    // room for the inner decoders' tables and zstd's window (at most 1 MiB in blosc streams,
    // 8 MiB for a standalone zstd frame, which ruzstd rounds up to a power of two).
    let budget = |limit: usize| 2 * limit + (4 << 20);
    let standalone_budget = |limit: usize| 2 * limit + (20 << 20);
    // More rounds for a longer local run: BLOSC_FUZZ_ROUNDS=2000 cargo test --release --test blosc
    let rounds: usize = std::env::var("BLOSC_FUZZ_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(60);
    for case in list(&v, "blosc") {
        let frame = read(s(case, "file"));
        let limit = case["nbytes"].as_u64().unwrap() as usize;
        for i in 0..rounds {
            let bad = mutate(&mut rng, &frame);
            let lim = if i % 5 == 0 { limit * 4 + 64 } else { limit };
            let r = capped(budget(lim), || blosc::decode(&bad, lim));
            ok += check_typed(s(case, "name"), r, lim) as usize;
            runs += 1;
        }
    }
    for case in list(&v, "standalone") {
        let data = read(s(case, "file"));
        let limit = case["nbytes"].as_u64().unwrap() as usize;
        let decode = standalone(s(case, "codec"));
        for _ in 0..rounds {
            let bad = mutate(&mut rng, &data);
            let r = capped(standalone_budget(limit), || decode(&bad, limit));
            ok += check_typed(s(case, "name"), r, limit) as usize;
            runs += 1;
        }
    }
    assert!(runs >= 100 * rounds, "only {runs} corrupted inputs ran");
    println!("{runs} corrupted inputs: {ok} decoded, {} typed errors", runs - ok);
}

//! Raw deflate, zlib (RFC 1950) and gzip (RFC 1952) streams inflated into a bounded buffer
//! (zune-inflate, through `shardfetch-kernels`), shared by `gzip`,
//! `zlib` and blosc's zlib streams.
use crate::core::error::{err, Error, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

/// Raw deflate (or zlib, with its Adler-32 checked) inflated to at most `limit` bytes, into a
/// buffer first sized `hint` (probed with a fallible reservation: the decoder's own allocation
/// cannot fail gracefully).
pub(crate) fn inflate(data: &[u8], zlib: bool, limit: usize, hint: usize) -> Result<Vec<u8>> {
    let mut probe: Vec<u8> = Vec::new();
    if probe.try_reserve_exact(hint).is_err() {
        return err(ErrorCode::TooLarge, format!("cannot allocate {hint} bytes"));
    }
    drop(probe);
    let out = shardfetch_kernels::inflate::inflate(data, zlib, limit, hint)
        .map_err(|e| Error::new(ErrorCode::CorruptChunk, format!("{e:?} (or larger than {limit} bytes)")))?;
    if out.len() > limit {
        return err(ErrorCode::CorruptChunk, format!("inflates to more than {limit} bytes"));
    }
    Ok(out)
}

/// A single-member gzip stream (RFC 1952), inflated to at most `limit` bytes.
pub fn gunzip(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    let bad = |why: &str| err(ErrorCode::CorruptChunk, format!("gzip: {why}"));
    if is_zlib(data) {
        // Some writers (z5) put zlib streams under "gzip"; pako-based readers decode by header.
        return unzlib(data, limit);
    }
    if data.len() < 18 || data[0] != 0x1f || data[1] != 0x8b || data[2] != 8 {
        return bad("not a gzip stream");
    }
    let flags = data[3];
    let mut pos = 10usize;
    if flags & FEXTRA != 0 {
        let n = match data.get(pos..pos + 2) {
            Some(b) => u16::from_le_bytes([b[0], b[1]]) as usize,
            None => return bad("truncated header"),
        };
        pos += 2 + n;
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            match data.get(pos..).and_then(|d| d.iter().position(|&b| b == 0)) {
                Some(z) => pos += z + 1,
                None => return bad("truncated header"),
            }
        }
    }
    if flags & FHCRC != 0 {
        pos += 2;
    }
    if pos + 8 > data.len() {
        return bad("truncated stream");
    }
    let body = &data[pos..data.len() - 8];
    let t = &data[data.len() - 4..];
    let isize = u32::from_le_bytes([t[0], t[1], t[2], t[3]]) as usize;
    // The trailer's length (mod 2^32) sizes the output; a lying trailer fails the check below.
    let out = inflate(body, false, limit, isize.min(limit)).map_err(|e| e.at("gzip"))?;
    if isize as u32 != out.len() as u32 {
        return bad("length in the trailer does not match");
    }
    let c = &data[data.len() - 8..data.len() - 4];
    let stored = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    let actual = crate::core::crc::crc32(&out);
    if stored != actual {
        return err(
            ErrorCode::ChecksumMismatch,
            format!("gzip: CRC-32 mismatch: stored {stored:#010x}, computed {actual:#010x}"),
        );
    }
    Ok(out)
}

/// A zlib stream (RFC 1950, numcodecs' `Zlib`), inflated to at most `limit` bytes; the Adler-32
/// trailer is checked.
pub fn unzlib(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    if data.starts_with(&[0x1f, 0x8b, 8]) {
        // A gzip stream under "zlib": decoded by its header, as pako-based readers do.
        return gunzip(data, limit);
    }
    // The output's size is known only as a limit (for variable-length elements, maxDecodedBytes):
    // the buffer starts at a few times the input and grows, rather than at the limit.
    let hint = limit.min(data.len().saturating_mul(4).max(64 << 10));
    inflate(data, true, limit, hint).map_err(|e| e.at("zlib"))
}

/// Whether `data` starts with a zlib header (RFC 1950: deflate, a window of at most 32 KiB,
/// the header's check bits right).
pub fn is_zlib(data: &[u8]) -> bool {
    match data {
        [cmf, flg, ..] => cmf & 0x0f == 8 && cmf >> 4 <= 7 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::zlib::unzlib_into;
    use super::{gunzip, is_zlib, unzlib};
    use alloc::vec::Vec;

    /// A seeded xorshift64.
    fn xorshift(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Image-like bytes: runs, ramps and noise.
    fn sample(n: usize, seed: u64) -> Vec<u8> {
        let mut next = xorshift(seed);
        let mut v = Vec::with_capacity(n);
        while v.len() < n {
            let r = next();
            let len = (r % 300) as usize + 1;
            match r >> 60 {
                0..=5 => v.extend(core::iter::repeat_n((r >> 8) as u8, len)),
                6..=10 => v.extend((0..len).map(|i| (i as u8).wrapping_add((r >> 16) as u8))),
                _ => v.extend((0..len).map(|_| next() as u8)),
            }
        }
        v.truncate(n);
        v
    }

    fn gzip_wrap(deflated: &[u8], data: &[u8]) -> Vec<u8> {
        let mut g = alloc::vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
        g.extend_from_slice(deflated);
        g.extend_from_slice(&crate::core::crc::crc32(data).to_le_bytes());
        g.extend_from_slice(&(data.len() as u32).to_le_bytes());
        g
    }

    /// A zlib stream under `gzip` and a gzip stream under `zlib` decode by their header.
    #[test]
    fn gzip_and_zlib_are_told_by_their_header() {
        let data = sample(10_000, 3);
        let z = miniz_oxide::deflate::compress_to_vec_zlib(&data, 6);
        let g = gzip_wrap(&miniz_oxide::deflate::compress_to_vec(&data, 6), &data);
        assert_eq!(gunzip(&z, data.len()).unwrap(), data);
        assert_eq!(unzlib(&g, data.len()).unwrap(), data);
        assert!(!is_zlib(&g));
    }

    /// Streams written by an independent encoder (miniz_oxide, every level, stored blocks
    /// included) inflate to what was written.
    #[test]
    fn inflate_matches_an_independent_encoder() {
        for (k, n) in [0usize, 1, 100, 4096, 65_535, 65_536, 200_000].into_iter().enumerate() {
            let data = sample(n, 7 + k as u64);
            for level in 0..=10u8 {
                let raw = miniz_oxide::deflate::compress_to_vec(&data, level);
                assert_eq!(gunzip(&gzip_wrap(&raw, &data), n).unwrap(), data, "gzip n={n} level={level}");
                let z = miniz_oxide::deflate::compress_to_vec_zlib(&data, level);
                assert_eq!(unzlib(&z, n).unwrap(), data, "zlib n={n} level={level}");
                let mut exact = alloc::vec![0u8; n];
                unzlib_into(&z, &mut exact).unwrap();
                assert_eq!(exact, data);
                if n > 0 {
                    let e = unzlib(&z, n - 1).unwrap_err();
                    assert_eq!(e.code, crate::core::error::ErrorCode::CorruptChunk, "n={n} level={level}: {e}");
                    assert!(
                        e.message.contains(&alloc::format!("{} bytes", n - 1)),
                        "zlib over its limit, n={n} level={level}: {e}"
                    );
                }
            }
        }
    }

    /// Damaged streams (bytes flipped, cut, spliced) give errors or bounded output, never a
    /// panic. (A longer run of this loop, 2 M mutations, is in the commit that added it.)
    #[test]
    fn inflate_survives_damaged_streams() {
        let rounds: usize = option_env!("SHARDFETCH_FUZZ_ROUNDS").and_then(|v| v.parse().ok()).unwrap_or(3000);
        let data = sample(50_000, 99);
        let streams = [
            gzip_wrap(&miniz_oxide::deflate::compress_to_vec(&data, 6), &data),
            gzip_wrap(&miniz_oxide::deflate::compress_to_vec(&data, 0), &data),
            miniz_oxide::deflate::compress_to_vec_zlib(&data, 9),
        ];
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for round in 0..rounds {
            let (k, r) = (round % streams.len(), next());
            let mut s = streams[k].clone();
            let at = (r as usize >> 8) % s.len();
            match r % 4 {
                0 => s[at] ^= 1 << ((r >> 40) % 8),
                1 => s.truncate(at),
                2 => s[at] = (r >> 32) as u8,
                _ => {
                    let from = (r as usize >> 24) % s.len();
                    let piece: Vec<u8> = s[from..(from + 64).min(s.len())].to_vec();
                    s.splice(at..at, piece);
                }
            }
            let limit = data.len();
            let got = if k == 2 { unzlib(&s, limit) } else { gunzip(&s, limit) };
            if let Ok(out) = got {
                assert!(out.len() <= limit, "round {round}: {} bytes past the limit", out.len());
            }
        }
    }
}

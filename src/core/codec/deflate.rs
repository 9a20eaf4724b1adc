//! Raw deflate and zlib inflation into a bounded buffer (zune-inflate), shared by `gzip`,
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
    let options = zune_inflate::DeflateOptions::default().set_limit(limit).set_size_hint(hint);
    let mut d = zune_inflate::DeflateDecoder::new_with_options(data, options);
    let r = if zlib { d.decode_zlib() } else { d.decode_deflate() };
    let out =
        r.map_err(|e| Error::new(ErrorCode::CorruptChunk, format!("{:?} (or larger than {limit} bytes)", e.error)))?;
    // The decoder checks its limit between blocks and matches: a stored block may overshoot it.
    if out.len() > limit {
        return err(ErrorCode::CorruptChunk, format!("inflates to more than {limit} bytes"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::gzip::gunzip;
    use super::super::zlib::{unzlib, unzlib_into};
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
        g.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
        g.extend_from_slice(&(data.len() as u32).to_le_bytes());
        g
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
                    assert!(unzlib(&z, n - 1).is_err(), "zlib over its limit, n={n} level={level}");
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

//! gzip, zlib, zstd, LZ4 and crc32c, each decoding into a bounded buffer (sizes come from the
//! network). The `*_into` forms fill an exact-size slice, for blosc's streams.
use crate::core::error::{err, Error, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

/// An empty buffer of `n` bytes, or `TooLarge` if the allocation fails.
pub(crate) fn zeroed(n: usize) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        return err(ErrorCode::TooLarge, format!("cannot allocate {n} bytes"));
    }
    v.resize(n, 0);
    Ok(v)
}

/// A single-member gzip stream (RFC 1952), inflated to at most `limit` bytes.
pub fn gunzip(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    let bad = |why: &str| err(ErrorCode::CorruptChunk, format!("gzip: {why}"));
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
    Ok(out)
}

/// Raw deflate (or zlib, with its Adler-32 checked) inflated to at most `limit` bytes, into a
/// buffer first sized `hint` (probed with a fallible reservation: the decoder's own allocation
/// cannot fail gracefully).
fn inflate(data: &[u8], zlib: bool, limit: usize, hint: usize) -> Result<Vec<u8>> {
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

/// A zlib stream (RFC 1950, numcodecs' `Zlib`), inflated to at most `limit` bytes; the Adler-32
/// trailer is checked.
pub fn unzlib(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    inflate(data, true, limit, limit).map_err(|e| e.at("zlib"))
}

/// A zlib stream that must inflate to exactly `out.len()` bytes.
pub(crate) fn unzlib_into(data: &[u8], out: &mut [u8]) -> Result<()> {
    let want = out.len();
    let got = unzlib(data, want)?;
    if got.len() != want {
        return err(ErrorCode::CorruptChunk, format!("zlib: inflated {} bytes, expected {want}", got.len()));
    }
    out.copy_from_slice(&got);
    Ok(())
}

/// numcodecs' `LZ4` codec: the uncompressed size as 4 bytes little-endian, then one LZ4 block.
pub fn numcodecs_lz4(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    let (size, block) = match data {
        [a, b, c, d, block @ ..] => (u32::from_le_bytes([*a, *b, *c, *d]), block),
        _ => return err(ErrorCode::CorruptChunk, "lz4: shorter than its 4-byte size prefix"),
    };
    // numcodecs reads the prefix as a C int
    if size > i32::MAX as u32 {
        return err(ErrorCode::CorruptChunk, format!("lz4: invalid size prefix {size}"));
    }
    let size = size as usize;
    if size > limit {
        return err(ErrorCode::CorruptChunk, format!("lz4: size prefix {size} exceeds the {limit}-byte limit"));
    }
    let mut out = zeroed(size)?;
    unlz4_into(block, &mut out)?;
    Ok(out)
}

/// One LZ4 block (no frame) that must decode to exactly `out.len()` bytes.
pub(crate) fn unlz4_into(block: &[u8], out: &mut [u8]) -> Result<()> {
    let want = out.len();
    match lz4_flex::block::decompress_into(block, out) {
        Ok(n) if n == want => Ok(()),
        Ok(n) => err(ErrorCode::CorruptChunk, format!("lz4: decoded {n} bytes, expected {want}")),
        Err(e) => err(ErrorCode::CorruptChunk, format!("lz4: {e} (expected {want} bytes)")),
    }
}

/// zstd windows always allowed, whatever the output size: the largest non-"ultra" levels use.
const ZSTD_WINDOW_FLOOR: u64 = 8 << 20;

/// Check, before decoding, the window of every zstd frame in `data` against `max_window`:
/// ruzstd allocates the window a frame header claims (up to 100 MiB) before decoding a byte,
/// and panics if that allocation fails. Walks frame and block headers only.
#[cfg(not(feature = "zstd-c"))]
fn zstd_windows_within(mut data: &[u8], max_window: u64) -> Result<()> {
    let truncated = || Error::new(ErrorCode::CorruptChunk, "zstd: truncated frame");
    let le = |b: &[u8], at: usize, n: usize| -> Result<u64> {
        let s = b.get(at..at + n).ok_or_else(truncated)?;
        Ok(s.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
    };
    while !data.is_empty() {
        let magic = le(data, 0, 4)?;
        let mut pos = if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
            // skippable frame
            le(data, 4, 4)?.checked_add(8).ok_or_else(truncated)?
        } else if magic == 0xFD2F_B528 {
            let fhd = le(data, 4, 1)? as u8;
            let single = fhd & 0x20 != 0;
            let mut pos = 5usize;
            let mut window = 0u64;
            if !single {
                let wd = le(data, pos, 1)?;
                pos += 1;
                let base = 1u64 << (10 + (wd >> 3));
                window = base + base / 8 * (wd & 7);
            }
            pos += [0, 1, 2, 4][usize::from(fhd & 3)];
            let fcs_len = [usize::from(single), 2, 4, 8][usize::from(fhd >> 6)];
            let mut fcs = le(data, pos, fcs_len)?;
            if fcs_len == 2 {
                fcs += 256;
            }
            pos += fcs_len;
            if single {
                window = fcs;
            }
            if window > max_window {
                return err(
                    ErrorCode::TooLarge,
                    format!("zstd: a frame needs a {window}-byte window, more than the {max_window} allowed here"),
                );
            }
            loop {
                let h = le(data, pos, 3)?;
                pos += 3;
                pos += match (h >> 1) & 3 {
                    1 => 1,
                    3 => return err(ErrorCode::CorruptChunk, "zstd: reserved block type"),
                    _ => (h >> 3) as usize,
                };
                if h & 1 != 0 {
                    break;
                }
            }
            if fhd & 0x04 != 0 {
                pos += 4;
            }
            pos as u64
        } else {
            return err(ErrorCode::CorruptChunk, "zstd: not a zstd frame");
        };
        if pos > data.len() as u64 {
            return Err(truncated());
        }
        pos = pos.min(data.len() as u64);
        data = &data[pos as usize..];
    }
    Ok(())
}

/// A zstd decoder, kept for several streams (blosc's). With the `zstd-c` feature the reference
/// C zstd (3.2-3.4x ruzstd's speed in wasm, BENCHMARKS.md) decodes one-shot into the bounded
/// output, which is its window, so no frame header can make it allocate. Without it, ruzstd
/// (pure Rust), which allocates whatever window a frame header claims before decoding: frames
/// whose window exceeds the output (at least `floor`) are refused first.
pub(crate) struct Zstd {
    #[cfg(feature = "zstd-c")]
    d: zstd_safe::DCtx<'static>,
    #[cfg(not(feature = "zstd-c"))]
    d: ruzstd::decoding::FrameDecoder,
}

impl Zstd {
    pub(crate) fn new() -> Zstd {
        #[cfg(feature = "zstd-c")]
        return Zstd { d: zstd_safe::DCtx::create() };
        #[cfg(not(feature = "zstd-c"))]
        return Zstd { d: ruzstd::decoding::FrameDecoder::new() };
    }

    /// Decode `data` (one or more frames) into `out`'s spare capacity.
    #[cfg(feature = "zstd-c")]
    fn decode(&mut self, data: &[u8], out: &mut Vec<u8>, _floor: u64) -> Result<()> {
        self.d.decompress(out, data).map(|_| ()).map_err(|code| {
            let why = zstd_safe::get_error_name(code);
            crate::core::Error::new(ErrorCode::CorruptChunk, format!("zstd: {why} (limit {} bytes)", out.capacity()))
        })
    }

    #[cfg(not(feature = "zstd-c"))]
    fn decode(&mut self, data: &[u8], out: &mut Vec<u8>, floor: u64) -> Result<()> {
        let limit = out.capacity();
        zstd_windows_within(data, (limit as u64).max(floor))?;
        self.d
            .decode_all_to_vec(data, out)
            .map_err(|e| crate::core::Error::new(ErrorCode::CorruptChunk, format!("zstd: {e} (limit {limit} bytes)")))
    }

    /// Frames that must decode to exactly `out.len()` bytes. c-blosc writes single-segment
    /// frames whose window is the stream's size.
    pub(crate) fn decode_exact(&mut self, data: &[u8], out: &mut [u8]) -> Result<()> {
        let want = out.len();
        #[cfg(feature = "zstd-c")]
        let n = self.d.decompress(out, data).map_err(|code| {
            let why = zstd_safe::get_error_name(code);
            crate::core::Error::new(ErrorCode::CorruptChunk, format!("zstd: {why} (expected {want} bytes)"))
        })?;
        #[cfg(not(feature = "zstd-c"))]
        let n = {
            zstd_windows_within(data, (want as u64).max(1 << 20))?;
            self.d.decode_all(data, out).map_err(|e| {
                crate::core::Error::new(ErrorCode::CorruptChunk, format!("zstd: {e} (expected {want} bytes)"))
            })?
        };
        if n != want {
            return err(ErrorCode::CorruptChunk, format!("zstd: decoded {n} bytes, expected {want}"));
        }
        Ok(())
    }
}

/// One or more zstd frames, decoded to at most `limit` bytes.
pub fn unzstd(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    if out.try_reserve_exact(limit).is_err() {
        return err(ErrorCode::TooLarge, format!("cannot allocate {limit} bytes"));
    }
    Zstd::new().decode(data, &mut out, ZSTD_WINDOW_FLOOR)?;
    Ok(out)
}

/// Verify and strip a trailing CRC-32C (little-endian).
pub fn strip_crc32c(mut data: Vec<u8>) -> Result<Vec<u8>> {
    if data.len() < 4 {
        return err(ErrorCode::CorruptChunk, "crc32c: shorter than its checksum");
    }
    let n = data.len() - 4;
    verify_crc32c(&data[..n], &data[n..])?;
    data.truncate(n);
    Ok(data)
}

pub fn verify_crc32c(data: &[u8], stored: &[u8]) -> Result<()> {
    let stored = u32::from_le_bytes([stored[0], stored[1], stored[2], stored[3]]);
    let actual = crc32c::crc32c(data);
    if stored != actual {
        return err(
            ErrorCode::ChecksumMismatch,
            format!("crc32c mismatch: stored {stored:#010x}, computed {actual:#010x}"),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_known_vector() {
        // RFC 3720 test vector: 32 bytes of zeros.
        assert_eq!(crc32c::crc32c(&[0u8; 32]), 0x8a9136aa);
        let mut v = alloc::vec![1u8, 2, 3];
        v.extend_from_slice(&crc32c::crc32c(&[1, 2, 3]).to_le_bytes());
        assert_eq!(strip_crc32c(v.clone()).unwrap(), [1, 2, 3]);
        v[0] ^= 1;
        assert_eq!(strip_crc32c(v).unwrap_err().code, ErrorCode::ChecksumMismatch);
    }

    #[test]
    fn gzip_rejects_garbage_and_bombs() {
        assert_eq!(gunzip(b"not gzip at all, clearly", 100).unwrap_err().code, ErrorCode::CorruptChunk);
        // `python3 -c "import gzip,sys; sys.stdout.buffer.write(gzip.compress(b'a'*1000, mtime=0))"`
        let gz: [u8; 29] = [
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0x4c, 0x1c, 0x05, 0xa3, 0x60, 0x14, 0x0c,
            0x77, 0x00, 0x00, 0x03, 0xda, 0x38, 0x9a, 0xe8, 0x03, 0x00, 0x00,
        ];
        assert_eq!(gunzip(&gz, 1000).unwrap(), [b'a'; 1000]);
        assert!(gunzip(&gz, 999).is_err());
    }

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

    fn gzip_wrap(deflated: &[u8], len: usize) -> Vec<u8> {
        let mut g = alloc::vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
        g.extend_from_slice(deflated);
        g.extend_from_slice(&[0, 0, 0, 0]); // CRC-32, not checked
        g.extend_from_slice(&(len as u32).to_le_bytes());
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
                assert_eq!(gunzip(&gzip_wrap(&raw, n), n).unwrap(), data, "gzip n={n} level={level}");
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
            gzip_wrap(&miniz_oxide::deflate::compress_to_vec(&data, 6), data.len()),
            gzip_wrap(&miniz_oxide::deflate::compress_to_vec(&data, 0), data.len()),
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

    #[test]
    #[cfg(not(feature = "zstd-c"))]
    fn zstd_windows_are_bounded_before_decoding() {
        // Frame header without content size: window descriptor exponent 16 -> 64 MiB window,
        // then one empty raw block that is the last.
        let frame = |wd: u8| alloc::vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, wd, 0x01, 0x00, 0x00];
        assert_eq!(unzstd(&frame(16 << 3), 1000).unwrap_err().code, ErrorCode::TooLarge);
        assert_eq!(unzstd(&frame(10 << 3), 1000).unwrap(), [0u8; 0]); // 1 MiB window is fine
        let mut d = Zstd::new();
        let mut out = [0u8; 0];
        assert_eq!(d.decode_exact(&frame(11 << 3), &mut out).unwrap_err().code, ErrorCode::TooLarge);
        assert!(d.decode_exact(&frame(10 << 3), &mut out).is_ok());
        // Skippable frames are walked over; a truncated one is corrupt.
        let mut skip = alloc::vec![0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 9, 9];
        skip.extend_from_slice(&frame(16 << 3));
        assert_eq!(unzstd(&skip, 1000).unwrap_err().code, ErrorCode::TooLarge);
        assert_eq!(unzstd(&skip[..9], 1000).unwrap_err().code, ErrorCode::CorruptChunk);
    }

    #[test]
    fn zstd_rejects_garbage() {
        assert_eq!(unzstd(b"\x28\xb5\x2f\xfd garbage", 100).unwrap_err().code, ErrorCode::CorruptChunk);
    }
}

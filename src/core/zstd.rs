//! zstd decoding, bounded: the reference C library (feature `zstd-c`) or ruzstd. A foundation
//! module because two layers decode zstd: codecs (chunks) and storage (Icechunk's files).
//!
//! May import: `error`.
use crate::core::error::{err, Error, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

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
pub struct Zstd {
    #[cfg(feature = "zstd-c")]
    d: zstd_safe::DCtx<'static>,
    #[cfg(not(feature = "zstd-c"))]
    d: ruzstd::decoding::FrameDecoder,
}

impl Zstd {
    pub fn new() -> Zstd {
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
            Error::new(ErrorCode::CorruptChunk, format!("zstd: {why} (limit {} bytes)", out.capacity()))
        })
    }

    #[cfg(not(feature = "zstd-c"))]
    fn decode(&mut self, data: &[u8], out: &mut Vec<u8>, floor: u64) -> Result<()> {
        let limit = out.capacity();
        zstd_windows_within(data, (limit as u64).max(floor))?;
        self.d
            .decode_all_to_vec(data, out)
            .map_err(|e| Error::new(ErrorCode::CorruptChunk, format!("zstd: {e} (limit {limit} bytes)")))
    }

    /// Frames that must decode to exactly `out.len()` bytes. c-blosc writes single-segment
    /// frames whose window is the stream's size.
    pub fn decode_exact(&mut self, data: &[u8], out: &mut [u8]) -> Result<()> {
        let want = out.len();
        #[cfg(feature = "zstd-c")]
        let n = self.d.decompress(out, data).map_err(|code| {
            let why = zstd_safe::get_error_name(code);
            Error::new(ErrorCode::CorruptChunk, format!("zstd: {why} (expected {want} bytes)"))
        })?;
        #[cfg(not(feature = "zstd-c"))]
        let n = {
            zstd_windows_within(data, (want as u64).max(1 << 20))?;
            self.d
                .decode_all(data, out)
                .map_err(|e| Error::new(ErrorCode::CorruptChunk, format!("zstd: {e} (expected {want} bytes)")))?
        };
        if n != want {
            return err(ErrorCode::CorruptChunk, format!("zstd: decoded {n} bytes, expected {want}"));
        }
        Ok(())
    }
}

/// The decoded size a single zstd frame's header states (`None`: not stated, or more than one
/// frame, or not a frame).
fn frame_content_size(data: &[u8]) -> Option<u64> {
    let magic = u32::from_le_bytes(data.get(..4)?.try_into().ok()?);
    if magic != 0xFD2F_B528 {
        return None;
    }
    let fhd = *data.get(4)?;
    let single = fhd & 0x20 != 0;
    let mut pos = 5 + usize::from(!single) + [0, 1, 2, 4][usize::from(fhd & 3)];
    let fcs_len = [usize::from(single), 2, 4, 8][usize::from(fhd >> 6)];
    if fcs_len == 0 {
        return None;
    }
    let field = data.get(pos..pos + fcs_len)?;
    let mut n = field.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x));
    if fcs_len == 2 {
        n += 256;
    }
    pos += fcs_len;
    // Walk the blocks: another frame after this one would add to the size.
    loop {
        let h = data.get(pos..pos + 3)?;
        let h = u32::from(h[0]) | u32::from(h[1]) << 8 | u32::from(h[2]) << 16;
        pos += 3 + match (h >> 1) & 3 {
            1 => 1,
            _ => (h >> 3) as usize,
        };
        if h & 1 != 0 {
            break;
        }
    }
    if fhd & 0x04 != 0 {
        pos += 4;
    }
    (pos == data.len()).then_some(n)
}

/// One or more zstd frames, decoded to at most `limit` bytes.
pub fn unzstd(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    // A frame that states its decoded size (zarr-python's, numcodecs') needs only that much:
    // reserving the limit itself would ask for the worst case every time.
    let size = match frame_content_size(data) {
        Some(n) if n > limit as u64 => {
            return err(
                ErrorCode::CorruptChunk,
                format!("zstd: the frame holds {n} bytes, more than the {limit} expected"),
            )
        }
        Some(n) => n as usize,
        None => limit,
    };
    let mut out = Vec::new();
    if out.try_reserve_exact(size).is_err() {
        return err(ErrorCode::TooLarge, format!("cannot allocate {size} bytes"));
    }
    Zstd::new().decode(data, &mut out, ZSTD_WINDOW_FLOOR)?;
    Ok(out)
}

/// One or more zstd frames that may not state their decoded size (a streaming encoder's, as
/// Icechunk's files are), decoded into a buffer grown by doubling up to `limit` bytes: what is
/// reserved stays within twice the output, never the limit at once.
pub fn unzstd_unsized(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    if frame_content_size(data).is_some() {
        return unzstd(data, limit);
    }
    let mut cap = data.len().saturating_mul(8).clamp(64 << 10, limit.max(1));
    loop {
        let mut out = Vec::new();
        if out.try_reserve_exact(cap).is_err() {
            return err(ErrorCode::TooLarge, format!("cannot allocate {cap} bytes"));
        }
        match Zstd::new().decode(data, &mut out, ZSTD_WINDOW_FLOOR) {
            Ok(()) => return Ok(out),
            // The C library's and ruzstd's words for an output too small.
            Err(e) if e.message.contains("too small") || e.message.contains("Target must have") => {
                if cap >= limit {
                    return err(ErrorCode::TooLarge, format!("zstd: decodes to more than {limit} bytes"));
                }
                cap = cap.saturating_mul(2).min(limit);
            }
            Err(e) => return Err(e),
        }
    }
}

/// A zstd frame compressed with the dictionary `dict` (Icechunk's virtual chunk locations),
/// decoded to at most `limit` bytes.
pub fn unzstd_with_dict(data: &[u8], dict: &[u8], limit: usize) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    if out.try_reserve_exact(limit).is_err() {
        return err(ErrorCode::TooLarge, format!("cannot allocate {limit} bytes"));
    }
    #[cfg(feature = "zstd-c")]
    {
        let mut d = zstd_safe::DCtx::create();
        d.decompress_using_dict(&mut out, data, dict).map_err(|code| {
            Error::new(
                ErrorCode::CorruptChunk,
                format!("zstd: {} (with a dictionary)", zstd_safe::get_error_name(code)),
            )
        })?;
    }
    #[cfg(not(feature = "zstd-c"))]
    {
        zstd_windows_within(data, (limit as u64).max(1 << 20))?;
        let bad =
            |e: &dyn core::fmt::Display| Error::new(ErrorCode::CorruptChunk, format!("zstd: {e} (with a dictionary)"));
        let d = ruzstd::decoding::Dictionary::decode_dict(dict).map_err(|e| bad(&e))?;
        let mut f = ruzstd::decoding::FrameDecoder::new();
        f.add_dict(d).map_err(|e| bad(&e))?;
        f.decode_all_to_vec(data, &mut out).map_err(|e| bad(&e))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_frame_states_its_size() {
        // `numcodecs.Zstd(level=1).encode(b"abc" * 100)`: content size 300 in the header.
        let frame = [40, 181, 47, 253, 96, 44, 0, 85, 0, 0, 24, 97, 98, 99, 1, 0, 38, 170, 110, 8];
        assert_eq!(frame_content_size(&frame), Some(300));
        assert_eq!(unzstd(&frame, 300).unwrap(), b"abc".repeat(100));
        assert_eq!(unzstd(&frame, 299).unwrap_err().code, ErrorCode::CorruptChunk);
        assert_eq!(frame_content_size(&frame[..10]), None);
        assert_eq!(frame_content_size(b"nope"), None);
    }

    #[test]
    fn frames_without_a_size_grow_their_buffer() {
        // `zstd --no-content-size` of 300 000 zeros: more than the first guess (64 KiB).
        let zeros = [
            40, 181, 47, 253, 4, 88, 84, 0, 0, 16, 0, 0, 1, 0, 251, 255, 57, 192, 2, 2, 0, 16, 0, 3, 159, 4, 0, 45, 40,
            222, 38,
        ];
        assert_eq!(frame_content_size(&zeros), None);
        assert_eq!(unzstd_unsized(&zeros, 1 << 20).unwrap(), alloc::vec![0u8; 300_000]);
        assert_eq!(unzstd_unsized(&zeros, 299_999).unwrap_err().code, ErrorCode::TooLarge);
        assert_eq!(unzstd_unsized(&zeros[..20], 1 << 20).unwrap_err().code, ErrorCode::CorruptChunk);
    }

    #[test]
    fn zstd_rejects_garbage() {
        assert_eq!(unzstd(b"\x28\xb5\x2f\xfd garbage", 100).unwrap_err().code, ErrorCode::CorruptChunk);
    }
}

//! A page's zstd frames, with the window checked before the decoder allocates it.

/// zstd frames (a page's), decoded to exactly `size` bytes. A frame whose window is larger than
/// the page (and 8 MiB) is refused before ruzstd allocates it.
pub fn unzstd(data: &[u8], size: usize) -> Result<Vec<u8>, String> {
    if let Some(w) = window(data) {
        if w > (size as u64).max(8 << 20) {
            return Err(format!("zstd: a {w}-byte window for a {size}-byte page"));
        }
    }
    let mut out = vec![0u8; size];
    let mut d = ruzstd::decoding::FrameDecoder::new();
    let n = d.decode_all(data, &mut out).map_err(|e| format!("zstd: {e}"))?;
    if n != size {
        return Err(format!("zstd: {n} bytes where the page has {size}"));
    }
    Ok(out)
}

/// The window the first zstd frame of `data` declares (its header only).
fn window(data: &[u8]) -> Option<u64> {
    if data.get(..4)? != [0x28, 0xB5, 0x2F, 0xFD] {
        return None;
    }
    let fhd = *data.get(4)?;
    if fhd & 0x20 == 0 {
        let wd = u64::from(*data.get(5)?);
        let base = 1u64 << (10 + (wd >> 3));
        return Some(base + base / 8 * (wd & 7));
    }
    // Single segment: the window is the content size.
    let at = 5 + [0usize, 1, 2, 4][usize::from(fhd & 3)];
    let n = [1usize, 2, 4, 8][usize::from(fhd >> 6)];
    let b = data.get(at..at + n)?;
    let v = b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x));
    Some(if n == 2 { v + 256 } else { v })
}

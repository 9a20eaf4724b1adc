//! BloscLZ decoder (c-blosc's `blosclz_decompress`; the format is FastLZ level 1 with a far-match
//! extension). Written from reading the C source, not translated.
//!
//! Tokens, starting with a literal run whose top 3 bits are a marker:
//! - `ctrl < 32`: `ctrl + 1` literal bytes follow.
//! - otherwise a match of `(ctrl >> 5) + 2` bytes; if `ctrl >> 5 == 7` bytes follow that each add
//!   to the length, up to and including the first byte that is not 255. Then one byte `code`;
//!   the match starts `((ctrl & 31) << 8) + code + 1` bytes back, except that `ctrl & 31 == 31`
//!   with `code == 255` means two more bytes hold a big-endian distance `d` and the match starts
//!   `d + 8192` bytes back. Matches may overlap the bytes they produce.

use alloc::format;
use alloc::string::String;

const MAX_DISTANCE: usize = 8191;

/// Decode `src` into exactly `out.len()` bytes; the error says why not.
#[inline(never)]
pub fn decompress(src: &[u8], out: &mut [u8]) -> Result<(), String> {
    let next = |ip: &mut usize| -> Result<usize, String> {
        let b = src.get(*ip).ok_or_else(|| String::from("truncated stream"))?;
        *ip += 1;
        Ok(usize::from(*b))
    };
    let mut ip = 0usize;
    let mut op = 0usize;
    let mut ctrl = next(&mut ip)? & 31;
    loop {
        if ctrl >= 32 {
            let mut len = (ctrl >> 5) - 1;
            let ofs = (ctrl & 31) << 8;
            if len == 6 {
                loop {
                    let code = next(&mut ip)?;
                    len = len.saturating_add(code);
                    if code != 255 {
                        break;
                    }
                }
            }
            let code = next(&mut ip)?;
            len = len.saturating_add(3);
            let mut back = ofs + code + 1;
            if code == 255 && ofs == 31 << 8 {
                let far = (next(&mut ip)? << 8) | next(&mut ip)?;
                back = far + MAX_DISTANCE + 1;
            }
            let end = op
                .checked_add(len)
                .filter(|&e| e <= out.len())
                .ok_or_else(|| String::from("match past the block end"))?;
            if back > op {
                return Err(String::from("match before the block start"));
            }
            copy_match(out, op, back, end);
            op = end;
        } else {
            let n = ctrl + 1;
            let lit = src.get(ip..ip + n).ok_or_else(|| String::from("literal run past the stream end"))?;
            let dst = out.get_mut(op..op + n).ok_or_else(|| String::from("literal run past the block end"))?;
            dst.copy_from_slice(lit);
            ip += n;
            op += n;
        }
        if ip >= src.len() {
            break;
        }
        ctrl = next(&mut ip)?;
    }
    if op != out.len() {
        return Err(format!("decoded {op} bytes, the block holds {}", out.len()));
    }
    Ok(())
}

/// `out[op..end]` = the bytes starting `back` before `op`, where the source may overlap the
/// destination (`1 <= back <= op`, `end <= out.len()`).
fn copy_match(out: &mut [u8], op: usize, back: usize, end: usize) {
    let mut from = op - back;
    let mut at = op;
    if back == 1 {
        let b = out[from];
        out[at..end].fill(b);
        return;
    }
    // Copy in pieces no longer than `back`: each piece reads only bytes already written.
    while at < end {
        let n = back.min(end - at);
        out.copy_within(from..from + n, at);
        from += n;
        at += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_matches_runs_and_far_matches() {
        // literal "abc", match len 5 back 3 -> "abcabcab", run of 4 more 'b' (back 1)
        let src = [2, b'a', b'b', b'c', (3 << 5), 2, (2 << 5), 0];
        let mut out = [0u8; 12];
        decompress(&src, &mut out).unwrap();
        assert_eq!(&out, b"abcabcabbbbb");
        // extended length: ctrl>>5 == 7, one extra byte 2 -> length 6 + 2 + 3 = 11
        let src = [0, b'z', (7 << 5), 2, 0];
        let mut out = [0u8; 12];
        decompress(&src, &mut out).unwrap();
        assert_eq!(out, [b'z'; 12]);
    }

    #[test]
    fn far_match() {
        // 8200 literal bytes (257 runs of 32, last 8), then a far match of 3 bytes back 8200.
        let mut src = alloc::vec::Vec::new();
        let mut want = alloc::vec::Vec::new();
        for i in 0..8200usize {
            if i % 32 == 0 {
                src.push((32.min(8200 - i) - 1) as u8);
            }
            src.push((i * 7) as u8);
            want.push((i * 7) as u8);
        }
        // back = d + 8192 = 8200 -> d = 8
        src.extend_from_slice(&[(1 << 5) | 31, 255, 0, 8]);
        want.extend_from_slice(&[0, 7, 14]);
        let mut out = alloc::vec![0u8; want.len()];
        decompress(&src, &mut out).unwrap();
        assert_eq!(out, want);
    }

    #[test]
    fn rejects_bad_streams() {
        let mut out = [0u8; 8];
        let cases: [(&[u8], &str); 6] = [
            (&[], "truncated stream"),
            (&[7, 1, 2], "literal run past the stream end"),
            (&[0, 1, (1 << 5), 5], "match before the block start"),
            (&[0, 1, (7 << 5), 255, 255], "truncated stream"),
            (&[1, 1, 2], "decoded 2 bytes, the block holds 8"),
            (&[0, 1, (7 << 5), 20, 0], "match past the block end"),
        ];
        for (src, why) in cases {
            assert_eq!(decompress(src, &mut out).unwrap_err(), why, "{src:?}");
        }
    }
}

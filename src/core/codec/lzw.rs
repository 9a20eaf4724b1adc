//! TIFF's LZW (compression 5, imagecodecs `imagecodecs_lzw`): codes of 9 to 12 bits, most
//! significant bit first, Clear (256) and EndOfInformation (257), the width growing one code
//! early as libtiff writes it; or old-style (before TIFF 6: least significant bit first, the
//! width growing on time), told as libtiff tells it: a first byte 0 and the next one odd.
//! Decoded within the chunk's size: a bomb stops at the limit.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{corrupt_in, Result};
use alloc::vec::Vec;

#[derive(Debug)]
pub struct Lzw;

const CLEAR: u16 = 256;
const EOI: u16 = 257;

impl Codec for Lzw {
    fn name(&self) -> &str {
        "imagecodecs_lzw"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        // 12-bit codes for single bytes at worst.
        n.saturating_mul(3) / 2 + 16
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        Ok(Decoded::bytes(unlzw(&data.bytes, ctx.limit)?))
    }
}

/// The bytes of TIFF LZW stream `src`, at most `limit` of them.
pub fn unlzw(src: &[u8], limit: usize) -> Result<Vec<u8>> {
    let old = matches!(src, [0, b, ..] if b & 1 == 1);
    // Each table entry: (prefix code, last byte, length); codes < 256 are single bytes.
    let mut table: Vec<(u16, u8, u32)> = Vec::with_capacity(4096);
    let reset = |t: &mut Vec<(u16, u8, u32)>| {
        t.clear();
        t.extend((0..=255u16).map(|b| (u16::MAX, b as u8, 1)));
        t.push((0, 0, 0));
        t.push((0, 0, 0));
    };
    reset(&mut table);
    let mut out: Vec<u8> = Vec::new();
    let (mut bits, mut acc, mut at) = (0u32, 0u32, 0usize);
    let mut width = 9;
    let mut prev: Option<u16> = None;
    loop {
        while bits < width {
            let Some(&b) = src.get(at) else { return Ok(out) };
            acc = if old { acc | u32::from(b) << bits } else { (acc << 8) | u32::from(b) };
            at += 1;
            bits += 8;
        }
        let mask = (1 << width) - 1;
        let code = if old { acc & mask } else { (acc >> (bits - width)) & mask } as u16;
        if old {
            acc >>= width;
        }
        bits -= width;
        match code {
            CLEAR => {
                reset(&mut table);
                width = 9;
                prev = None;
                continue;
            }
            EOI => return Ok(out),
            _ => {}
        }
        let first = match (usize::from(code) < table.len(), prev) {
            (true, _) => emit(&table, code, &mut out, limit)?,
            // The code being defined: the previous string and its own first byte.
            (false, Some(p)) if usize::from(code) == table.len() => {
                let f = emit(&table, p, &mut out, limit)?;
                push(&mut out, f, limit)?;
                f
            }
            _ => return Err(corrupt_in("imagecodecs_lzw", "a code not yet defined")),
        };
        if let Some(p) = prev {
            if table.len() < 4096 {
                let len = table[usize::from(p)].2 + 1;
                table.push((p, first, len));
            }
        }
        prev = Some(code);
        // libtiff widens one code early (old-style: on time).
        width = match table.len() + usize::from(!old) {
            n if n >= 2048 => 12,
            n if n >= 1024 => 11,
            n if n >= 512 => 10,
            _ => 9,
        };
    }
}

fn push(out: &mut Vec<u8>, b: u8, limit: usize) -> Result<()> {
    if out.len() >= limit {
        return Err(corrupt_in("imagecodecs_lzw", "decodes to more bytes than the chunk holds"));
    }
    out.push(b);
    Ok(())
}

/// Append the string of `code`; returns its first byte.
fn emit(table: &[(u16, u8, u32)], code: u16, out: &mut Vec<u8>, limit: usize) -> Result<u8> {
    let len = table[usize::from(code)].2 as usize;
    if len == 0 {
        return Err(corrupt_in("imagecodecs_lzw", "Clear or EndOfInformation inside a string"));
    }
    if out.len().saturating_add(len) > limit {
        return Err(corrupt_in("imagecodecs_lzw", "decodes to more bytes than the chunk holds"));
    }
    let at = out.len();
    out.resize(at + len, 0);
    let mut c = code;
    for k in (0..len).rev() {
        let (p, b, _) = table[usize::from(c)];
        out[at + k] = b;
        c = p;
    }
    Ok(out[at])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::ErrorCode;

    fn lzw(data: &[u8]) -> Vec<u8> {
        lzw_with(data, false)
    }
    fn lzw_old(data: &[u8]) -> Vec<u8> {
        lzw_with(data, true)
    }

    /// A TIFF LZW encoder, for the round trip (libtiff's code width rule), or old-style (LSB
    /// first, widened on time).
    fn lzw_with(data: &[u8], old: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let (mut acc, mut bits) = (0u64, 0u32);
        let mut put = |code: u32, width: u32, out: &mut Vec<u8>| {
            if old {
                acc |= u64::from(code) << bits;
            } else {
                acc = (acc << width) | u64::from(code);
            }
            bits += width;
            while bits >= 8 {
                out.push(if old { acc as u8 } else { (acc >> (bits - 8)) as u8 });
                if old {
                    acc >>= 8;
                }
                bits -= 8;
            }
        };
        let mut dict: alloc::collections::BTreeMap<Vec<u8>, u32> = (0..256u32).map(|b| (alloc::vec![b as u8], b)).collect();
        let mut next = 258u32;
        let early = u32::from(!old);
        let width = |next: u32| if next + early >= 2048 { 12 } else if next + early >= 1024 { 11 } else if next + early >= 512 { 10 } else { 9 };
        put(256, 9, &mut out);
        let mut w: Vec<u8> = Vec::new();
        for &b in data {
            let mut wb = w.clone();
            wb.push(b);
            if dict.contains_key(&wb) {
                w = wb;
                continue;
            }
            put(dict[&w], width(next - 1), &mut out);
            dict.insert(wb, next);
            next += 1;
            w = alloc::vec![b];
            if next >= 4094 {
                put(dict[&w], width(next - 1), &mut out);
                put(256, 12, &mut out);
                dict.retain(|k, _| k.len() == 1);
                next = 258;
                w.clear();
            }
        }
        if !w.is_empty() {
            put(dict[&w], width(next - 1), &mut out);
        }
        put(257, width(next), &mut out);
        put(0, 7, &mut out);
        out
    }

    #[test]
    fn round_trips_and_bounds() {
        let data: Vec<u8> = (0..20_000u32).map(|i| ((i * 7) % 251 ^ (i / 300)) as u8).collect();
        assert_eq!(unlzw(&lzw(&data), data.len()).unwrap(), data);
        let runs = alloc::vec![9u8; 100_000];
        assert_eq!(unlzw(&lzw(&runs), runs.len()).unwrap(), runs);
        assert_eq!(unlzw(&lzw(&runs), 1000).unwrap_err().code, ErrorCode::CorruptChunk);
        assert_eq!(unlzw(&[0x80, 0x40, 0xff, 0xff], 10).unwrap_err().code, ErrorCode::CorruptChunk);
        // Old-style: codes least significant bit first, widened on time.
        let old = lzw_old(&data);
        assert_eq!((old[0], old[1] & 1), (0, 1));
        assert_eq!(unlzw(&old, data.len()).unwrap(), data);
        assert_eq!(unlzw(&lzw_old(&runs), runs.len()).unwrap(), runs);
        assert_eq!(unlzw(&lzw_old(&runs), 1000).unwrap_err().code, ErrorCode::CorruptChunk);
    }
}

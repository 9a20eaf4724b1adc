//! TIFF's PackBits (compression 32773, imagecodecs `imagecodecs_packbits`): a header byte n,
//! then n + 1 literal bytes (0..=127) or one byte repeated 1 − n times (−127..=−1); −128 is a
//! no-op. Decoded within the chunk's size.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{corrupt_in, Result};
use alloc::vec::Vec;

#[derive(Debug)]
pub struct TiffPackBits;

impl Codec for TiffPackBits {
    fn name(&self) -> &str {
        "imagecodecs_packbits"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        n + n.div_ceil(128) + 1
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        Ok(Decoded::bytes(unpackbits(&data.bytes, ctx.limit)?))
    }
}

pub fn unpackbits(src: &[u8], limit: usize) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < src.len() {
        let n = src[at] as i8;
        at += 1;
        let (add, literal) = match n {
            0..=127 => (n as usize + 1, true),
            -127..=-1 => ((1 - i16::from(n)) as usize, false),
            _ => continue,
        };
        if out.len() + add > limit {
            return Err(corrupt_in("imagecodecs_packbits", "decodes to more bytes than the chunk holds"));
        }
        if literal {
            let run = src.get(at..at + add).ok_or_else(|| corrupt_in("imagecodecs_packbits", "a literal run cut short"))?;
            out.extend_from_slice(run);
            at += add;
        } else {
            let &b = src.get(at).ok_or_else(|| corrupt_in("imagecodecs_packbits", "a repeat without its byte"))?;
            out.resize(out.len() + add, b);
            at += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tiff_specs_example() {
        // TIFF 6.0, section 9.
        let packed = [0xFE, 0xAA, 0x02, 0x80, 0x00, 0x2A, 0xFD, 0xAA, 0x03, 0x80, 0x00, 0x2A, 0x22, 0xF7, 0xAA];
        let want = [
            0xAA, 0xAA, 0xAA, 0x80, 0x00, 0x2A, 0xAA, 0xAA, 0xAA, 0xAA, 0x80, 0x00, 0x2A, 0x22, 0xAA, 0xAA, 0xAA, 0xAA,
            0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA,
        ];
        assert_eq!(unpackbits(&packed, 100).unwrap(), want);
        for (e, why) in [
            (unpackbits(&packed, 10).unwrap_err(), "decodes to more bytes than the chunk holds"),
            (unpackbits(&[5, 1], 100).unwrap_err(), "a literal run cut short"),
        ] {
            assert_eq!(e.code, crate::core::error::ErrorCode::CorruptChunk, "{e}");
            assert_eq!(e.message, alloc::format!("imagecodecs_packbits: {why}"));
        }
    }
}

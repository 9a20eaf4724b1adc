//! `vlen-utf8` and `vlen-bytes` (Zarr v3, and numcodecs' `VLenUTF8`/`VLenBytes` object codecs
//! of Zarr v2): the element count (u32, little endian), then per element its length (u32) and
//! its bytes, in C order. Decoded as handles into the encoded buffer itself (no copy).
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, corrupt_chunk, zeroed, Result};
use crate::core::metadata::dtype::{handle, HANDLE};
use crate::core::nd::c_strides;
use alloc::format;

#[derive(Debug)]
pub struct VLen {
    /// `vlen-utf8`: every element must be valid UTF-8.
    pub utf8: bool,
}

impl Codec for VLen {
    fn name(&self) -> &str {
        if self.utf8 {
            "vlen-utf8"
        } else {
            "vlen-bytes"
        }
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    /// The frame's size depends on the contents, not on the element count: a compressor around
    /// it may decode to at most `MAX_DECODED` bytes.
    fn max_encoded_len(&self, _n: usize) -> usize {
        crate::core::error::MAX_DECODED
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let what = self.name();
        let bad = |why: &str| corrupt_chunk(format!("{what}: {why}"));
        let b = &data.bytes;
        let word = |at: usize| -> Result<usize> {
            let w = b.get(at..at + 4).ok_or_else(|| bad("truncated frame"))?;
            Ok(u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize)
        };
        let n = checked_bytes(ctx.shape, 1)?;
        if word(0)? != n {
            return Err(bad(&format!("the frame holds {} elements, the chunk {n}", word(0)?)));
        }
        let mut handles = zeroed(checked_bytes(ctx.shape, HANDLE as u64)?)?;
        let mut at = 4usize;
        for h in handles.chunks_exact_mut(HANDLE) {
            let len = word(at)?;
            let start = at + 4;
            let item =
                start.checked_add(len).and_then(|end| b.get(start..end)).ok_or_else(|| bad("truncated element"))?;
            if self.utf8 && core::str::from_utf8(item).is_err() {
                return Err(bad("an element is not valid UTF-8"));
            }
            h.copy_from_slice(&handle(start, len));
            at = start + len;
        }
        if b.len() > u32::MAX as usize {
            return Err(crate::core::Error::new(crate::core::ErrorCode::TooLarge, format!("{what}: frame over 4 GiB")));
        }
        Ok(Decoded { bytes: handles, strides: c_strides(ctx.shape), heap: data.bytes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metadata::dtype::content;
    use crate::core::metadata::DataType;
    use crate::core::ErrorCode;
    use alloc::vec::Vec;

    fn frame(items: &[&[u8]]) -> Vec<u8> {
        let mut f = (items.len() as u32).to_le_bytes().to_vec();
        for i in items {
            f.extend_from_slice(&(i.len() as u32).to_le_bytes());
            f.extend_from_slice(i);
        }
        f
    }

    #[test]
    fn frames() {
        let c = VLen { utf8: true };
        let ctx = Ctx { shape: &[3], dtype: DataType::String, limit: 1000, decoders: None };
        let d = c.decode(Decoded::bytes(frame(&[b"a", "bé".as_bytes(), b""])), &ctx).unwrap();
        let got: Vec<&[u8]> = d.bytes.chunks(8).map(|h| content(h, &d.heap).unwrap()).collect();
        assert_eq!(got, [&b"a"[..], "bé".as_bytes(), b""]);
        let code = |f: Vec<u8>| c.decode(Decoded::bytes(f), &ctx).unwrap_err().code;
        assert_eq!(code(frame(&[b"a", b"b"])), ErrorCode::CorruptChunk, "too few");
        assert_eq!(code(frame(&[b"a", b"b", &[0xff]])), ErrorCode::CorruptChunk, "not UTF-8");
        let mut cut = frame(&[b"a", b"b", b"ccc"]);
        cut.pop();
        assert_eq!(code(cut), ErrorCode::CorruptChunk, "truncated");
        assert_eq!(code(alloc::vec![3, 0, 0]), ErrorCode::CorruptChunk, "no header");
        assert!(VLen { utf8: false }.decode(Decoded::bytes(frame(&[b"a", b"b", &[0xff]])), &ctx).is_ok());
    }
}

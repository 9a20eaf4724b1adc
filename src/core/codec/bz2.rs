//! numcodecs `BZ2`: one bzip2 stream (the pure-Rust libbz2 port behind the `bzip2` crate).
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{err, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

#[derive(Debug)]
pub struct Bz2;

impl Codec for Bz2 {
    fn name(&self) -> &str {
        "numcodecs.bz2"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        // bzip2 expands incompressible input by at most ~1 % plus 600 bytes.
        n.saturating_add(n / 100).saturating_add(600)
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        Ok(Decoded::bytes(bunzip2(&data.bytes, ctx.limit)?))
    }
}

/// One bzip2 stream decompressed to at most `limit` bytes.
pub fn bunzip2(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    if !data.starts_with(b"BZh") {
        return err(ErrorCode::CorruptChunk, "bz2: not a bzip2 stream (no \"BZh\" magic)");
    }
    let mut d = bzip2::Decompress::new(false);
    let mut out: Vec<u8> = Vec::new();
    loop {
        if out.len() == out.capacity() {
            super::grow_output(&mut out, data.len(), limit, "bz2")?;
        }
        let consumed = usize::try_from(d.total_in()).unwrap_or(usize::MAX).min(data.len());
        let before = out.len();
        let status = d
            .decompress_vec(&data[consumed..], &mut out)
            .map_err(|e| crate::core::error::Error::new(ErrorCode::CorruptChunk, format!("bz2: {e}")))?;
        match status {
            bzip2::Status::StreamEnd => break,
            bzip2::Status::MemNeeded => return err(ErrorCode::TooLarge, "bz2: out of memory"),
            _ if out.len() == before && out.len() < out.capacity() => {
                return err(ErrorCode::CorruptChunk, "bz2: the stream ends early");
            }
            _ => {}
        }
    }
    if out.len() > limit {
        return err(ErrorCode::CorruptChunk, format!("bz2: decompresses to more than {limit} bytes"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_non_bzip2_and_truncated() {
        assert_eq!(bunzip2(b"hello", 100).unwrap_err().code, ErrorCode::CorruptChunk);
        // "BZh9" + a block magic, cut short.
        assert_eq!(bunzip2(b"BZh91AY&SY", 100).unwrap_err().code, ErrorCode::CorruptChunk);
    }
}

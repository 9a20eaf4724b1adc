//! numcodecs `LZ4`: the decoded size (4 bytes, little endian), then one LZ4 block (lz4_flex, in
//! `shardfetch-kernels`).
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{err, zeroed, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

#[derive(Debug)]
pub struct Lz4;

impl Codec for Lz4 {
    fn name(&self) -> &str {
        "numcodecs.lz4"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::compressed_bound(n)
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        Ok(Decoded::bytes(numcodecs_lz4(&data.bytes, ctx.limit)?))
    }
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
    match shardfetch_kernels::lz4::decompress_into(block, out) {
        Ok(n) if n == want => Ok(()),
        Ok(n) => err(ErrorCode::CorruptChunk, format!("lz4: decoded {n} bytes, expected {want}")),
        Err(e) => err(ErrorCode::CorruptChunk, format!("lz4: {e} (expected {want} bytes)")),
    }
}

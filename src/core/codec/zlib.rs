//! numcodecs `Zlib`: a zlib stream (RFC 1950), its Adler-32 checked.
pub use super::deflate::{is_zlib, unzlib};
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{err, ErrorCode, Result};
use alloc::format;

#[derive(Debug)]
pub struct Zlib;

impl Codec for Zlib {
    fn name(&self) -> &str {
        "zlib"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::compressed_bound(n)
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        Ok(Decoded::bytes(unzlib(&data.bytes, ctx.limit)?))
    }
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

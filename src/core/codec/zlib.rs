//! numcodecs `Zlib`: a zlib stream (RFC 1950), its Adler-32 checked.
use super::deflate::inflate;
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{err, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

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

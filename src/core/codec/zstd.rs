//! `zstd`: one or more zstd frames. The reference C library (feature `zstd-c`) or ruzstd.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::Result;
pub use crate::core::zstd::unzstd;

#[derive(Debug)]
pub struct ZstdCodec;

impl Codec for ZstdCodec {
    fn name(&self) -> &str {
        "zstd"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::compressed_bound(n)
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        Ok(Decoded::bytes(unzstd(&data.bytes, ctx.limit)?))
    }
}


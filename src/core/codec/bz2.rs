//! numcodecs `BZ2`: one bzip2 stream, decoded by the external `bz2` decoder (the bzip2 crate's
//! pure-Rust libbz2 port; `decoders/bz2`) within the chunk's limit.
use super::{external, Codec, Ctx, Decoded, Kind};
use crate::core::error::Result;

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
    fn decoder(&self) -> Option<&'static str> {
        Some("bz2")
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        Ok(Decoded::bytes(external::run(ctx.decoders, "bz2", &data.bytes, &[ctx.limit as f64])?))
    }
}

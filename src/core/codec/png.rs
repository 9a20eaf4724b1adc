//! Neuroglancer precomputed `png` chunks: one image of width x and height y·z whose pixels, in
//! order, are the chunk's voxels (x fastest) with the channels interleaved. Decoded by the
//! external `png` decoder (zune-png; `decoders/png`).
use super::{external, Codec, Ctx, Decoded, Kind};
use crate::core::error::Result;

#[derive(Debug)]
pub struct Png;

impl Codec for Png {
    fn name(&self) -> &str {
        "png"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::image_bound(n)
    }
    fn decoder(&self) -> Option<&'static str> {
        Some("png")
    }
    /// `ctx.shape` is the chunk's `[x, y, z, channel]`; the output interleaves the channels
    /// (samples of the element's 1 or 2 bytes, little-endian; 1–4 channels).
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let elem = ctx.dtype.size() as u64;
        super::interleaved_image(&data, ctx, |b, voxels, channels| {
            let px = external::run(ctx.decoders, "png", b, &[voxels as f64, channels as f64, elem as f64])?;
            super::check_len("png", px, voxels * channels * elem)
        })
    }
}

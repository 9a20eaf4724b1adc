//! Neuroglancer precomputed `jpeg` chunks: one image of width x and height y·z whose pixels, in
//! order, are the chunk's voxels (x fastest) with the channels interleaved. Decoded by the
//! external `jpeg` decoder (zune-jpeg; `decoders/jpeg`).
use super::{external, Codec, Ctx, Decoded, Kind};
use crate::core::error::Result;

#[derive(Debug)]
pub struct Jpeg;

impl Codec for Jpeg {
    fn name(&self) -> &str {
        "jpeg"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::image_bound(n)
    }
    fn decoder(&self) -> Option<&'static str> {
        Some("jpeg")
    }
    /// `ctx.shape` is the chunk's `[x, y, z, channel]`; the output interleaves the channels
    /// (8-bit samples, 1 or 3 channels).
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        super::interleaved_image(&data, ctx, |b, voxels, channels| {
            let px = external::run(ctx.decoders, "jpeg", b, &[voxels as f64, channels as f64])?;
            super::check_len("jpeg", px, voxels * channels)
        })
    }
}

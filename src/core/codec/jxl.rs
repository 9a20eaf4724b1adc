//! Neuroglancer precomputed `jxl` chunks (JPEG XL, as cloud-volume and Neuroglancer write and
//! read them): 8-bit samples, the frames' pixels in order (x fastest, then y, then the frames
//! along z, or one image y·z tall), channels interleaved. Decoded by the external `jxl` decoder
//! (jxl-oxide, the decoder Neuroglancer uses; `decoders/jxl`).
use super::{external, Codec, Ctx, Decoded, Kind};
use crate::core::error::Result;

#[derive(Debug)]
pub struct Jxl;

impl Codec for Jxl {
    fn name(&self) -> &str {
        "jxl"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::image_bound(n)
    }
    fn decoder(&self) -> Option<&'static str> {
        Some("jxl")
    }
    /// `ctx.shape` is the chunk's `[x, y, z, channel]`; the output interleaves the channels.
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        super::interleaved_image(&data, ctx, |b, voxels, channels| {
            let px = external::run(ctx.decoders, "jxl", b, &[voxels as f64, channels as f64])?;
            super::check_len("jxl", px, voxels * channels)
        })
    }
}

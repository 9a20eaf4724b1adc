//! Neuroglancer precomputed `compresso` chunks (seung-lab's compresso): decoded by the external
//! `compresso` decoder (`decoders/compresso`; few arrays are segmentations, so it is a module
//! of its own, fetched when one is opened).
use super::{external, Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, corrupt_in, Result};
use alloc::vec;

#[derive(Debug)]
pub struct Compresso;

impl Codec for Compresso {
    fn name(&self) -> &str {
        "compresso"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::image_bound(n)
    }
    fn decoder(&self) -> Option<&'static str> {
        Some("compresso")
    }
    /// `ctx.shape` is the chunk's `[x, y, z, channel]` (one channel); the output is `[z][y][x]`.
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let (voxels, channels) = super::image_geometry(ctx.shape)?;
        if channels != 1 {
            return Err(corrupt_in("compresso", "compresso holds one channel"));
        }
        let [nx, ny, nz] = [ctx.shape[0], ctx.shape[1], ctx.shape[2]];
        let width = ctx.dtype.size();
        let size = checked_bytes(&[nx, ny, nz], width as u64)?;
        let args = [width as f64, nx as f64, ny as f64, nz as f64];
        let bytes = external::run(ctx.decoders, "compresso", &data.bytes, &args)?;
        let bytes = super::check_len("compresso", bytes, size as u64)?;
        Ok(Decoded::elements(bytes, vec![1, nx, nx * ny, voxels]))
    }
}

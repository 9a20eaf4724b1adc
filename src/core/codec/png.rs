//! Neuroglancer precomputed `png` chunks: one image of width x and height y·z whose
//! pixels, in order, are the chunk's voxels (x fastest) with the channels interleaved. Behind
//! the cargo feature `png` (default on) for the wasm size.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{corrupt_in, Result};
use alloc::format;
use alloc::vec::Vec;

/// Whether this build decodes `png`.
pub const SUPPORTED: bool = cfg!(feature = "png");

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
    /// `ctx.shape` is the chunk's `[x, y, z, channel]`; the output interleaves the channels.
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        super::interleaved_image(&data, ctx, |b, v, c| decode_png(b, ctx.dtype.size(), v, c))
    }
}

#[cfg_attr(not(feature = "png"), allow(dead_code))]
fn check((w, h): (usize, usize), comps: usize, voxels: u64, channels: u64) -> Result<()> {
    let pixels = (w as u64).checked_mul(h as u64);
    if pixels != Some(voxels) || comps as u64 != channels {
        return Err(corrupt_in(
            "png",
            format!("a {w}x{h} image with {comps} components does not hold {voxels} voxels of {channels} channels"),
        ));
    }
    Ok(())
}

#[cfg(not(feature = "png"))]
pub fn decode_png(_data: &[u8], _elem: usize, _voxels: u64, _channels: u64) -> Result<Vec<u8>> {
    Err(crate::core::error::Error::new(
        crate::core::error::ErrorCode::UnsupportedCodec,
        "png: this build was made without the \"png\" feature",
    ))
}

/// Samples of `elem` bytes (1 or 2; returned little-endian), `channels` (1–4) per voxel.
/// zune-png 0.4 (0.5 needs Rust 1.87), on its own zune-core.
#[cfg(feature = "png")]
pub fn decode_png(data: &[u8], elem: usize, voxels: u64, channels: u64) -> Result<Vec<u8>> {
    use zune_core_04 as zc;
    let opts = zc::options::DecoderOptions::default()
        .set_max_width(1 << 31)
        .set_max_height(1 << 31)
        .png_set_add_alpha_channel(false)
        .png_set_strip_to_8bit(false)
        .set_byte_endian(zc::bit_depth::ByteEndian::LE);
    let mut d = zune_png::PngDecoder::new_with_options(data, opts);
    d.decode_headers().map_err(|e| corrupt_in("png", format!("{e:?}")))?;
    let depth = d.get_depth().map_or(0, |b| b.size_of());
    if depth != elem {
        return Err(corrupt_in("png", format!("{depth}-byte samples, expected {elem}-byte")));
    }
    let dims = d.get_dimensions().ok_or_else(|| corrupt_in("png", "no image header"))?;
    let comps = d.get_colorspace().map_or(0, |c| c.num_components());
    check(dims, comps, voxels, channels)?;
    let px = d.decode_raw().map_err(|e| corrupt_in("png", format!("{e:?}")))?;
    let want = voxels * channels * elem as u64;
    if px.len() as u64 != want {
        return Err(corrupt_in("png", format!("decoded {} bytes, expected {want}", px.len())));
    }
    Ok(px)
}

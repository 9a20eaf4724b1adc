//! Neuroglancer precomputed `jpeg` chunks: one image of width x and height y·z whose
//! pixels, in order, are the chunk's voxels (x fastest) with the channels interleaved. Behind
//! the cargo feature `jpeg` (default on) for the wasm size.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{corrupt_in, Result};
use alloc::format;
use alloc::vec::Vec;

/// Whether this build decodes `jpeg`.
pub const SUPPORTED: bool = cfg!(feature = "jpeg");

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
    /// `ctx.shape` is the chunk's `[x, y, z, channel]`; the output interleaves the channels.
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        super::interleaved_image(&data, ctx, decode_jpeg)
    }
}

#[cfg_attr(not(feature = "jpeg"), allow(dead_code))]
fn check((w, h): (usize, usize), comps: usize, voxels: u64, channels: u64) -> Result<()> {
    let pixels = (w as u64).checked_mul(h as u64);
    if pixels != Some(voxels) || comps as u64 != channels {
        return Err(corrupt_in(
            "jpeg",
            format!("a {w}x{h} image with {comps} components does not hold {voxels} voxels of {channels} channels"),
        ));
    }
    Ok(())
}

#[cfg(not(feature = "jpeg"))]
pub fn decode_jpeg(_data: &[u8], _voxels: u64, _channels: u64) -> Result<Vec<u8>> {
    Err(crate::core::error::Error::new(
        crate::core::error::ErrorCode::UnsupportedCodec,
        "jpeg: this build was made without the \"jpeg\" feature",
    ))
}

/// 8-bit samples, `channels` (1 or 3) per voxel. zune-jpeg 0.5 (0.4 misplaces the last
/// upsampled chroma column).
#[cfg(feature = "jpeg")]
pub fn decode_jpeg(data: &[u8], voxels: u64, channels: u64) -> Result<Vec<u8>> {
    use zune_core_05 as zc;
    let out = if channels == 1 { zc::colorspace::ColorSpace::Luma } else { zc::colorspace::ColorSpace::RGB };
    // JPEG caps both sides at 2^16; the pixel count is checked against the chunk below.
    let opts = zc::options::DecoderOptions::default()
        .set_max_width(1 << 16)
        .set_max_height(1 << 16)
        .jpeg_set_out_colorspace(out);
    let mut d = zune_jpeg::JpegDecoder::new_with_options(zc::bytestream::ZCursor::new(data), opts);
    d.decode_headers().map_err(|e| corrupt_in("jpeg", format!("{e:?}")))?;
    let info = d.info().ok_or_else(|| corrupt_in("jpeg", "no image header"))?;
    let comps = d.input_colorspace().map_or(0, |c| c.num_components());
    check((usize::from(info.width), usize::from(info.height)), comps, voxels, channels)?;
    let px = d.decode().map_err(|e| corrupt_in("jpeg", format!("{e:?}")))?;
    if px.len() as u64 != voxels * channels {
        return Err(corrupt_in("jpeg", format!("decoded {} samples, expected {}", px.len(), voxels * channels)));
    }
    Ok(px)
}

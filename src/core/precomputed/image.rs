//! `jpeg` and `png` chunk encodings: one image of width x and height y·z whose pixels, in
//! order, are the chunk's voxels (x fastest) with the channels interleaved.
//!
//! Each sits behind a cargo feature of the same name (both default) for the wasm size.
use crate::core::error::{Error, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

#[allow(dead_code)]
fn corrupt(what: &str, msg: impl core::fmt::Display) -> Error {
    Error::new(ErrorCode::CorruptChunk, format!("{what}: {msg}"))
}

#[allow(dead_code)]
fn check(what: &str, (w, h): (usize, usize), comps: usize, voxels: u64, channels: u64) -> Result<()> {
    let pixels = (w as u64).checked_mul(h as u64);
    if pixels != Some(voxels) || comps as u64 != channels {
        return Err(corrupt(
            what,
            format!("a {w}x{h} image with {comps} components does not hold {voxels} voxels of {channels} channels"),
        ));
    }
    Ok(())
}

/// Whether this build decodes the encoding (`"jpeg"` or `"png"`).
pub fn supported(encoding: &str) -> bool {
    (encoding == "jpeg" && cfg!(feature = "jpeg")) || (encoding == "png" && cfg!(feature = "png"))
}

#[cfg(not(feature = "jpeg"))]
pub fn decode_jpeg(_data: &[u8], _voxels: u64, _channels: u64) -> Result<Vec<u8>> {
    Err(Error::new(ErrorCode::UnsupportedCodec, "jpeg: this build was made without the \"jpeg\" feature"))
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
    d.decode_headers().map_err(|e| corrupt("jpeg", format!("{e:?}")))?;
    let info = d.info().ok_or_else(|| corrupt("jpeg", "no image header"))?;
    let comps = d.input_colorspace().map_or(0, |c| c.num_components());
    check("jpeg", (usize::from(info.width), usize::from(info.height)), comps, voxels, channels)?;
    let px = d.decode().map_err(|e| corrupt("jpeg", format!("{e:?}")))?;
    if px.len() as u64 != voxels * channels {
        return Err(corrupt("jpeg", format!("decoded {} samples, expected {}", px.len(), voxels * channels)));
    }
    Ok(px)
}

#[cfg(not(feature = "png"))]
pub fn decode_png(_data: &[u8], _elem: usize, _voxels: u64, _channels: u64) -> Result<Vec<u8>> {
    Err(Error::new(ErrorCode::UnsupportedCodec, "png: this build was made without the \"png\" feature"))
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
    d.decode_headers().map_err(|e| corrupt("png", format!("{e:?}")))?;
    let depth = d.get_depth().map_or(0, |b| b.size_of());
    if depth != elem {
        return Err(corrupt("png", format!("{depth}-byte samples, expected {elem}-byte")));
    }
    let dims = d.get_dimensions().ok_or_else(|| corrupt("png", "no image header"))?;
    let comps = d.get_colorspace().map_or(0, |c| c.num_components());
    check("png", dims, comps, voxels, channels)?;
    let px = d.decode_raw().map_err(|e| corrupt("png", format!("{e:?}")))?;
    let want = voxels * channels * elem as u64;
    if px.len() as u64 != want {
        return Err(corrupt("png", format!("decoded {} bytes, expected {want}", px.len())));
    }
    Ok(px)
}

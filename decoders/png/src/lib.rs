//! Neuroglancer precomputed `png` chunks: `decode(png, [voxels, channels, sample_bytes])` → the
//! image's samples (1 or 2 bytes, little-endian; `channels`, 1–4, interleaved), checked to hold
//! exactly `voxels` pixels.
#![forbid(unsafe_code)]
use abi::{count, Failure};
use zune_core as zc;

abi::export_decoder!(decode);

pub fn decode(data: &[u8], args: &[f64]) -> Result<Vec<u8>, Failure> {
    let (voxels, channels, elem) = (count(args, 0, "voxels")?, count(args, 1, "channels")?, count(args, 2, "sample bytes")?);
    let opts = zc::options::DecoderOptions::default()
        .set_max_width(1 << 31)
        .set_max_height(1 << 31)
        .png_set_add_alpha_channel(false)
        .png_set_strip_to_8bit(false)
        .set_byte_endian(zc::bit_depth::ByteEndian::LE);
    let mut d = zune_png::PngDecoder::new_with_options(data, opts);
    d.decode_headers().map_err(|e| Failure::corrupt(format!("{e:?}")))?;
    let depth = d.get_depth().map_or(0, |b| b.size_of()) as u64;
    if depth != elem {
        return Err(Failure::corrupt(format!("{depth}-byte samples, expected {elem}-byte")));
    }
    let (w, h) = d.get_dimensions().ok_or_else(|| Failure::corrupt("no image header"))?;
    let comps = d.get_colorspace().map_or(0, |c| c.num_components()) as u64;
    if (w as u64).checked_mul(h as u64) != Some(voxels) || comps != channels {
        return Err(Failure::corrupt(format!(
            "a {w}x{h} image with {comps} components does not hold {voxels} voxels of {channels} channels"
        )));
    }
    let px = d.decode_raw().map_err(|e| Failure::corrupt(format!("{e:?}")))?;
    let want = voxels * channels * elem;
    if px.len() as u64 != want {
        return Err(Failure::corrupt(format!("decoded {} bytes, expected {want}", px.len())));
    }
    Ok(px)
}

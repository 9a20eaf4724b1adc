//! Neuroglancer precomputed `jpeg` chunks and TIFF's JPEG tiles: `decode(jpeg, [voxels,
//! channels, width, rows · 2 + raw])` → the image's 8-bit samples in order (`channels`
//! interleaved), checked to hold exactly `voxels` pixels of `channels` components (a TIFF strip,
//! `rows` > 0: `width` wide and up to `rows` high, cropped to `voxels`). YCbCr is given as RGB
//! unless `raw` is 1: then the components as stored, with no colour transform (a TIFF whose
//! photometric is not YCbCr, as libtiff reads it, whatever the stream's Adobe marker or
//! component ids say).
#![forbid(unsafe_code)]
use abi::{count, Failure};
use zune_core as zc;

abi::export_decoder!(decode);

pub fn decode(data: &[u8], args: &[f64]) -> Result<Vec<u8>, Failure> {
    let (voxels, channels) = (count(args, 0, "voxels")?, count(args, 1, "channels")?);
    // A TIFF strip (`[…, raw, width, rows]`): its image may hold more rows than the chunk, up to
    // `rows` (RowsPerStrip); those past the chunk are dropped, as libtiff reads a last strip.
    // (Four numbers at most.) `flags`: rows · 2 + raw.
    let flags = count(args, 3, "flags").unwrap_or(0);
    let (raw, rows) = (flags % 2 == 1, flags / 2);
    let strip = if rows > 0 { Some((count(args, 2, "width")?, rows)) } else { None };
    let out = if channels == 1 { zc::colorspace::ColorSpace::Luma } else { zc::colorspace::ColorSpace::RGB };
    // JPEG caps both sides at 2^16; the pixel count is checked against the chunk below.
    let opts = zc::options::DecoderOptions::default()
        .set_max_width(1 << 16)
        .set_max_height(1 << 16)
        .jpeg_set_out_colorspace(out);
    let mut d = zune_jpeg::JpegDecoder::new_with_options(zc::bytestream::ZCursor::new(data), opts);
    d.decode_headers().map_err(|e| Failure::corrupt(format!("{e:?}")))?;
    if raw {
        // Out as in: zune-jpeg then copies the components.
        let stored = d.input_colorspace().unwrap_or(zc::colorspace::ColorSpace::Luma);
        d.set_options(d.options().jpeg_set_out_colorspace(stored));
    }
    let info = d.info().ok_or_else(|| Failure::corrupt("no image header"))?;
    let comps = d.input_colorspace().map_or(0, |c| c.num_components());
    let (w, h) = (u64::from(info.width), u64::from(info.height));
    let fits = match strip {
        Some((width, rows)) => w == width && h <= rows && w.checked_mul(h).is_some_and(|n| n >= voxels),
        None => w.checked_mul(h) == Some(voxels),
    };
    if !fits || comps as u64 != channels {
        return Err(Failure::corrupt(format!(
            "a {w}x{h} image with {comps} components does not hold {voxels} voxels of {channels} channels"
        )));
    }
    let mut px = d.decode().map_err(|e| Failure::corrupt(format!("{e:?}")))?;
    let want = voxels * channels;
    if strip.is_some() && px.len() as u64 == w * h * channels {
        px.truncate(want as usize);
    }
    if px.len() as u64 != want {
        return Err(Failure::corrupt(format!("decoded {} samples, expected {want}", px.len())));
    }
    Ok(px)
}

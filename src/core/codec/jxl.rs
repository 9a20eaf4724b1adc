//! Neuroglancer precomputed `jxl` chunks (JPEG XL, as cloud-volume and Neuroglancer write and
//! read them): 8-bit samples, the frames' pixels in order (x fastest, then y, then the frames
//! along z, or one image y·z tall), channels interleaved. Decoded by jxl-oxide, the decoder
//! Neuroglancer uses, within an allocation budget. Behind the cargo feature `jxl`, outside the
//! default build (the decoder is larger than the rest of the module).
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::Result;
use alloc::vec::Vec;

/// Whether this build decodes `jxl`.
pub const SUPPORTED: bool = cfg!(feature = "jxl");

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
    /// `ctx.shape` is the chunk's `[x, y, z, channel]`; the output interleaves the channels.
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        super::interleaved_image(&data, ctx, decode_jxl)
    }
}

#[cfg(not(feature = "jxl"))]
pub fn decode_jxl(_data: &[u8], _voxels: u64, _channels: u64) -> Result<Vec<u8>> {
    Err(crate::core::error::Error::new(
        crate::core::error::ErrorCode::UnsupportedCodec,
        "jxl: this build was made without the \"jxl\" feature",
    ))
}

/// `voxels` 8-bit voxels of `channels` channels.
#[cfg(feature = "jxl")]
pub fn decode_jxl(data: &[u8], voxels: u64, channels: u64) -> Result<Vec<u8>> {
    use crate::core::error::corrupt_in;
    use alloc::format;
    use jxl_oxide::{AllocTracker, InitializeResult, JxlImage};
    let want = voxels
        .checked_mul(channels)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| corrupt_in("jxl", "chunk too large"))?;
    // The decoder's own buffers (f32 planes and their borders) within a budget of the chunk's
    // size, so a hostile header cannot make it allocate gigabytes.
    let budget = want.saturating_mul(32).max(8 << 20);
    let mut uninit = JxlImage::builder().alloc_tracker(AllocTracker::with_limit(budget)).build_uninit();
    let used = uninit.feed_bytes(data).map_err(|e| corrupt_in("jxl", e))?;
    let mut image = match uninit.try_init().map_err(|e| corrupt_in("jxl", e))? {
        InitializeResult::Initialized(image) => image,
        InitializeResult::NeedMoreData(_) => return Err(corrupt_in("jxl", "truncated before the end of its header")),
    };
    image.feed_bytes(data.get(used..).unwrap_or(&[])).map_err(|e| corrupt_in("jxl", e))?;
    image.finalize().map_err(|e| corrupt_in("jxl", e))?;
    let (w, h) = (u64::from(image.width()), u64::from(image.height()));
    let frames = image.num_loaded_keyframes() as u64;
    if w.checked_mul(h).and_then(|p| p.checked_mul(frames)) != Some(voxels) {
        return Err(corrupt_in("jxl", format!("{frames} frame(s) of {w}x{h} do not hold {voxels} voxels")));
    }
    let mut out = Vec::new();
    out.try_reserve_exact(want).map_err(|_| corrupt_in("jxl", "cannot allocate the chunk"))?;
    let plane = (w * h * channels) as usize;
    for k in 0..image.num_loaded_keyframes() {
        let render = image.render_frame(k).map_err(|e| corrupt_in("jxl", e))?;
        let mut stream = render.stream();
        if u64::from(stream.channels()) != channels {
            return Err(corrupt_in("jxl", format!("{} channels, expected {channels}", stream.channels())));
        }
        let start = out.len();
        out.resize(start + plane, 0);
        if stream.write_to_buffer::<u8>(&mut out[start..]) != plane {
            return Err(corrupt_in("jxl", "a frame shorter than its header says"));
        }
    }
    Ok(out)
}

//! JPEG XL images: Neuroglancer precomputed `jxl` chunks (as cloud-volume and Neuroglancer write
//! and read them) and TIFF tiles (compression 50002, as tifffile writes them):
//! `decode(jxl, [voxels, channels, size])` → samples of `size` bytes (1, the default, or 2: 16-bit,
//! little endian), the frames' pixels in order (x fastest, then y, then the frames along z, or
//! one image y·z tall), channels interleaved; decoded within an allocation budget, so a hostile
//! header cannot make it allocate gigabytes.
#![forbid(unsafe_code)]
use abi::{count, Failure};
use jxl_oxide::{AllocTracker, InitializeResult, JxlImage};

abi::export_decoder!(decode);

pub fn decode(data: &[u8], args: &[f64]) -> Result<Vec<u8>, Failure> {
    let (voxels, channels) = (count(args, 0, "voxels")?, count(args, 1, "channels")?);
    let size = match count(args, 2, "size").unwrap_or(0) {
        0 | 1 => 1,
        2 => 2,
        s => return Err(Failure::unsupported(format!("JPEG XL samples of {s} bytes"))),
    };
    let want = voxels
        .checked_mul(channels)
        .and_then(|n| n.checked_mul(size))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| Failure::corrupt("chunk too large"))?;
    // The decoder's own buffers (f32 planes and their borders) within a budget of the chunk's size.
    let budget = want.saturating_mul(32).max(8 << 20);
    let corrupt = |e: &dyn core::fmt::Display| Failure::corrupt(e.to_string());
    let mut uninit = JxlImage::builder().alloc_tracker(AllocTracker::with_limit(budget)).build_uninit();
    let used = uninit.feed_bytes(data).map_err(|e| corrupt(&e))?;
    let mut image = match uninit.try_init().map_err(|e| corrupt(&e))? {
        InitializeResult::Initialized(image) => image,
        InitializeResult::NeedMoreData(_) => return Err(Failure::corrupt("truncated before the end of its header")),
    };
    image.feed_bytes(data.get(used..).unwrap_or(&[])).map_err(|e| corrupt(&e))?;
    image.finalize().map_err(|e| corrupt(&e))?;
    let (w, h) = (u64::from(image.width()), u64::from(image.height()));
    let frames = image.num_loaded_keyframes() as u64;
    if w.checked_mul(h).and_then(|p| p.checked_mul(frames)) != Some(voxels) {
        return Err(Failure::corrupt(format!("{frames} frame(s) of {w}x{h} do not hold {voxels} voxels")));
    }
    let mut out = Vec::new();
    out.try_reserve_exact(want).map_err(|_| Failure::too_large("cannot allocate the chunk"))?;
    let plane = (w * h * channels) as usize;
    let mut wide = Vec::new();
    for k in 0..image.num_loaded_keyframes() {
        let render = image.render_frame(k).map_err(|e| corrupt(&e))?;
        let mut stream = render.stream();
        if u64::from(stream.channels()) != channels {
            return Err(Failure::corrupt(format!("{} channels, expected {channels}", stream.channels())));
        }
        let written = if size == 1 {
            let start = out.len();
            out.resize(start + plane, 0);
            stream.write_to_buffer::<u8>(&mut out[start..])
        } else {
            wide.clear();
            wide.resize(plane, 0u16);
            let n = stream.write_to_buffer::<u16>(&mut wide);
            out.extend(wide.iter().flat_map(|v| v.to_le_bytes()));
            n
        };
        if written != plane {
            return Err(Failure::corrupt("a frame shorter than its header says"));
        }
    }
    Ok(out)
}

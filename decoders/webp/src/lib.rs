//! TIFF's WebP tiles (compression 50001, as GDAL and tifffile write them): `decode(webp,
//! [pixels, samples])` → the tile's 8-bit samples, 3 (RGB) or 4 (RGBA) interleaved, checked to
//! hold exactly `pixels` pixels; a missing alpha is opaque, an unwanted one dropped.
#![forbid(unsafe_code)]
use abi::{count, Failure};
use image_webp::WebPDecoder;
use std::io::Cursor;

abi::export_decoder!(decode);

pub fn decode(data: &[u8], args: &[f64]) -> Result<Vec<u8>, Failure> {
    let (pixels, samples) = (count(args, 0, "pixels")?, count(args, 1, "samples")?);
    if !matches!(samples, 3 | 4) {
        return Err(Failure::unsupported(format!("WebP of {samples} samples per pixel")));
    }
    let corrupt = |e: image_webp::DecodingError| Failure::corrupt(e.to_string());
    let mut d = WebPDecoder::new(Cursor::new(data)).map_err(corrupt)?;
    let (w, h) = d.dimensions();
    if u64::from(w) * u64::from(h) != pixels {
        return Err(Failure::corrupt(format!("a {w}x{h} image does not hold {pixels} pixels")));
    }
    // Sized by the checked header: at most 4 bytes for each of the tile's pixels.
    let size = d.output_buffer_size().ok_or_else(|| Failure::too_large("image too large"))?;
    let mut px = Vec::new();
    px.try_reserve_exact(size).map_err(|_| Failure::too_large("cannot allocate the tile"))?;
    px.resize(size, 0);
    d.read_image(&mut px).map_err(corrupt)?;
    let has = if d.has_alpha() { 4 } else { 3 };
    if has == samples {
        return Ok(px);
    }
    let mut out = Vec::new();
    out.try_reserve_exact((pixels * samples) as usize).map_err(|_| Failure::too_large("cannot allocate the tile"))?;
    for p in px.chunks_exact(has as usize) {
        out.extend_from_slice(&p[..3]);
        if samples == 4 {
            out.push(255);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn rgb_and_rgba_checked_against_the_tile() {
        let rgb: Vec<u8> = (0..4 * 3 * 3).map(|i| (i * 7) as u8).collect();
        let mut webp = Vec::new();
        image_webp::WebPEncoder::new(&mut webp).encode(&rgb, 4, 3, image_webp::ColorType::Rgb8).unwrap();
        assert_eq!(decode(&webp, &[12.0, 3.0]).unwrap(), rgb);
        let rgba = decode(&webp, &[12.0, 4.0]).unwrap();
        assert!(rgba.chunks(4).zip(rgb.chunks(3)).all(|(a, b)| a[..3] == *b && a[3] == 255));
        assert_eq!(decode(&webp, &[11.0, 3.0]).unwrap_err().code, abi::CORRUPT);
        assert_eq!(decode(&webp, &[12.0, 1.0]).unwrap_err().code, abi::UNSUPPORTED);
        assert_eq!(decode(&webp[..webp.len() / 2], &[12.0, 3.0]).unwrap_err().code, abi::CORRUPT);
        assert_eq!(decode(b"RIFF\0\0\0\0WEBP", &[12.0, 3.0]).unwrap_err().code, abi::CORRUPT);
    }
}

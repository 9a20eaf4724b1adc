//! TIFF tiles compressed as whole images, under imagecodecs' names, each decoded by a decoder
//! module: `imagecodecs_jpeg` (compression 7: an abbreviated JPEG stream whose tables are the
//! image's `JPEGTables`, configuration `tables` in base64, joined before decoding; 8-bit YCbCr
//! as GDAL writes it given as RGB, or with `"raw": true` the components as stored, no colour
//! transform, as libtiff reads a photometric other than YCbCr; `"width"` and `"rows"`: strips'
//! width and RowsPerStrip, a last strip's image up to that high cropped to the chunk), `imagecodecs_webp` (50001: RGB or RGBA),
//! `imagecodecs_jpegxl` (50002: 8- or 16-bit) and `imagecodecs_lerc` (34887: any sample type;
//! GDAL's deflate or zstd around it are codecs of their own), `imagecodecs_ccitt` (compressions
//! 2, 3, 4: bilevel fax, one byte a pixel; configuration `compression` and `flags` as the `ccitt`
//! module takes them). Array→bytes codecs: the tile's pixels with their samples interleaved.
use super::{external, Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, invalid, Result};
use crate::core::json::{base64, Map, Value};
use crate::core::metadata::DataType;
use crate::core::nd::c_strides;
use alloc::vec::Vec;

#[derive(Debug)]
pub struct TiffImage {
    /// The codec's name and its decoder module.
    name: &'static str,
    decoder: &'static str,
    tables: Vec<u8>,
    /// Samples per pixel (the tile's last axis when more than one).
    samples: u64,
    /// Fax: the compression and its flags.
    fax: [f64; 2],
    /// JPEG: the components as stored (no YCbCr → RGB): 1, else 0.
    raw: u64,
    /// JPEG strips: their width and RowsPerStrip, when the last may be stored past the image's
    /// rows (else 0).
    strip: [u64; 2],
}

impl TiffImage {
    pub fn parse(name: &str, conf: &Map) -> Result<TiffImage> {
        let (name, decoder) = match name {
            "imagecodecs_webp" => ("imagecodecs_webp", "webp"),
            "imagecodecs_jpegxl" => ("imagecodecs_jpegxl", "jxl"),
            "imagecodecs_lerc" => ("imagecodecs_lerc", "lerc"),
            "imagecodecs_ccitt" => ("imagecodecs_ccitt", "ccitt"),
            _ => ("imagecodecs_jpeg", "jpeg"),
        };
        let tables = match conf.get("tables").and_then(Value::as_str) {
            Some(t) => base64(t).ok_or_else(|| invalid("imagecodecs_jpeg: tables are not base64"))?,
            None => Vec::new(),
        };
        let samples = conf.get("samples").and_then(Value::as_u64).unwrap_or(1).max(1);
        let fax = ["compression", "flags"].map(|k| conf.get(k).and_then(Value::as_u64).unwrap_or(0) as f64);
        let raw = u64::from(conf.get("raw").and_then(Value::as_bool).unwrap_or(false));
        let get = |k| conf.get(k).and_then(Value::as_u64).unwrap_or(0).min(1 << 40);
        Ok(TiffImage { name, decoder, tables, samples, fax, raw, strip: [get("width"), get("rows")] })
    }
}

impl Codec for TiffImage {
    fn name(&self) -> &str {
        self.name
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::image_bound(n)
    }
    fn decoder(&self) -> Option<&'static str> {
        Some(self.decoder)
    }
    /// `ctx.shape`: the tile's `[y, x]` or `[y, x, sample]`, after leading axes of 1.
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let size = ctx.dtype.size() as u64;
        let values = checked_bytes(ctx.shape, 1)? as u64;
        let pixels = values / self.samples;
        let decoder = self.decoder;
        let float = matches!(ctx.dtype, DataType::Float32 | DataType::Float64) as u64 as f64;
        // JPEG: tables (SOI … EOI) joined to the tile (SOI …): the tables without their EOI,
        // the tile without its SOI.
        let joined;
        let stream: &[u8] = if self.tables.len() > 4 && data.bytes.starts_with(&[0xFF, 0xD8]) {
            let mut j = Vec::with_capacity(self.tables.len() + data.bytes.len());
            j.extend_from_slice(&self.tables[..self.tables.len() - 2]);
            j.extend_from_slice(&data.bytes[2..]);
            joined = j;
            &joined
        } else {
            &data.bytes
        };
        let (y, x) = match ctx.shape {
            [.., y, x] => (*y, *x),
            _ => (0, 0),
        };
        // (A decoder module takes four numbers.) JPEG (8-bit: no size): a strip's width, and
        // its RowsPerStrip and `raw` as one number.
        let [width, rows] = self.strip;
        let args = match decoder {
            "lerc" => [values as f64, size as f64, float, 0.0],
            "ccitt" => [x as f64, y as f64, self.fax[0], self.fax[1]],
            "jpeg" => [pixels as f64, self.samples as f64, width as f64, (rows * 2 + self.raw) as f64],
            _ => [pixels as f64, self.samples as f64, size as f64, 0.0],
        };
        let px = external::run(ctx.decoders, decoder, stream, &args)?;
        let px = super::check_len(self.name, px, values * size)?;
        Ok(Decoded::elements(px, c_strides(ctx.shape)))
    }
}

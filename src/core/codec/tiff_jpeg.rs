//! TIFF's JPEG (compression 7, imagecodecs `imagecodecs_jpeg`): each tile an abbreviated JPEG
//! stream whose tables are the image's `JPEGTables` (configuration `tables`, base64), joined
//! before decoding; 8-bit samples, one (grey) or three (YCbCr, as GDAL writes them, given as
//! RGB). Decoded by the external `jpeg` decoder; an array→bytes codec (the tile's pixels with
//! their samples interleaved).
use super::{external, Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, invalid, Result};
use crate::core::json::{base64, Map, Value};
use crate::core::nd::c_strides;
use alloc::vec::Vec;

#[derive(Debug)]
pub struct TiffJpeg {
    tables: Vec<u8>,
    /// Samples per pixel (the tile's last axis when more than one).
    samples: u64,
}

impl TiffJpeg {
    pub fn parse(conf: &Map) -> Result<TiffJpeg> {
        let tables = match conf.get("tables").and_then(Value::as_str) {
            Some(t) => base64(t).ok_or_else(|| invalid("imagecodecs_jpeg: tables are not base64"))?,
            None => Vec::new(),
        };
        let samples = conf.get("samples").and_then(Value::as_u64).unwrap_or(1).max(1);
        Ok(TiffJpeg { tables, samples })
    }
}

impl Codec for TiffJpeg {
    fn name(&self) -> &str {
        "imagecodecs_jpeg"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::image_bound(n)
    }
    fn decoder(&self) -> Option<&'static str> {
        Some("jpeg")
    }
    /// `ctx.shape`: the tile's `[y, x]` or `[y, x, sample]`, after leading axes of 1.
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let samples = self.samples;
        let pixels = checked_bytes(ctx.shape, 1)? as u64 / samples;
        // Tables (SOI … EOI) joined to the tile (SOI …): the tables without their EOI, the
        // tile without its SOI.
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
        let px = external::run(ctx.decoders, "jpeg", stream, &[pixels as f64, samples as f64])?;
        let px = super::check_len("imagecodecs_jpeg", px, pixels * samples)?;
        Ok(Decoded::elements(px, c_strides(ctx.shape)))
    }
}

//! numcodecs `PCodec` (Zarr v3 `numcodecs.pcodec`, an array→bytes codec; in Zarr v2 a
//! compressor that takes the place of the bytes): pco's standalone format, decoded by the
//! external `pcodec` decoder (the `pco` crate; `decoders/pcodec`) into the chunk's numbers.
use super::{external, Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, err, ErrorCode, Result};
use crate::core::metadata::DataType;
use crate::core::nd::c_strides;
use alloc::format;

#[derive(Debug)]
pub struct PCodec;

impl Codec for PCodec {
    fn name(&self) -> &str {
        "numcodecs.pcodec"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::compressed_bound(n)
    }
    fn decoder(&self) -> Option<&'static str> {
        Some("pcodec")
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let size = checked_bytes(ctx.shape, ctx.dtype.size() as u64)?;
        let n = size / ctx.dtype.size().max(1);
        // The decoder's element types, numbered from 1 (decoders/pcodec `TYPES`).
        let ty = match ctx.dtype {
            DataType::UInt8 => 1,
            DataType::UInt16 => 2,
            DataType::UInt32 => 3,
            DataType::UInt64 => 4,
            DataType::Int8 => 5,
            DataType::Int16 => 6,
            DataType::Int32 => 7,
            DataType::Int64 => 8,
            DataType::Float16 => 9,
            DataType::Float32 => 10,
            DataType::Float64 => 11,
            other => {
                return err(ErrorCode::UnsupportedCodec, format!("pcodec does not encode {} elements", other.name()))
            }
        };
        let bytes = external::run(ctx.decoders, "pcodec", &data.bytes, &[f64::from(ty), n as f64])?;
        let bytes = super::check_len("pcodec", bytes, size as u64)?;
        Ok(Decoded::elements(bytes, c_strides(ctx.shape)))
    }
}

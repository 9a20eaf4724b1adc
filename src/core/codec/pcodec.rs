//! numcodecs `PCodec` (Zarr v3 `numcodecs.pcodec`, an array→bytes codec; in Zarr v2 a
//! compressor that takes the place of the bytes): pco's standalone format, decoded by the `pco`
//! crate into a buffer sized from the chunk's shape.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, err, Error, ErrorCode, Result};
use crate::core::metadata::DataType;
use crate::core::nd::c_strides;
use alloc::format;
use alloc::vec::Vec;

#[derive(Debug)]
pub struct PCodec;

/// `n` numbers of type `$t` decoded from `src`, as little-endian bytes.
macro_rules! decode_as {
    ($t:ty, $src:expr, $n:expr) => {{
        let mut nums: Vec<$t> = Vec::new();
        if nums.try_reserve_exact($n).is_err() {
            return err(ErrorCode::TooLarge, format!("pcodec: cannot allocate {} numbers", $n));
        }
        nums.resize($n, <$t>::default());
        let p = pco::standalone::simple_decompress_into::<$t>($src, &mut nums)
            .map_err(|e| Error::new(ErrorCode::CorruptChunk, format!("pcodec: {e}")))?;
        if p.n_processed != $n {
            return err(ErrorCode::CorruptChunk, format!("pcodec: decoded {} numbers, expected {}", p.n_processed, $n));
        }
        let mut out = Vec::new();
        if out.try_reserve_exact($n * core::mem::size_of::<$t>()).is_err() {
            return err(ErrorCode::TooLarge, "pcodec: cannot allocate the decoded chunk");
        }
        for v in nums {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }};
}

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
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let size = checked_bytes(ctx.shape, ctx.dtype.size() as u64)?;
        let n = size / ctx.dtype.size().max(1);
        let src = &data.bytes[..];
        let bytes = match ctx.dtype {
            DataType::UInt8 => decode_as!(u8, src, n),
            DataType::UInt16 => decode_as!(u16, src, n),
            DataType::UInt32 => decode_as!(u32, src, n),
            DataType::UInt64 => decode_as!(u64, src, n),
            DataType::Int8 => decode_as!(i8, src, n),
            DataType::Int16 => decode_as!(i16, src, n),
            DataType::Int32 => decode_as!(i32, src, n),
            DataType::Int64 => decode_as!(i64, src, n),
            DataType::Float16 => decode_as!(half::f16, src, n),
            DataType::Float32 => decode_as!(f32, src, n),
            DataType::Float64 => decode_as!(f64, src, n),
            other => {
                return err(ErrorCode::UnsupportedCodec, format!("pcodec does not encode {} elements", other.name()))
            }
        };
        Ok(Decoded::elements(bytes, c_strides(ctx.shape)))
    }
}

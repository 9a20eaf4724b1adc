//! TIFF's samples of 1–31 bits (imagecodecs `imagecodecs_packints`): packed most significant
//! bit first, each row starting on a byte boundary (`row` samples a row), unpacked into the
//! array's unsigned type (uint8 up to 8 bits, uint16 up to 16, uint32 up to 32). An array→bytes
//! codec.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, corrupt_in, invalid, zeroed, Result};
use crate::core::json::{Map, Value};
use crate::core::nd::c_strides;

#[derive(Debug)]
pub struct PackInts {
    bits: u64,
    row: u64,
}

impl PackInts {
    pub fn parse(conf: &Map) -> Result<PackInts> {
        let get = |k: &str| conf.get(k).and_then(Value::as_u64);
        match (get("bits"), get("row")) {
            (Some(bits @ 1..=31), Some(row @ 1..)) => Ok(PackInts { bits, row }),
            _ => Err(invalid("imagecodecs_packints: needs bits (1 to 31) and row (samples a row)")),
        }
    }
}

impl Codec for PackInts {
    fn name(&self) -> &str {
        "imagecodecs_packints"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        n
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let size = ctx.dtype.size() as u64;
        let out_len = checked_bytes(ctx.shape, size)?;
        let n = out_len as u64 / size.max(1);
        let row_bytes = (self.row * self.bits).div_ceil(8);
        let rows = n.div_ceil(self.row);
        if (size * 8) < self.bits || (data.bytes.len() as u64) < rows * row_bytes {
            return Err(corrupt_in("imagecodecs_packints", "fewer bytes than the tile's samples"));
        }
        let mut out = zeroed(out_len)?;
        let b = &data.bytes;
        for k in 0..n {
            let (r, i) = (k / self.row, k % self.row);
            let mut bit = r * row_bytes * 8 + i * self.bits;
            let mut v = 0u64;
            for _ in 0..self.bits {
                v = (v << 1) | u64::from((b[(bit / 8) as usize] >> (7 - bit % 8)) & 1);
                bit += 1;
            }
            let at = (k * size) as usize;
            out[at..at + size as usize].copy_from_slice(&v.to_le_bytes()[..size as usize]);
        }
        Ok(Decoded::elements(out, c_strides(ctx.shape)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metadata::DataType;

    fn ctx(shape: &[u64], dtype: DataType) -> Ctx<'_> {
        Ctx { shape, dtype, limit: 1 << 20, decoders: None }
    }

    #[test]
    fn rows_start_on_a_byte() {
        // 3 samples of 4 bits a row, two rows: 0x12 0x30 | 0x45 0x60.
        let p = PackInts { bits: 4, row: 3 };
        let d = p.decode(Decoded::bytes(alloc::vec![0x12, 0x30, 0x45, 0x60]), &ctx(&[2, 3], DataType::UInt8)).unwrap();
        assert_eq!(d.bytes, [1, 2, 3, 4, 5, 6]);
        // 12 bits: 0xABC 0x123 in three bytes, as uint16.
        let p = PackInts { bits: 12, row: 2 };
        let d = p.decode(Decoded::bytes(alloc::vec![0xAB, 0xC1, 0x23]), &ctx(&[1, 2], DataType::UInt16)).unwrap();
        assert_eq!(d.bytes, [0xBC, 0x0A, 0x23, 0x01]);
        // One byte for two 12-bit samples: too few bytes, nothing else wrong.
        let e = p.decode(Decoded::bytes(alloc::vec![0xAB]), &ctx(&[1, 2], DataType::UInt16)).unwrap_err();
        assert_eq!(e.code, crate::core::error::ErrorCode::CorruptChunk, "{e}");
        assert!(e.message.contains("imagecodecs_packints") && e.message.contains("fewer bytes"), "{e}");
    }
}

//! numcodecs `PackBits` (v2 filter, v3 `numcodecs.packbits`): booleans as bits, most
//! significant first, after a byte counting the padding bits of the last byte.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, corrupt_chunk, zeroed, Result};
use crate::core::metadata::DataType;
use crate::core::nd::c_strides;
use alloc::format;
use alloc::vec::Vec;

#[derive(Debug)]
pub struct PackBits;

impl Codec for PackBits {
    fn name(&self) -> &str {
        "packbits"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToArray
    }
    fn encoded_shape(&self, shape: &[u64]) -> Vec<u64> {
        let n: u64 = shape.iter().product();
        alloc::vec![1 + n.div_ceil(8)]
    }
    fn encoded_dtype(&self, _decoded: DataType) -> DataType {
        DataType::UInt8
    }
    fn costly(&self) -> bool {
        false
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let n = checked_bytes(ctx.shape, 1)?;
        let (&pad, packed) = data.bytes.split_first().ok_or_else(|| corrupt_chunk("packbits: empty"))?;
        if pad > 7 || packed.len() * 8 < pad as usize || packed.len() * 8 - pad as usize != n {
            return Err(corrupt_chunk(format!("packbits: {} bits ({pad} padding) for {n} elements", packed.len() * 8)));
        }
        let mut out = zeroed(n)?;
        for (i, o) in out.iter_mut().enumerate() {
            *o = (packed[i / 8] >> (7 - i % 8)) & 1;
        }
        Ok(Decoded::elements(out, c_strides(ctx.shape)))
    }
}

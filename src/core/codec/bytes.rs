//! `bytes`: the chunk's elements in C order, little or big endian.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, err, invalid, ErrorCode, Result};
use crate::core::json::{Map, Value};
use crate::core::nd::c_strides;
use alloc::format;

#[derive(Debug)]
pub struct Bytes {
    pub big_endian: bool,
}

impl Bytes {
    pub fn parse(conf: &Map) -> Result<Bytes> {
        let big_endian = match conf.get("endian") {
            None | Some(Value::Null) => false,
            Some(v) => match v.as_str() {
                Some("little") => false,
                Some("big") => true,
                _ => return Err(invalid(format!("bytes endian must be \"little\" or \"big\", found {v}"))),
            },
        };
        Ok(Bytes { big_endian })
    }
}

impl Codec for Bytes {
    fn name(&self) -> &str {
        "bytes"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    fn costly(&self) -> bool {
        false
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let nbytes = checked_bytes(ctx.shape, ctx.dtype.size() as u64)?;
        let mut bytes = data.bytes;
        if bytes.len() != nbytes {
            return err(ErrorCode::CorruptChunk, format!("decoded chunk has {} bytes, expected {nbytes}", bytes.len()));
        }
        let unit = ctx.dtype.swap_unit();
        if self.big_endian && unit > 1 {
            bytes.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
        }
        Ok(Decoded::elements(bytes, c_strides(ctx.shape)))
    }
}

//! numcodecs `Delta` (v2 filter, v3 `numcodecs.delta`): the first element, then differences,
//! stored as `astype`; decoded by a running sum in the array's type (integers wrap).
use super::numeric::{is_float, map, type_option, Num};
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, invalid, Result};
use crate::core::json::Map;
use crate::core::metadata::DataType;

#[derive(Debug)]
pub struct Delta {
    astype: DataType,
}

impl Delta {
    pub fn parse(conf: &Map, decoded: DataType) -> Result<Delta> {
        let dtype = type_option(conf, "dtype", "delta")?.ok_or_else(|| invalid("delta needs a dtype"))?.0;
        let astype = type_option(conf, "astype", "delta")?.map_or(dtype, |t| t.0);
        if dtype != decoded {
            return Err(invalid(alloc::format!("delta of {} in an array of {}", dtype.name(), decoded.name())));
        }
        Ok(Delta { astype })
    }
}

impl Codec for Delta {
    fn name(&self) -> &str {
        "delta"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToArray
    }
    fn encoded_dtype(&self, _decoded: DataType) -> DataType {
        self.astype
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let n = checked_bytes(ctx.shape, 1)?;
        let (mut int, mut float) = (0i128, 0f64);
        let dtype = ctx.dtype;
        let bytes = map(&data.bytes, self.astype, dtype, n, "delta", |v| {
            if is_float(dtype) {
                float += v.as_f64();
                // The running sum rounds like NumPy's, in the array's own width.
                if dtype == DataType::Float32 {
                    float = float as f32 as f64;
                }
                Num::Float(float)
            } else {
                int = int.wrapping_add(match v {
                    Num::Int(i) => i,
                    Num::Float(x) => x as i128,
                });
                // Keep it within 64 bits: what is written wraps to the type's width anyway.
                int = int as i64 as i128;
                Num::Int(int)
            }
        })?;
        Ok(Decoded { bytes, ..data })
    }
}

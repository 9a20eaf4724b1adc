//! numcodecs `FixedScaleOffset` (v2 filter, v3 `numcodecs.fixedscaleoffset`):
//! `round((x - offset) * scale)` stored as `astype`; decoded as `stored / scale + offset`.
use super::numeric::{map, type_option, Num};
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, invalid, Result};
use crate::core::json::{Map, Value};
use crate::core::metadata::DataType;

pub struct FixedScaleOffset {
    offset: f64,
    scale: f64,
    astype: DataType,
}

// By name: a derived Debug formats its numbers, and the codec's vtable would keep a float printer
// (about 7 KB of the gzipped module) alive for it.
impl core::fmt::Debug for FixedScaleOffset {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("FixedScaleOffset")
    }
}

impl FixedScaleOffset {
    pub fn parse(conf: &Map) -> Result<FixedScaleOffset> {
        let number = |k: &str| {
            conf.get(k)
                .and_then(Value::as_f64)
                .ok_or_else(|| invalid(alloc::format!("fixedscaleoffset needs a numeric {k}")))
        };
        let dtype =
            type_option(conf, "dtype", "fixedscaleoffset")?.ok_or_else(|| invalid("fixedscaleoffset needs a dtype"))?.0;
        let astype = type_option(conf, "astype", "fixedscaleoffset")?.map_or(dtype, |t| t.0);
        let scale = number("scale")?;
        if scale == 0.0 {
            return Err(invalid("fixedscaleoffset: scale 0"));
        }
        Ok(FixedScaleOffset { offset: number("offset")?, scale, astype })
    }
}

impl Codec for FixedScaleOffset {
    fn name(&self) -> &str {
        "fixedscaleoffset"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToArray
    }
    fn encoded_dtype(&self, _decoded: DataType) -> DataType {
        self.astype
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let n = checked_bytes(ctx.shape, 1)?;
        let (scale, offset) = (self.scale, self.offset);
        // NumPy computes in float32 when the stored type is (Python scalars are "weak"),
        // otherwise in float64.
        let single = self.astype == DataType::Float32;
        let bytes = map(&data.bytes, self.astype, ctx.dtype, n, "fixedscaleoffset", |v| {
            let x = v.as_f64();
            Num::Float(if single { (x as f32 / scale as f32 + offset as f32) as f64 } else { x / scale + offset })
        })?;
        Ok(Decoded { bytes, ..data })
    }
}

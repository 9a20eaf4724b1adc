//! numcodecs `AsType` (`astype`) and `Quantize` (`quantize`): elements stored as another
//! numeric type, decoded by converting back (Quantize's rounding happened when encoding).
use super::numeric::{map, type_option};
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, invalid, Result};
use crate::core::json::Map;
use crate::core::metadata::DataType;
use alloc::string::String;

#[derive(Debug)]
pub struct AsType {
    name: String,
    stored: DataType,
}

impl AsType {
    /// `astype`: `encode_dtype` is what is stored.
    pub fn parse(conf: &Map) -> Result<AsType> {
        let stored =
            type_option(conf, "encode_dtype", "astype")?.ok_or_else(|| invalid("astype needs encode_dtype"))?.0;
        Ok(AsType { name: "astype".into(), stored })
    }

    /// `quantize`: `astype` (default: `dtype`) is what is stored.
    pub fn quantize(conf: &Map) -> Result<AsType> {
        let dtype = type_option(conf, "dtype", "quantize")?.ok_or_else(|| invalid("quantize needs a dtype"))?.0;
        let stored = type_option(conf, "astype", "quantize")?.map_or(dtype, |t| t.0);
        Ok(AsType { name: "quantize".into(), stored })
    }
}

impl Codec for AsType {
    fn name(&self) -> &str {
        &self.name
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToArray
    }
    fn encoded_dtype(&self, _decoded: DataType) -> DataType {
        self.stored
    }
    fn costly(&self) -> bool {
        false
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let n = checked_bytes(ctx.shape, 1)?;
        let bytes = map(&data.bytes, self.stored, ctx.dtype, n, &self.name, |v| v)?;
        Ok(Decoded { bytes, ..data })
    }
}

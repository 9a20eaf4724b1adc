//! HDF5's own filters (`hdf5_filter`: LZF 32000, HDF5's LZ4 framing 32004, scale-offset 6),
//! decoded by the decoder module that reads HDF5 files' structures (`decoders/hdf5`): the chunk as
//! stored, with the filter's id and its client data, to the bytes it encoded. A bytes→bytes codec.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{invalid, Result};
use crate::core::json::{Map, Value};
use alloc::format;
use alloc::vec::Vec;

#[derive(Debug)]
pub struct Hdf5Filter {
    /// The request to the module but for the size: `"op":"filter","filter":…,"params":[…]`.
    op: alloc::string::String,
}

impl Hdf5Filter {
    pub fn parse(conf: &Map) -> Result<Hdf5Filter> {
        let id = conf.get("filter").and_then(Value::as_u64).ok_or_else(|| invalid("hdf5_filter: no filter id"))?;
        let params: Option<Vec<u64>> = match conf.get("params") {
            None => Some(Vec::new()),
            Some(p) => p.as_array().and_then(|a| a.iter().map(Value::as_u64).collect()),
        };
        let params = params.ok_or_else(|| invalid("hdf5_filter: params are not unsigned integers"))?;
        let list = params.iter().map(|p| format!("{p}")).collect::<Vec<_>>().join(",");
        Ok(Hdf5Filter { op: format!("\"op\":\"filter\",\"filter\":{id},\"params\":[{list}]") })
    }
}

impl Codec for Hdf5Filter {
    fn name(&self) -> &str {
        "hdf5_filter"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        n.saturating_add(n / 8).saturating_add(1024)
    }
    fn decoder(&self) -> Option<&'static str> {
        Some(super::external::HDF5)
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let json = format!("{{{},\"size\":{}}}", self.op, ctx.limit);
        let mut input = Vec::with_capacity(4 + json.len() + 16 + data.bytes.len());
        input.extend_from_slice(&(json.len() as u32).to_le_bytes());
        input.extend_from_slice(json.as_bytes());
        input.extend_from_slice(&0u64.to_le_bytes());
        input.extend_from_slice(&(data.bytes.len() as u64).to_le_bytes());
        input.extend_from_slice(&data.bytes);
        drop(data);
        let out = super::external::run(ctx.decoders, super::external::HDF5, &input, &[])?;
        if out.len() > ctx.limit {
            return Err(crate::core::error::corrupt_in("hdf5_filter", "a filter decoded more bytes than the chunk holds"));
        }
        Ok(Decoded::bytes(out))
    }
}

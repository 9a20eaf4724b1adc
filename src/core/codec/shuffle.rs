//! numcodecs `Shuffle` (v2 filter, v3 `numcodecs.shuffle`): the bytes of `elementsize`-byte
//! elements regrouped by position (all first bytes, then all second bytes, …).
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{corrupt_chunk, invalid, zeroed, Result};
use crate::core::json::Map;
use alloc::format;

#[derive(Debug)]
pub struct Shuffle {
    size: usize,
}

impl Shuffle {
    pub fn parse(conf: &Map) -> Result<Shuffle> {
        let size = match conf.get("elementsize") {
            None => 4, // numcodecs' default
            Some(v) => v.as_u64().filter(|&n| n <= 1 << 16).ok_or_else(|| invalid("shuffle: elementsize"))? as usize,
        };
        Ok(Shuffle { size })
    }
}

impl Codec for Shuffle {
    fn name(&self) -> &str {
        "shuffle"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn decode(&self, data: Decoded, _ctx: &Ctx) -> Result<Decoded> {
        let es = self.size;
        if es <= 1 {
            return Ok(data);
        }
        let src = &data.bytes;
        if src.len() % es != 0 {
            return Err(corrupt_chunk(format!("shuffle: {} bytes is not a multiple of {es}", src.len())));
        }
        let mut out = zeroed(src.len())?;
        shardfetch_kernels::shuffle::unshuffle(es, src, &mut out);
        Ok(Decoded::bytes(out))
    }
}

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
        let count = src.len() / es;
        let mut out = zeroed(src.len())?;
        for j in 0..es {
            let plane = &src[j * count..(j + 1) * count];
            for (i, &b) in plane.iter().enumerate() {
                out[i * es + j] = b;
            }
        }
        Ok(Decoded::bytes(out))
    }
}

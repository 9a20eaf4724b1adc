//! `sharding_indexed` (Zarr v3, and the draft layout's shards): a shard holds inner chunks
//! plus an index of (offset, nbytes) pairs, at its start or end, optionally checksummed.
use super::{ByteSpan, IndexFormat, IndexSpan, ShardIndex, ABSENT};
use crate::core::codec::bytes::Bytes;
use crate::core::codec::crc32c::verify_crc32c;
use crate::core::error::{checked_bytes, err, invalid, Error, ErrorCode, Result};
use crate::core::json::{Map, Value};
use crate::core::metadata::json::{named, shape_of};
use crate::core::metadata::Named;
use alloc::boxed::Box;
use alloc::format;
use alloc::vec::Vec;

/// What a shard's inner chunks are.
#[derive(Clone, Debug, PartialEq)]
pub enum Inner {
    /// Chunks encoded by these codecs.
    Codecs(Vec<Named>),
    /// Shards again (nested sharding).
    Sharded(Box<Sharding>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Sharding {
    /// The inner chunk shape.
    pub chunk_shape: Vec<u64>,
    pub chunks_per_shard: Vec<u64>,
    pub inner: Inner,
    pub index_big_endian: bool,
    pub index_crc: bool,
    pub index_at_start: bool,
    n_chunks: u64,
}

impl Sharding {
    /// The sharding `codecs` describe when they are `[sharding_indexed]`, for shards of
    /// `shard_shape`.
    pub fn of(codecs: &[Named], shard_shape: &[u64]) -> Result<Option<Sharding>> {
        match codecs {
            [c] if c.name == "sharding_indexed" => Sharding::parse(&c.configuration, shard_shape).map(Some),
            _ => Ok(None),
        }
    }

    pub fn parse(conf: &Map, shard_shape: &[u64]) -> Result<Sharding> {
        let invalid = |m: &str| invalid(format!("sharding_indexed: {m}"));
        let chunk_shape = shape_of(conf.get("chunk_shape"), "sharding_indexed chunk_shape", false)?;
        let (chunks_per_shard, n_chunks) = chunks_per_shard(&chunk_shape, shard_shape)?;
        let codecs = match conf.get("codecs") {
            Some(Value::Array(list)) => list.iter().map(|c| Named::parse(c, "codec")).collect::<Result<Vec<_>>>()?,
            _ => return Err(invalid("needs a list of codecs")),
        };
        let inner = match Sharding::of(&codecs, &chunk_shape)? {
            Some(nested) => Inner::Sharded(Box::new(nested)),
            None => Inner::Codecs(codecs),
        };

        let big_endian = |c: Option<&Map>| Bytes::parse(c.unwrap_or(&Map::new())).map(|b| b.big_endian);
        let index_codecs = conf.get("index_codecs").and_then(Value::as_array);
        let index_codecs = index_codecs.ok_or_else(|| invalid("needs index_codecs"))?;
        let names: Vec<(&str, Option<&Map>)> =
            index_codecs.iter().map(|c| named(c, "index codec")).collect::<Result<_>>()?;
        let (index_big_endian, index_crc) = match names.as_slice() {
            [("bytes", c)] => (big_endian(*c)?, false),
            [("bytes", c), ("crc32c", _)] => (big_endian(*c)?, true),
            _ => {
                let list: Vec<&str> = names.iter().map(|n| n.0).collect();
                return err(
                    ErrorCode::UnsupportedCodec,
                    format!("unsupported index_codecs [\"{}\"] (expected bytes, optionally crc32c)", list.join("\", \"")),
                );
            }
        };
        let index_at_start = match conf.get("index_location").map(|v| v.as_str()) {
            None | Some(Some("end")) => false,
            Some(Some("start")) => true,
            _ => return Err(invalid("index_location must be \"start\" or \"end\"")),
        };
        Ok(Sharding { chunk_shape, chunks_per_shard, inner, index_big_endian, index_crc, index_at_start, n_chunks })
    }

    /// The same sharding applied to a shard of another shape (shards of a rectilinear grid).
    pub fn for_shard(&self, shard_shape: &[u64]) -> Result<Sharding> {
        let (chunks_per_shard, n_chunks) = chunks_per_shard(&self.chunk_shape, shard_shape)?;
        Ok(Sharding { chunks_per_shard, n_chunks, ..self.clone() })
    }

    pub fn index_len(&self) -> u64 {
        self.n_chunks * 16 + if self.index_crc { 4 } else { 0 }
    }

    /// C-order position of an inner chunk (coordinates within the shard).
    pub fn position(&self, coords: &[u64]) -> u64 {
        coords.iter().zip(&self.chunks_per_shard).fold(0, |acc, (&c, &n)| acc * n + c)
    }
}

/// Inner chunks per shard axis, and in all; the index must fit in memory.
fn chunks_per_shard(chunk_shape: &[u64], shard_shape: &[u64]) -> Result<(Vec<u64>, u64)> {
    if chunk_shape.len() != shard_shape.len() || chunk_shape.iter().zip(shard_shape).any(|(c, s)| s % c != 0) {
        return err(
            ErrorCode::InvalidMetadata,
            format!(
                "sharding_indexed: inner chunk shape {} does not divide the shard shape {}",
                crate::core::error::List(chunk_shape),
                crate::core::error::List(shard_shape)
            ),
        );
    }
    let per: Vec<u64> = shard_shape.iter().zip(chunk_shape).map(|(s, c)| s / c).collect();
    checked_bytes(&per, 16)?;
    Ok((per.clone(), per.iter().product()))
}

impl IndexFormat for Sharding {
    fn span(&self, _key: u64) -> IndexSpan {
        if self.index_at_start {
            IndexSpan::Head(self.index_len())
        } else {
            IndexSpan::Tail(self.index_len())
        }
    }

    fn decode(&self, _key: u64, bytes: &[u8], region: ByteSpan) -> Result<ShardIndex> {
        if bytes.len() as u64 != self.index_len() {
            return err(
                ErrorCode::CorruptShard,
                format!("shard index has {} bytes, expected {}", bytes.len(), self.index_len()),
            );
        }
        let n = (self.n_chunks * 16) as usize;
        if self.index_crc {
            verify_crc32c(&bytes[..n], &bytes[n..])
                .map_err(|e| Error::new(e.code, format!("shard index {}", e.message)))?;
        }
        let word = |c: &[u8]| {
            let b = [c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]];
            if self.index_big_endian {
                u64::from_be_bytes(b)
            } else {
                u64::from_le_bytes(b)
            }
        };
        let mut spans = Vec::with_capacity(self.n_chunks as usize);
        for e in bytes[..n].chunks_exact(16) {
            let (offset, len) = (word(&e[..8]), word(&e[8..]));
            if (offset, len) == ABSENT {
                spans.push(ABSENT);
                continue;
            }
            let abs = region.offset.checked_add(offset);
            let abs = abs.ok_or_else(|| Error::new(ErrorCode::CorruptShard, "shard index offset overflows"))?;
            spans.push((abs, len));
        }
        ShardIndex::dense(spans, region)
    }
}

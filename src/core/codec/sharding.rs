//! `sharding_indexed`: a shard holds inner chunks plus an index of (offset, nbytes) pairs.
use super::compress::verify_crc32c;
use super::CodecChain;
use crate::core::error::{checked_bytes, err, Error, ErrorCode, Result};
use crate::core::locate::{ByteSpan, IndexFormat, IndexSpan, ShardIndex, ABSENT};
use crate::core::metadata::{named, shape_of};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Map, Value};

#[derive(Clone, Debug, PartialEq)]
pub struct Sharding {
    /// The inner chunk shape.
    pub chunk_shape: Vec<u64>,
    pub chunks_per_shard: Vec<u64>,
    pub inner: CodecChain,
    pub index_big_endian: bool,
    pub index_crc: bool,
    pub index_at_start: bool,
    n_chunks: u64,
}

impl Sharding {
    pub fn parse(conf: Option<&Map<String, Value>>, shard_shape: &[u64]) -> Result<Sharding> {
        let invalid = |m: String| Error::new(ErrorCode::InvalidMetadata, format!("sharding_indexed: {m}"));
        let conf = conf.ok_or_else(|| invalid("needs a configuration".into()))?;
        let chunk_shape = shape_of(conf.get("chunk_shape"), "sharding_indexed chunk_shape", false)?;
        let (chunks_per_shard, n_chunks) = chunks_per_shard(&chunk_shape, shard_shape)?;
        let inner = CodecChain::parse(conf.get("codecs").unwrap_or(&Value::Null), &chunk_shape)?;

        let index_codecs = conf.get("index_codecs").and_then(Value::as_array);
        let index_codecs = index_codecs.ok_or_else(|| invalid("needs index_codecs".into()))?;
        let names: Vec<(&str, Option<&Map<String, Value>>)> =
            index_codecs.iter().map(|c| named(c, "index codec")).collect::<Result<_>>()?;
        let (index_big_endian, index_crc) = match names.as_slice() {
            [("bytes", c)] => (super::parse_endian(*c)?, false),
            [("bytes", c), ("crc32c", _)] => (super::parse_endian(*c)?, true),
            _ => {
                let list: Vec<&str> = names.iter().map(|n| n.0).collect();
                return err(
                    ErrorCode::UnsupportedCodec,
                    format!("unsupported index_codecs {list:?} (expected bytes, optionally crc32c)"),
                );
            }
        };
        let index_at_start = match conf.get("index_location").map(|v| v.as_str()) {
            None | Some(Some("end")) => false,
            Some(Some("start")) => true,
            _ => return Err(invalid("index_location must be \"start\" or \"end\"".into())),
        };
        Ok(Sharding { chunk_shape, chunks_per_shard, inner, index_big_endian, index_crc, index_at_start, n_chunks })
    }

    /// The draft storage transformer's index: little-endian, at the end, no checksum.
    pub fn draft(chunk_shape: Vec<u64>, per_shard: &[u64], inner: CodecChain) -> Result<Sharding> {
        let shard: Vec<u64> = chunk_shape.iter().zip(per_shard).map(|(c, n)| c.saturating_mul(*n)).collect();
        let (chunks_per_shard, n_chunks) = chunks_per_shard(&chunk_shape, &shard)?;
        Ok(Sharding {
            chunk_shape,
            chunks_per_shard,
            inner,
            index_big_endian: false,
            index_crc: false,
            index_at_start: false,
            n_chunks,
        })
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
                "sharding_indexed: inner chunk shape {chunk_shape:?} does not divide the shard shape {shard_shape:?}"
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

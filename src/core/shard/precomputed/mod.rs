//! `neuroglancer_uint64_sharded_v1`: chunk id → shard file and minishard, and the two index
//! levels inside a shard (one 16-byte shard-index entry, then the minishard index).
pub mod hash;

use super::{ByteSpan, IndexFormat, IndexSpan, ShardIndex};
use crate::core::codec::gzip::gunzip;
use crate::core::error::{corrupt_shard as corrupt, err, ErrorCode, Result};
use crate::core::metadata::precomputed::{DataEncoding, ShardingSpec};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// Largest decoded minishard index accepted (24 bytes per chunk: ~11M chunks).
const MINISHARD_INDEX_LIMIT: usize = 1 << 28;

fn low_mask(bits: u32) -> u64 {
    1u64.checked_shl(bits).map_or(u64::MAX, |b| b - 1)
}

impl ShardingSpec {
    /// (shard, minishard) of a chunk id.
    pub fn place(&self, chunk_id: u64) -> (u64, u64) {
        let h = self.hash.apply(chunk_id.checked_shr(self.preshift_bits).unwrap_or(0));
        let minishard = h & low_mask(self.minishard_bits);
        let shard = h.checked_shr(self.minishard_bits).unwrap_or(0) & low_mask(self.shard_bits);
        (shard, minishard)
    }

    /// `<hex>.shard`, zero-padded to ceil(shard_bits / 4) digits.
    pub fn shard_name(&self, shard: u64) -> String {
        format!("{shard:0width$x}.shard", width = self.shard_bits.div_ceil(4) as usize)
    }

    /// Bytes of the shard index at the start of every shard file.
    pub fn shard_index_end(&self) -> u64 {
        16u64 << self.minishard_bits
    }
}

/// Level 1: the shard-index entry of one minishard (the key), decoded into that minishard's
/// index location.
#[derive(Clone, Debug)]
pub struct ShardIndexEntry {
    pub spec: ShardingSpec,
}

impl IndexFormat for ShardIndexEntry {
    fn span(&self, minishard: u64) -> IndexSpan {
        IndexSpan::At { offset: minishard.saturating_mul(16), len: 16 }
    }

    fn decode(&self, minishard: u64, bytes: &[u8], region: ByteSpan) -> Result<ShardIndex> {
        let (Some(a), Some(b)) = (bytes.get(..8), bytes.get(8..16)) else {
            return Err(corrupt(format!("shard index entry has {} bytes, expected 16", bytes.len())));
        };
        let word = |w: &[u8]| u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        let (start, end) = (word(a), word(b));
        if start == end {
            return Ok(ShardIndex::missing()); // an empty minishard
        }
        if end < start {
            return Err(corrupt(format!("minishard {minishard}: index range {start}..{end} is reversed")));
        }
        let offset = self.spec.shard_index_end().checked_add(start);
        let offset = offset.ok_or_else(|| corrupt(format!("minishard {minishard}: index offset overflows")))?;
        ShardIndex::sparse(alloc::vec![minishard], alloc::vec![(offset, end - start)], region)
            .map_err(|e| corrupt(format!("minishard {minishard}: {}", e.message)))
    }
}

/// Level 2: a minishard index, decoded into chunk id → absolute (offset, length).
#[derive(Clone, Debug)]
pub struct MinishardIndex {
    pub spec: ShardingSpec,
}

impl IndexFormat for MinishardIndex {
    fn span(&self, _chunk_id: u64) -> IndexSpan {
        IndexSpan::Whole
    }

    fn decode(&self, _chunk_id: u64, bytes: &[u8], _region: ByteSpan) -> Result<ShardIndex> {
        let inflated;
        let data = match self.spec.minishard_index_encoding {
            DataEncoding::Raw => bytes,
            DataEncoding::Gzip => {
                inflated = gunzip(bytes, MINISHARD_INDEX_LIMIT)
                    .map_err(|e| corrupt(format!("minishard index: {}", e.message)))?;
                &inflated
            }
        };
        decode_minishard_index(data, self.spec.shard_index_end())
    }
}

/// `[3, n]` uint64 LE: delta-coded ids, offsets (delta from the previous chunk's end, the
/// first from the end of the shard index), sizes.
fn decode_minishard_index(data: &[u8], shard_index_end: u64) -> Result<ShardIndex> {
    if !data.len().is_multiple_of(24) {
        return err(ErrorCode::CorruptShard, format!("minishard index has {} bytes, not a multiple of 24", data.len()));
    }
    let n = data.len() / 24;
    let word = |row: usize, i: usize| {
        let at = (row * n + i) * 8;
        let w = &data[at..at + 8];
        u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
    };
    let mut ids = Vec::new();
    let mut spans = Vec::new();
    if ids.try_reserve_exact(n).is_err() || spans.try_reserve_exact(n).is_err() {
        return err(ErrorCode::TooLarge, format!("cannot allocate a minishard index of {n} chunks"));
    }
    let (mut id, mut pos) = (0u64, shard_index_end);
    for i in 0..n {
        let overflow = |what: &str| corrupt(format!("minishard index entry {i}: {what} overflows"));
        id = id.checked_add(word(0, i)).ok_or_else(|| overflow("chunk id"))?;
        if i > 0 && word(0, i) == 0 {
            return Err(corrupt(format!("minishard index lists chunk {id} twice")));
        }
        let start = pos.checked_add(word(1, i)).ok_or_else(|| overflow("offset"))?;
        let size = word(2, i);
        pos = start.checked_add(size).ok_or_else(|| overflow("chunk end"))?;
        ids.push(id);
        spans.push((start, size));
    }
    // Chunk data lies after the shard index; the shard's length is not known at this level.
    ShardIndex::sparse(ids, spans, ByteSpan { offset: shard_index_end, len: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metadata::precomputed::Hash;

    fn spec(minishard_bits: u32, shard_bits: u32) -> ShardingSpec {
        ShardingSpec {
            preshift_bits: 1,
            hash: Hash::Identity,
            minishard_bits,
            shard_bits,
            minishard_index_encoding: DataEncoding::Raw,
            data_encoding: DataEncoding::Raw,
        }
    }

    fn words(w: &[u64]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn placement_and_names() {
        let s = spec(2, 3);
        // id 1011011: preshift 1 drops the last bit, then minishard 01, shard 011 (the top 1 is masked).
        assert_eq!(s.place(0b101_1011), (0b011, 0b01));
        assert_eq!(s.shard_name(5), "5.shard");
        assert_eq!(spec(0, 0).shard_name(0), "0.shard");
        assert_eq!(spec(0, 9).shard_name(0x1f), "01f.shard");
        assert_eq!(spec(0, 64).place(u64::MAX), (u64::MAX >> 1, 0));
        let mut s = spec(60, 4);
        s.preshift_bits = 64;
        assert_eq!(s.place(u64::MAX), (0, 0));
        assert_eq!(s.shard_index_end(), 16 << 60);
    }

    #[test]
    fn shard_index_entry() {
        let f = ShardIndexEntry { spec: spec(2, 0) };
        assert_eq!(f.span(3), IndexSpan::At { offset: 48, len: 16 });
        let whole = ByteSpan { offset: 0, len: Some(200) };
        let i = f.decode(3, &words(&[10, 30]), whole).unwrap();
        assert_eq!(i.lookup(3).unwrap(), Some((64 + 10, 20)));
        assert_eq!(f.decode(3, &words(&[7, 7]), whole).unwrap().lookup(3).unwrap(), None);
        let code = |b: &[u8]| f.decode(3, b, whole).unwrap_err().code;
        assert_eq!(code(&words(&[30, 10])), ErrorCode::CorruptShard);
        let past = f.decode(3, &words(&[10, 300]), whole).unwrap();
        assert_eq!(past.lookup(3).unwrap_err().code, ErrorCode::CorruptShard, "past the end of the shard");
        assert_eq!(code(&words(&[u64::MAX - 1, u64::MAX])), ErrorCode::CorruptShard);
        assert_eq!(code(&[0; 15]), ErrorCode::CorruptShard);
    }

    #[test]
    fn minishard_index() {
        let f = MinishardIndex { spec: spec(1, 0) };
        let r = ByteSpan { offset: 100, len: Some(72) };
        // ids 5, 7, 20; chunks at 32 + 1 (size 4), right after it (size 2), 3 bytes later (size 0).
        let i = f.decode(0, &words(&[5, 2, 13, 1, 0, 3, 4, 2, 0]), r).unwrap();
        let got = [5, 7, 20, 6].map(|k| i.lookup(k).unwrap());
        assert_eq!(got, [Some((33, 4)), Some((37, 2)), Some((42, 0)), None]);
        let code = |w: &[u64]| f.decode(0, &words(w), r).unwrap_err().code;
        assert_eq!(code(&[5, 0, 0, 0, 1, 1]), ErrorCode::CorruptShard, "repeated id");
        assert_eq!(code(&[5, u64::MAX, 0, 0, 1, 1]), ErrorCode::CorruptShard, "id overflow");
        assert_eq!(code(&[5, u64::MAX, 1]), ErrorCode::CorruptShard, "offset overflow");
        assert_eq!(code(&[5, 0, u64::MAX]), ErrorCode::CorruptShard, "end overflow");
        assert_eq!(f.decode(0, &[0; 25], r).unwrap_err().code, ErrorCode::CorruptShard);
        assert_eq!(f.decode(0, &[], r).unwrap().lookup(0).unwrap(), None);
        let g = MinishardIndex { spec: ShardingSpec { minishard_index_encoding: DataEncoding::Gzip, ..spec(1, 0) } };
        assert_eq!(g.decode(0, &words(&[5, 2, 13]), r).unwrap_err().code, ErrorCode::CorruptShard);
    }
}

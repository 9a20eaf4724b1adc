//! The one abstraction every sharded layout reduces to: follow one or more indexes to the
//! (offset, length) of a chunk inside one object, then range-read it.
//!
//! A layout supplies an [`IndexFormat`] per level (where its index sits inside the current
//! region, and how to decode it); [`Source`](super::source::Source) does the fetching,
//! caching and sharing for all of them.
use super::error::{Error, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

/// Where a level's index sits inside the region it describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum IndexSpan {
    /// The first `n` bytes.
    Head(u64),
    /// The last `n` bytes.
    Tail(u64),
    /// `len` bytes at `offset` from the region start.
    At { offset: u64, len: u64 },
    /// The whole region.
    Whole,
}

/// A byte region of one object: the whole object (`offset` 0, `len` unknown) or a span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSpan {
    pub offset: u64,
    pub len: Option<u64>,
}

impl ByteSpan {
    pub const WHOLE: ByteSpan = ByteSpan { offset: 0, len: None };

    /// The bytes to read for this region.
    pub fn range(self) -> super::http::ByteRange {
        match self.len {
            None => super::http::ByteRange::Full,
            Some(len) => super::http::ByteRange::Range { offset: self.offset, len },
        }
    }
}

/// A decoded index: chunk key → absolute (offset, length) in the object.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShardIndex {
    /// Sorted keys for sparse indexes; `None` when `spans` is indexed by position.
    keys: Option<Vec<u64>>,
    spans: Vec<(u64, u64)>,
}

/// Marks an absent chunk in a dense index.
pub const ABSENT: (u64, u64) = (u64::MAX, u64::MAX);

impl ShardIndex {
    /// The index of an object that does not exist: every chunk is absent.
    pub fn missing() -> Self {
        ShardIndex::default()
    }

    /// Position-indexed spans, already absolute; [`ABSENT`] marks an absent chunk.
    /// Every present span must lie inside `region` when its length is known.
    pub fn dense(spans: Vec<(u64, u64)>, region: ByteSpan) -> Result<Self> {
        for &s in &spans {
            if s != ABSENT {
                check_span(s, region)?;
            }
        }
        Ok(ShardIndex { keys: None, spans })
    }

    /// Sparse index: `keys` sorted ascending, one span each.
    pub fn sparse(keys: Vec<u64>, spans: Vec<(u64, u64)>, region: ByteSpan) -> Result<Self> {
        if keys.len() != spans.len() || keys.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::new(ErrorCode::CorruptShard, "index keys are not strictly increasing"));
        }
        for &s in &spans {
            check_span(s, region)?;
        }
        Ok(ShardIndex { keys: Some(keys), spans })
    }

    pub fn lookup(&self, key: u64) -> Option<(u64, u64)> {
        let i = match &self.keys {
            Some(keys) => keys.binary_search(&key).ok()?,
            None => usize::try_from(key).ok()?,
        };
        self.spans.get(i).copied().filter(|&s| s != ABSENT)
    }

    pub fn nbytes(&self) -> usize {
        64 + self.spans.len() * 16 + self.keys.as_ref().map_or(0, |k| k.len() * 8)
    }
}

fn check_span((offset, len): (u64, u64), region: ByteSpan) -> Result<()> {
    let end = offset.checked_add(len);
    let limit = region.len.map(|l| region.offset.saturating_add(l));
    match (end, limit) {
        (None, _) => Err(Error::new(ErrorCode::CorruptShard, format!("index entry ({offset}, {len}) overflows"))),
        (Some(e), Some(l)) if offset < region.offset || e > l => Err(Error::new(
            ErrorCode::CorruptShard,
            format!("index entry ({offset}, {len}) lies outside the shard (bytes {}..{l})", region.offset),
        )),
        _ => Ok(()),
    }
}

/// One level of a layout's index.
///
/// `key` is the entry wanted at this level. Most layouts keep one index per region and ignore
/// it; a layout whose index is split (Neuroglancer's shard index: one 16-byte entry per
/// minishard) places the span by it. Decoded indexes are cached per (region, span), so every
/// key whose span is the same shares one fetch.
pub trait IndexFormat {
    fn span(&self, key: u64) -> IndexSpan;
    /// Decode the index bytes read from `span(key)` of `region` (whose length is known here
    /// when the index was read from the object's end).
    fn decode(&self, key: u64, bytes: &[u8], region: ByteSpan) -> Result<ShardIndex>;
}

//! Shard indexes: the one abstraction every sharded layout reduces to — follow one or more
//! indexes to the (offset, length) of a chunk inside one object, then range-read it. As in
//! Neuroglancer, a sharded store is a store over a store: [`locate`] reads indexes through the
//! [`Store`] (which caches and shares them) and answers with a span of the object.
//!
//! A layout supplies an [`IndexFormat`] per level (where its index sits inside the current
//! span, and how to decode it): Zarr `sharding_indexed` (also the draft layout's shards) in
//! [`zarr`], Neuroglancer's shard index and minishard indexes in [`precomputed`].
//!
//! May import: `error`, `nd`, `json`, `urls`, `transport`, `store`, `metadata`, `codec`.
pub mod precomputed;
pub mod zarr;

use crate::core::error::{Error, ErrorCode, Result};
use crate::core::store::Store;
use crate::core::transport::{ByteRange, HttpClient};
use alloc::format;
use alloc::rc::Rc;
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

    /// The bytes to read for this span.
    pub fn range(self) -> ByteRange {
        match self.len {
            None => ByteRange::Full,
            Some(len) => ByteRange::Range { offset: self.offset, len },
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

/// Marks an entry that lies outside its region: that chunk alone is corrupt.
const BAD: (u64, u64) = (u64::MAX, u64::MAX - 1);

impl ShardIndex {
    /// The index of an object that does not exist: every chunk is absent.
    pub fn missing() -> Self {
        ShardIndex::default()
    }

    /// Position-indexed spans, already absolute; [`ABSENT`] marks an absent chunk.
    /// Every present span must lie inside `region` when its length is known.
    /// An entry outside the region marks its own chunk corrupt, not the whole index (as
    /// zarr-python reads such a shard: the other chunks are fine).
    pub fn dense(mut spans: Vec<(u64, u64)>, region: ByteSpan) -> Result<Self> {
        for s in spans.iter_mut() {
            if *s != ABSENT && check_span(*s, region).is_err() {
                *s = BAD;
            }
        }
        Ok(ShardIndex { keys: None, spans })
    }

    /// Sparse index: `keys` sorted ascending, one span each.
    pub fn sparse(keys: Vec<u64>, spans: Vec<(u64, u64)>, region: ByteSpan) -> Result<Self> {
        if keys.len() != spans.len() || keys.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::new(ErrorCode::CorruptShard, "index keys are not strictly increasing"));
        }
        let mut spans = spans;
        for s in spans.iter_mut() {
            if check_span(*s, region).is_err() {
                *s = BAD;
            }
        }
        Ok(ShardIndex { keys: Some(keys), spans })
    }

    /// The span of `key`: `None` when absent, an error when its entry is corrupt.
    pub fn lookup(&self, key: u64) -> Result<Option<(u64, u64)>> {
        let i = match &self.keys {
            Some(keys) => match keys.binary_search(&key) {
                Ok(i) => i,
                Err(_) => return Ok(None),
            },
            None => match usize::try_from(key) {
                Ok(i) => i,
                Err(_) => return Ok(None),
            },
        };
        match self.spans.get(i).copied() {
            Some(BAD) => Err(Error::new(
                ErrorCode::CorruptShard,
                format!("the index entry of chunk {key} lies outside its shard (or overflows)"),
            )),
            Some(ABSENT) | None => Ok(None),
            s => Ok(s),
        }
    }

    /// What the index costs to keep.
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

/// Follow `levels` (index format, key in that index) from the whole object at `url` down to
/// one chunk: its span, or `None` when the object or the chunk is absent.
pub async fn locate<C: HttpClient>(
    store: &Store,
    c: &C,
    url: &str,
    levels: &[(&dyn IndexFormat, u64)],
) -> Result<Option<ByteSpan>> {
    let mut span = ByteSpan::WHOLE;
    for (depth, &(format, key)) in levels.iter().enumerate() {
        let index = index(store, c, url, span, depth, (format, key)).await?;
        match index.lookup(key).map_err(|e| e.at(url))? {
            None => return Ok(None),
            Some((offset, len)) => span = ByteSpan { offset, len: Some(len) },
        }
    }
    Ok(Some(span))
}

/// The decoded index holding `entry` in `span` at level `depth`: cached by the store, and
/// fetched once however many callers want it at the same time.
async fn index<C: HttpClient>(
    store: &Store,
    c: &C,
    url: &str,
    span: ByteSpan,
    depth: usize,
    (format, entry): (&dyn IndexFormat, u64),
) -> Result<Rc<ShardIndex>> {
    let at = format.span(entry);
    let (kind, a, b) = match at {
        IndexSpan::Head(n) => (0, n, 0),
        IndexSpan::Tail(n) => (1, n, 0),
        IndexSpan::At { offset, len } => (2, offset, len),
        IndexSpan::Whole => (3, 0, 0),
    };
    let key = alloc::vec![span.offset, depth as u64, kind, a, b];
    let work = || async {
        let fetched = match (at, span.len) {
            (IndexSpan::Tail(n), None) => store.read(c, url, ByteRange::Suffix(n)).await?,
            (at, len) => store.read(c, url, resolve(url, at, span.offset, len)?).await?,
        };
        match fetched {
            None => Ok(ShardIndex::missing()),
            Some(f) => {
                let known = ByteSpan { offset: span.offset, len: span.len.or(f.object_size) };
                format.decode(entry, &f.bytes, known).map_err(|e| e.at(url))
            }
        }
    };
    store.memo(c, url, key, ShardIndex::nbytes, work).await
}

/// The absolute byte range of an index placed at `at` inside the span at `offset`.
fn resolve(url: &str, at: IndexSpan, offset: u64, len: Option<u64>) -> Result<ByteRange> {
    let too_small = |need: u64| {
        Err(Error::new(
            ErrorCode::CorruptShard,
            format!("{url}: a {need}-byte index does not fit in the {}-byte shard", len.unwrap_or(0)),
        ))
    };
    Ok(match (at, len) {
        (IndexSpan::Whole, None) => ByteRange::Full,
        (IndexSpan::Whole, Some(l)) => ByteRange::Range { offset, len: l },
        (IndexSpan::Head(n), l) => {
            if l.is_some_and(|l| l < n) {
                return too_small(n);
            }
            ByteRange::Range { offset, len: n }
        }
        (IndexSpan::Tail(n), Some(l)) => {
            if l < n {
                return too_small(n);
            }
            ByteRange::Range { offset: offset + l - n, len: n }
        }
        (IndexSpan::Tail(n), None) => ByteRange::Suffix(n),
        (IndexSpan::At { offset: o, len: n }, l) => {
            let end = o.checked_add(n);
            if end.is_none() || l.is_some_and(|l| end.is_some_and(|e| e > l)) {
                return too_small(o.saturating_add(n));
            }
            ByteRange::Range { offset: offset.saturating_add(o), len: n }
        }
    })
}

//! A reference file's keys as held: sorted, each once, their names, target URLs and inline
//! values in one pool (`u32` positions), 40 bytes a key.
use alloc::string::String;
use alloc::vec::Vec;

/// `Ref::url` of inline text, and of inline base64.
pub(super) const INLINE: u32 = u32::MAX;
pub(super) const BASE64: u32 = u32::MAX - 1;
/// `Ref::len` of a whole object (`[url]`).
pub(super) const WHOLE: u64 = u64::MAX;
pub(super) const REF_BYTES: u64 = core::mem::size_of::<Ref>() as u64;
/// The memo key of the index (the store keys memos by URL too).
pub(super) const KEY_INDEX: u64 = 0x7265_6600;
/// One key: its name in the pool, and `len` bytes at `offset` of the target whose URL is in the
/// pool at `url` — or, for inline values (`url` INLINE or BASE64), of the pool.
#[derive(Clone, Copy)]
pub(super) struct Ref {
    pub(super) key: u32,
    pub(super) key_len: u32,
    pub(super) url: u32,
    pub(super) url_len: u32,
    pub(super) offset: u64,
    pub(super) len: u64,
}

/// A reference file's keys, sorted, each once (the last given wins; `gen` after `refs`); their
/// names, URLs and inline values in one pool (at most `MAX_ALLOC` bytes: `u32` positions).
pub struct Index {
    pub(super) pool: String,
    pub(super) refs: Vec<Ref>,
    /// A Parquet reference set's record layout (its `refs` are the metadata alone).
    pub(super) parquet: Option<Records>,
}

impl Index {
    pub(super) fn get(&self, key: &str) -> Option<&Ref> {
        crate::core::nd::find_sorted(self.refs.len(), &|i| key_of(&self.pool, &self.refs[i]), key).map(|i| &self.refs[i])
    }

    pub fn len(&self) -> usize {
        self.refs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.refs.is_empty()
    }
}

pub(super) fn text(pool: &str, at: u64, len: u64) -> &str {
    pool.get(at as usize..at.saturating_add(len) as usize).unwrap_or("")
}

pub(super) fn key_of<'k>(pool: &'k str, r: &Ref) -> &'k str {
    text(pool, r.key.into(), r.key_len.into())
}

/// A key's bytes: what sorting compares (in UTF-8 the same order as the text's, without its
/// char-boundary checks).
pub(super) fn key_bytes<'k>(pool: &'k str, r: &Ref) -> &'k [u8] {
    let at = r.key as usize;
    pool.as_bytes().get(at..at + r.key_len as usize).unwrap_or_default()
}

/// Where a Parquet reference set keeps its chunks: `record_size` rows per file
/// `<field>/refs.<k>.parq`, row `n` for chunk `n` of the field's grid in C order.
pub(super) struct Records {
    pub(super) record_size: u64,
    /// Each array's chunk grid, by its key (the `.zarray`'s directory).
    pub(super) grids: Vec<(String, Vec<u64>)>,
}


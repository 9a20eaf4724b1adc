//! What a store over a store (a zip archive, a reference file) needs of what lies beneath it:
//! byte ranges of its objects, and a cache of values derived from them (a directory, an index).
//! [`super::Transport`] provides it for HTTP objects, and a store for the objects of the stores
//! below one; the store kinds are written against this alone.
use super::http::{ByteRange, HttpClient};
use super::range::RangeRead;
use crate::core::error::Result;
use alloc::rc::Rc;
use alloc::vec::Vec;
use core::any::Any;
use core::future::Future;

pub trait Objects {
    /// The most bytes one answer may carry (`maxDecodedBytes`).
    fn max_body(&self) -> u64;
    /// The most bytes a metadata document may have (`maxMetadataBytes`).
    fn max_document(&self) -> u64;
    /// The stamp of what is read of the object at `url` now (see `versions`): a value derived
    /// from it under another stamp is of another version, not to be used.
    fn stamp(&self, url: &str) -> u64;
    /// Where the bytes of the object at `target` are is what the object at `by` says (a
    /// reference file's targets; see `versions::Versions::described_by`).
    fn described_by(&self, target: &str, by: &str);
    /// The objects under `prefix` never change (see `versions::Versions::immutable`).
    fn immutable(&self, prefix: &str);
    /// `range` of the object at `url`; `None` when it does not exist.
    async fn read<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>>;
    /// The whole object at `url` as a document of at most `limit` bytes; `None` when absent.
    async fn read_document<C: HttpClient>(&self, c: &C, url: &str, limit: u64) -> Result<Option<Vec<u8>>>;
    /// A value computed from the object at `url` under `key`, cached within the byte budget
    /// (`size` of it) and computed once however many want it at the same time.
    async fn memo<C, V, F, Fut>(&self, c: &C, url: &str, key: Vec<u64>, size: fn(&V) -> usize, work: F) -> Result<Rc<V>>
    where
        C: HttpClient,
        V: Any,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V>>;
}

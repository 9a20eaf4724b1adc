//! What a store over a store (a zip archive, a reference file) needs of the store beneath it:
//! byte ranges of its objects, and a cache of values derived from them (a directory, an index).
//! [`super::Store`] provides it; the stores inside objects are written against this alone.
use super::http::{ByteRange, HttpClient};
use crate::core::error::Result;
use alloc::rc::Rc;
use alloc::vec::Vec;
use core::any::Any;
use core::future::Future;

/// The last object a server sent whole for a ranged request, shared by the stores of a mount's
/// nodes (a zip archive, a reference file's HDF5 file, a repository's virtual targets): each
/// array would otherwise download it again.
pub type LastWhole = Rc<core::cell::RefCell<Option<(alloc::string::String, Rc<Vec<u8>>)>>>;

/// Bytes read, with the object's total size when the answer told it.
#[derive(Clone)]
pub struct RangeRead {
    pub bytes: Vec<u8>,
    pub object_size: Option<u64>,
}

pub trait Objects {
    /// The most bytes one answer may carry (`maxDecodedBytes`).
    fn max_body(&self) -> u64;
    /// The most bytes a metadata document may have (`maxMetadataBytes`).
    fn max_document(&self) -> u64;
    /// `range` of the object at `url` itself; `None` when it does not exist.
    async fn read_object<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>>;
    /// The whole object at `url` as a document of at most `limit` bytes; `None` when absent.
    async fn read_object_document<C: HttpClient>(&self, c: &C, url: &str, limit: u64) -> Result<Option<Vec<u8>>>;
    /// A value computed from the object at `url` under `key`, cached within the store's byte
    /// budget (`size` of it) and computed once however many want it at the same time.
    async fn memo<C, V, F, Fut>(&self, c: &C, url: &str, key: Vec<u64>, size: fn(&V) -> usize, work: F) -> Result<Rc<V>>
    where
        C: HttpClient,
        V: Any,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V>>;
}

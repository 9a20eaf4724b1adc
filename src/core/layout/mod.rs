//! Layouts: where each read chunk of an array lives (a storage object and the index levels
//! inside it) and how its stored bytes decode — one [`Layout`] per format family, built from
//! the array's [`ArrayMetadata`].
//!
//! May import: `error`, `nd`, `json`, `metadata`, `codec`, `shard`.
pub mod build;
pub mod morton;
pub mod precomputed;
pub mod zarr;

pub use build::build;

use crate::core::codec::{Decoded, Decoders};
use crate::core::error::Result;
use crate::core::metadata::Grid;
use crate::core::shard::IndexFormat;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

/// The storage object holding one read chunk, and the index levels leading to it inside the
/// object (outermost first, each a format and the key wanted in it; none when the object is
/// the chunk).
pub struct Located {
    /// Relative to the array's base URL.
    pub key: String,
    pub levels: Vec<(Rc<dyn IndexFormat>, u64)>,
}

/// A format's storage layout.
pub trait Layout {
    /// The grid of read chunks (the innermost chunks of a sharded array).
    fn grid(&self) -> &Grid;
    /// The storage object's chunk shape, when chunks are sharded on a regular grid.
    fn shard_shape(&self) -> Option<Vec<u64>>;
    fn locate(&self, coords: &[u64]) -> Result<Located>;
    /// How many read chunks the storage object holding chunk `coords` has room for (within
    /// the array), when the layout knows: a read wanting all of them wants the whole object.
    fn chunks_in_object(&self, _coords: &[u64]) -> Option<u64> {
        None
    }
    /// Decode the stored bytes of read chunk `coords` into little-endian elements (with the
    /// external decoders its codecs need, when they need one).
    fn decode(&self, coords: &[u64], bytes: Vec<u8>, decoders: Option<&dyn Decoders>) -> Result<Decoded>;
    /// The external decoders (see [`crate::core::codec::external`]) decoding needs.
    fn decoders(&self) -> Vec<&'static str>;
    /// Whether decoding is real work (decompression, checksums), worth a worker: moving
    /// plain bytes to a worker and back costs more than arranging them here.
    fn costly_decode(&self) -> bool;
}

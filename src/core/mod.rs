//! The pure core: formats, metadata, codecs, shard indexes, chunk grids, selections.
//! No JS, no `unsafe`, `core` + `alloc` only; network access goes through [`http::HttpClient`].
#![forbid(unsafe_code)]

pub mod array;
pub mod cache;
pub mod codec;
pub mod dedup;
pub mod draft;
pub mod dtype;
pub mod error;
pub mod grid;
pub mod http;
pub mod limit;
pub mod locate;
pub mod merge;
pub mod metadata;
pub mod open;
pub mod precomputed;
pub mod selection;
pub mod source;
pub mod spec;
pub mod v2;
pub mod zarr;

pub use error::{Error, ErrorCode, Result};

//! The pure core: formats, metadata, codecs, shard indexes, chunk grids, selections.
//! No JS, no `unsafe`, `core` + `alloc` only; network access goes through [`http::HttpClient`].
#![forbid(unsafe_code)]

pub mod array;
pub mod cache;
pub mod codec;
pub mod dedup;
pub mod dtype;
pub mod error;
pub mod http;
pub mod locate;
pub mod metadata;
pub mod precomputed;
pub mod selection;
pub mod source;

pub use error::{Error, ErrorCode, Result};

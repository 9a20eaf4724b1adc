//! The pure core (`no_std` + `alloc`, no `unsafe`, no JS), in layers that import only
//! downward; network access goes through [`transport::HttpClient`].
//!
//! | layer | what | may import |
//! |---|---|---|
//! | [`error`], [`nd`], [`json`], [`zstd`], [`crc`], [`urls`], [`bytes`], [`external`] | errors and limits; n-d index arithmetic and sorted search; JSON values, parser, serialiser; bounded zstd decoding; CRC-32 and CRC-32C; URL joins; bounded little-endian reads; the decoders kept outside the module | — |
//! | [`transport`] | the bytes of HTTP objects: ranges and their fallbacks, retries, sharing, coalescing, cache, what holds whole objects, limiter, counters | the above |
//! | [`store`] | where a key's bytes are: a stack of layers, one store kind each (plain, zip, reference files, Icechunk; a folder each, one registry), over the transport; the consolidated-metadata overlay | + `transport` |
//! | [`metadata`] | documents → one array description (all formats) | `error`, `nd`, `json` |
//! | [`codec`] | one file per codec behind one trait; chains | + `metadata` |
//! | [`shard`] | shard indexes → byte spans, read through the store | + `store`, `codec` |
//! | [`layout`] | where each chunk lives and how it decodes, per format family | + `shard` |
//! | [`read`] | the array and its one read path: plan, locate, read, decode, assemble | + `layout` |
//! | [`open`] | opening nodes: metadata requests and format detection | everything |
//!
//! `tests/layers.rs` fails when an import goes upward or a cycle appears.
#![forbid(unsafe_code)]

pub mod bytes;
pub mod codec;
pub mod crc;
pub mod error;
pub mod external;
pub mod json;
pub mod layout;
pub mod metadata;
pub mod nd;
pub mod open;
pub mod read;
pub mod shard;
pub mod store;
pub mod transport;
pub mod urls;
pub mod zstd;

pub use error::{Error, ErrorCode, Result};

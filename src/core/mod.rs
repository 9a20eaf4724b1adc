//! The pure core (`no_std` + `alloc`, no `unsafe`, no JS), in layers that import only
//! downward; network access goes through [`storage::HttpClient`].
//!
//! | layer | what | may import |
//! |---|---|---|
//! | [`error`], [`nd`], [`json`], [`zstd`], [`crc`] | errors and limits; n-d index arithmetic; JSON values, parser, serialiser; bounded zstd decoding; CRC-32 and CRC-32C | — |
//! | [`storage`] | byte reads over HTTP: fallbacks, sharing, coalescing, cache, limiter; stores over stores (zip archives, Icechunk repositories, consolidated documents) | `error`, `nd`, `json`, `zstd`, `crc` |
//! | [`metadata`] | documents → one array description (all formats) | `error`, `nd`, `json` |
//! | [`codec`] | one file per codec behind one trait; chains | + `metadata` |
//! | [`shard`] | shard indexes → byte spans, read through the store | + `storage`, `codec` |
//! | [`layout`] | where each chunk lives and how it decodes, per format family | + `shard` |
//! | [`read`] | the array and its one read path: plan, locate, read, decode, assemble | + `layout` |
//! | [`open`] | opening nodes: metadata requests and format detection | everything |
//!
//! `tests/layers.rs` fails when an import goes upward or a cycle appears.
#![forbid(unsafe_code)]

pub mod codec;
pub mod crc;
pub mod error;
pub mod json;
pub mod layout;
pub mod metadata;
pub mod nd;
pub mod open;
pub mod read;
pub mod shard;
pub mod storage;
pub mod zstd;

pub use error::{Error, ErrorCode, Result};

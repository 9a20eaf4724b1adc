//! CRC-32 (gzip's trailer, zip entries, numcodecs `crc32`) and CRC-32C (Zarr's `crc32c`, shard
//! indexes): computed in `shardfetch-kernels`, compiled at opt-level 3.
//!
//! May import: nothing.
pub use shardfetch_kernels::crc::{crc32, crc32c};

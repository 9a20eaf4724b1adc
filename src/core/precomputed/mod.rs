//! Neuroglancer precomputed volumes: the `info` file, sharded (`neuroglancer_uint64_sharded_v1`)
//! and unsharded chunk layouts, and the chunk encodings (raw, compressed_segmentation, jpeg, png).
pub mod cseg;
pub mod hash;
pub mod image;
pub mod info;
pub mod morton;
pub mod scale;
pub mod sharding;

pub use info::{DataEncoding, Encoding, Hash, ScaleInfo, ScaleRef, ShardingSpec, VolumeInfo};
pub use scale::{Levels, Scale};

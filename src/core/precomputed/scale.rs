//! One opened scale of a precomputed volume: where each chunk lives and how to decode it.
//!
//! API axes are `[x, y, z, channel]`, zero-based from `voxel_offset`; the channel axis has a
//! single chunk.
use super::info::{DataEncoding, Encoding, ScaleInfo, ScaleRef, ShardingSpec, VolumeInfo};
use super::morton::Morton;
use super::sharding::{MinishardIndex, ShardIndexEntry};
use super::{cseg, image};
use crate::core::codec::compress::gunzip;
use crate::core::codec::Decoded;
use crate::core::dtype::DataType;
use crate::core::error::{checked_bytes, err, ErrorCode, Result, MAX_ALLOC};
use crate::core::locate::IndexFormat;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

struct Sharded {
    spec: ShardingSpec,
    morton: Morton,
    entry: Rc<dyn IndexFormat>,
    minishard: Rc<dyn IndexFormat>,
}

pub struct Scale {
    info: Rc<VolumeInfo>,
    index: usize,
    grid: [u64; 3],
    sharded: Option<Sharded>,
}

/// The levels of a sharded chunk: (format, key) from the shard file down to the chunk.
pub type Levels = Vec<(Rc<dyn IndexFormat>, u64)>;

impl Scale {
    pub fn open(info: Rc<VolumeInfo>, which: ScaleRef) -> Result<Scale> {
        let index = info.find(which)?;
        let s = &info.scales[index];
        let (dtype, nc) = (info.data_type, info.num_channels);
        let bad =
            |why: &str| err(ErrorCode::InvalidMetadata, format!("scale {:?}: {} {why}", s.key, s.encoding.name()));
        if matches!(s.encoding, Encoding::Jpeg | Encoding::Png) && !image::supported(s.encoding.name()) {
            return err(
                ErrorCode::UnsupportedCodec,
                format!("scale {:?}: encoding {:?} is not in this build", s.key, s.encoding.name()),
            );
        }
        match &s.encoding {
            Encoding::Raw => {}
            Encoding::CompressedSegmentation(_) => {
                if !matches!(dtype, DataType::UInt32 | DataType::UInt64) {
                    return bad("needs data_type uint32 or uint64");
                }
            }
            Encoding::Jpeg => {
                if dtype != DataType::UInt8 || !(nc == 1 || nc == 3) {
                    return bad("needs data_type uint8 and 1 or 3 channels");
                }
            }
            Encoding::Png => {
                if !matches!(dtype, DataType::UInt8 | DataType::UInt16) || !(1..=4).contains(&nc) {
                    return bad("needs data_type uint8 or uint16 and 1 to 4 channels");
                }
            }
            Encoding::Other(name) => {
                return err(ErrorCode::UnsupportedCodec, format!("scale {:?}: unsupported encoding {name:?}", s.key))
            }
        }
        let c = s.chunk_size;
        checked_bytes(&[c[0], c[1], c[2], nc], dtype.size() as u64)?;
        let grid = [0, 1, 2].map(|i| s.size[i].div_ceil(c[i]));
        let sharded = match s.sharding {
            None => None,
            Some(spec) => Some(Sharded {
                spec,
                morton: Morton::new(grid)?,
                entry: Rc::new(ShardIndexEntry { spec }),
                minishard: Rc::new(MinishardIndex { spec }),
            }),
        };
        Ok(Scale { info, index, grid, sharded })
    }

    /// Parse an `info` file and open one of its scales.
    pub fn from_info(text: &[u8], which: ScaleRef) -> Result<Scale> {
        Scale::open(Rc::new(VolumeInfo::parse(text)?), which)
    }

    pub fn info(&self) -> &VolumeInfo {
        &self.info
    }
    /// Every scale of the volume (for listing).
    pub fn scales(&self) -> &[ScaleInfo] {
        &self.info.scales
    }
    /// This scale's position in [`scales`](Self::scales).
    pub fn index(&self) -> usize {
        self.index
    }
    pub fn meta(&self) -> &ScaleInfo {
        &self.info.scales[self.index]
    }
    pub fn key(&self) -> &str {
        &self.meta().key
    }
    pub fn dtype(&self) -> DataType {
        self.info.data_type
    }
    pub fn resolution(&self) -> [f64; 3] {
        self.meta().resolution
    }
    pub fn voxel_offset(&self) -> [i64; 3] {
        self.meta().voxel_offset
    }
    pub fn encoding(&self) -> &Encoding {
        &self.meta().encoding
    }
    pub fn sharding(&self) -> Option<&ShardingSpec> {
        self.sharded.as_ref().map(|s| &s.spec)
    }
    /// `[x, y, z, channel]`.
    pub fn shape(&self) -> [u64; 4] {
        let s = self.meta().size;
        [s[0], s[1], s[2], self.info.num_channels]
    }
    /// `[x, y, z, channel]`.
    pub fn chunk_shape(&self) -> [u64; 4] {
        let c = self.meta().chunk_size;
        [c[0], c[1], c[2], self.info.num_channels]
    }
    /// Chunks along `[x, y, z, channel]`.
    pub fn grid(&self) -> [u64; 4] {
        [self.grid[0], self.grid[1], self.grid[2], 1]
    }

    fn check(&self, coords: &[u64]) -> Result<[u64; 3]> {
        let grid = self.grid();
        if coords.len() != 4 || coords.iter().zip(&grid).any(|(c, g)| c >= g) {
            return err(
                ErrorCode::InvalidSelection,
                format!("scale {:?}: chunk {coords:?} is outside the chunk grid {grid:?}", self.key()),
            );
        }
        Ok([coords[0], coords[1], coords[2]])
    }

    /// The chunk's `[x, y, z]` extent, clipped at the volume's upper bound.
    pub fn clipped(&self, coords: &[u64]) -> Result<[u64; 3]> {
        let g = self.check(coords)?;
        let (c, s) = (self.meta().chunk_size, self.meta().size);
        Ok([0, 1, 2].map(|i| c[i].min(s[i] - g[i] * c[i])))
    }

    /// The compressed Morton code of a chunk (its id in a sharded scale).
    pub fn chunk_id(&self, coords: &[u64]) -> Result<Option<u64>> {
        let g = self.check(coords)?;
        Ok(self.sharded.as_ref().map(|s| s.morton.encode(g)))
    }

    /// The object holding chunk `coords` (relative to the volume's base URL) and the index
    /// levels inside it (none for an unsharded scale).
    pub fn locate(&self, coords: &[u64]) -> Result<(String, Levels)> {
        let g = self.check(coords)?;
        let key = self.key();
        match &self.sharded {
            Some(s) => {
                let id = s.morton.encode(g);
                let (shard, minishard) = s.spec.place(id);
                let levels: Levels = vec![(s.entry.clone(), minishard), (s.minishard.clone(), id)];
                Ok((format!("{key}/{}", s.spec.shard_name(shard)), levels))
            }
            None => {
                let m = self.meta();
                let [x, y, z] = [0, 1, 2].map(|i| {
                    // Fits: voxel_offset + size was checked not to overflow i64.
                    let lo = m.voxel_offset[i] + (g[i] * m.chunk_size[i]) as i64;
                    let hi = lo + m.chunk_size[i].min(m.size[i] - g[i] * m.chunk_size[i]) as i64;
                    format!("{lo}-{hi}")
                });
                Ok((format!("{key}/{x}_{y}_{z}"), Vec::new()))
            }
        }
    }

    /// Decode the stored bytes of chunk `coords`: little-endian elements with strides (in
    /// elements) along `[x, y, z, channel]` for the clipped chunk.
    pub fn decode(&self, coords: &[u64], bytes: Vec<u8>) -> Result<Decoded> {
        let [nx, ny, nz] = self.clipped(coords)?;
        let nc = self.info.num_channels;
        let elem = self.dtype().size();
        let raw_len = checked_bytes(&[nc, nz, ny, nx], elem as u64)?;
        let gzipped = self.sharded.as_ref().is_some_and(|s| s.spec.data_encoding == DataEncoding::Gzip);
        let data = if gzipped {
            let limit = match self.encoding() {
                Encoding::Raw => raw_len,
                // Encoded forms may exceed the raw size (tables, headers, noisy images).
                _ => raw_len.saturating_mul(4).saturating_add(1 << 16).min(MAX_ALLOC as usize),
            };
            gunzip(&bytes, limit)?
        } else {
            bytes
        };
        let voxels = nx * ny * nz;
        let planar = vec![1, nx, nx * ny, voxels];
        let interleaved = vec![nc, nx * nc, nx * ny * nc, 1];
        match self.encoding() {
            Encoding::Raw => {
                if data.len() != raw_len {
                    return err(
                        ErrorCode::CorruptChunk,
                        format!("raw chunk {coords:?} has {} bytes, expected {raw_len}", data.len()),
                    );
                }
                Ok(Decoded { bytes: data, strides: planar })
            }
            Encoding::CompressedSegmentation(block) => {
                Ok(Decoded { bytes: cseg::decode(&data, elem, *block, [nx, ny, nz], nc)?, strides: planar })
            }
            Encoding::Jpeg => Ok(Decoded { bytes: image::decode_jpeg(&data, voxels, nc)?, strides: interleaved }),
            Encoding::Png => Ok(Decoded { bytes: image::decode_png(&data, elem, voxels, nc)?, strides: interleaved }),
            Encoding::Other(name) => err(ErrorCode::UnsupportedCodec, format!("unsupported encoding {name:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn open(scale: serde_json::Value, dtype: &str, nc: u64) -> Result<Scale> {
        let info = json!({"data_type": dtype, "num_channels": nc, "type": "image", "scales": [scale]});
        Scale::from_info(serde_json::to_string(&info).unwrap().as_bytes(), ScaleRef::Index(0))
    }

    #[test]
    fn unsharded_keys_include_the_offset_and_clip() {
        let s = open(
            json!({"key": "a/", "size": [10, 5, 3], "voxel_offset": [-4, 0, 7], "chunk_sizes": [[4, 4, 4]],
                   "resolution": [1, 1, 1], "encoding": "raw"}),
            "uint16",
            2,
        )
        .unwrap();
        assert_eq!((s.shape(), s.chunk_shape(), s.grid()), ([10, 5, 3, 2], [4, 4, 4, 2], [3, 2, 1, 1]));
        assert_eq!(s.locate(&[2, 1, 0, 0]).unwrap().0, "a/4-6_4-5_7-10");
        assert!(s.locate(&[0, 0, 0, 0]).unwrap().1.is_empty());
        assert_eq!(s.locate(&[3, 0, 0, 0]).err().unwrap().code, ErrorCode::InvalidSelection);
        assert_eq!(s.locate(&[0, 0, 0, 1]).err().unwrap().code, ErrorCode::InvalidSelection);
        assert_eq!(s.locate(&[0, 0, 0]).err().unwrap().code, ErrorCode::InvalidSelection);
        // Chunk (2, 1, 0) is 2x1x3, 2 channels of uint16.
        let d = s.decode(&[2, 1, 0, 0], (0..24).collect()).unwrap();
        assert_eq!(d.strides, [1, 2, 2, 6]);
        assert_eq!(s.decode(&[2, 1, 0, 0], vec![0; 23]).unwrap_err().code, ErrorCode::CorruptChunk);
    }

    #[test]
    fn encodings_need_their_data_types() {
        let scale = |enc: &str| {
            json!({"key": "k", "size": [8, 8, 8], "chunk_sizes": [[8, 8, 8]], "resolution": [1, 1, 1],
                   "encoding": enc, "compressed_segmentation_block_size": [8, 8, 8]})
        };
        assert!(open(scale("compressed_segmentation"), "uint64", 1).is_ok());
        assert_eq!(open(scale("compressed_segmentation"), "uint8", 1).err().unwrap().code, ErrorCode::InvalidMetadata);
        assert_eq!(open(scale("jpeg"), "uint16", 1).err().unwrap().code, ErrorCode::InvalidMetadata);
        assert_eq!(open(scale("jpeg"), "uint8", 2).err().unwrap().code, ErrorCode::InvalidMetadata);
        assert_eq!(open(scale("png"), "uint32", 1).err().unwrap().code, ErrorCode::InvalidMetadata);
        let e = open(scale("kempressed"), "float32", 1).err().unwrap();
        assert_eq!(e.code, ErrorCode::UnsupportedCodec);
        assert!(e.message.contains("kempressed"), "{e}");
        let mut big = scale("raw");
        big["chunk_sizes"] = json!([[1 << 20, 1 << 20, 1 << 20]]);
        assert_eq!(open(big, "uint8", 1).err().unwrap().code, ErrorCode::TooLarge);
        let mut huge = scale("raw");
        huge["size"] = json!([1u64 << 62, 1u64 << 62, 1]);
        huge["chunk_sizes"] = json!([[1, 1, 1]]);
        huge["sharding"] = json!({"@type": "neuroglancer_uint64_sharded_v1", "hash": "identity", "preshift_bits": 0,
                                  "minishard_bits": 0, "shard_bits": 0});
        assert_eq!(open(huge, "uint8", 1).err().unwrap().code, ErrorCode::InvalidMetadata);
    }

    #[test]
    fn sharded_levels() {
        let s = open(
            json!({"key": "s0", "size": [64, 64, 64], "chunk_sizes": [[16, 16, 16]], "resolution": [1, 1, 1],
                   "encoding": "raw", "sharding": {"@type": "neuroglancer_uint64_sharded_v1", "hash": "identity",
                   "preshift_bits": 1, "minishard_bits": 2, "shard_bits": 3, "data_encoding": "gzip"}}),
            "uint8",
            1,
        )
        .unwrap();
        // (1, 1, 1) → id 0b111; >> 1 = 0b11: minishard 3, shard 0.
        assert_eq!(s.chunk_id(&[1, 1, 1, 0]).unwrap(), Some(7));
        let (key, levels) = s.locate(&[1, 1, 1, 0]).unwrap();
        assert_eq!(key, "s0/0.shard");
        assert_eq!(levels.iter().map(|l| l.1).collect::<Vec<_>>(), [3, 7]);
        assert_eq!(s.decode(&[0, 0, 0, 0], vec![1, 2, 3]).unwrap_err().code, ErrorCode::CorruptChunk);
    }
}

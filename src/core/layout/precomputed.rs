//! One scale of a Neuroglancer precomputed volume: where each chunk lives (an unsharded
//! chunk file, or a shard of `neuroglancer_uint64_sharded_v1` by compressed Morton code) and
//! the codecs its encoding amounts to.
//!
//! API axes are `[x, y, z, channel]`, zero-based from `voxel_offset`; the channel axis has a
//! single chunk. Chunks at the volume's upper bound are stored clipped.
use super::morton::Morton;
use super::{Layout, Located};
use crate::core::codec::bytes::Bytes;
use crate::core::codec::compresso::Compresso;
use crate::core::codec::Decoders;
use crate::core::codec::cseg::CompressedSegmentation;
use crate::core::codec::gzip::Gzip;
use crate::core::codec::jpeg::Jpeg;
use crate::core::codec::jxl::Jxl;
use crate::core::codec::png::Png;
use crate::core::codec::transpose::Transpose;
use crate::core::codec::{Chain, Codec, Decoded};
use crate::core::error::{checked_bytes, err, ErrorCode, Result};
use crate::core::metadata::precomputed::{DataEncoding, Encoding, ScaleInfo, ScaleRef, VolumeInfo};
use crate::core::metadata::{DataType, Grid};
use crate::core::shard::precomputed::{MinishardIndex, ShardIndexEntry};
use crate::core::shard::IndexFormat;
use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::vec;
use alloc::vec::Vec;

struct Sharded {
    spec: crate::core::metadata::precomputed::ShardingSpec,
    morton: Morton,
    entry: Rc<dyn IndexFormat>,
    minishard: Rc<dyn IndexFormat>,
}

pub struct ScaleLayout {
    volume: Rc<VolumeInfo>,
    index: usize,
    grid: Grid,
    sharded: Option<Sharded>,
    chain: Chain,
}

impl ScaleLayout {
    pub fn new(volume: Rc<VolumeInfo>, index: usize) -> Result<ScaleLayout> {
        let s = volume.scales.get(index).ok_or_else(|| crate::core::error::invalid("no such scale"))?;
        let (dtype, nc) = (volume.data_type, volume.num_channels);
        let bad =
            |why: &str| err(ErrorCode::InvalidMetadata, format!("scale \"{}\": {} {why}", s.key, s.encoding.name()));
        let (array, to_bytes): (Vec<Box<dyn Codec>>, Box<dyn Codec>) = match &s.encoding {
            // Stored `[channel][z][y][x]`: the transpose of `[x, y, z, channel]`.
            Encoding::Raw => {
                (vec![Box::new(Transpose { order: vec![3, 2, 1, 0] })], Box::new(Bytes { big_endian: false }))
            }
            Encoding::CompressedSegmentation(block) => {
                if !matches!(dtype, DataType::UInt32 | DataType::UInt64) {
                    return bad("needs data_type uint32 or uint64");
                }
                (Vec::new(), Box::new(CompressedSegmentation { block: *block }))
            }
            Encoding::Jpeg => {
                if dtype != DataType::UInt8 || !(nc == 1 || nc == 3) {
                    return bad("needs data_type uint8 and 1 or 3 channels");
                }
                (Vec::new(), Box::new(Jpeg))
            }
            Encoding::Png => {
                if !matches!(dtype, DataType::UInt8 | DataType::UInt16) || !(1..=4).contains(&nc) {
                    return bad("needs data_type uint8 or uint16 and 1 to 4 channels");
                }
                (Vec::new(), Box::new(Png))
            }
            Encoding::Jxl => {
                if dtype != DataType::UInt8 || !matches!(nc, 1 | 3 | 4) {
                    return bad("needs data_type uint8 and 1, 3 or 4 channels");
                }
                (Vec::new(), Box::new(Jxl))
            }
            Encoding::Compresso => {
                if !matches!(dtype, DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64) || nc != 1
                {
                    return bad("needs an unsigned integer data_type and 1 channel");
                }
                (Vec::new(), Box::new(Compresso))
            }
            Encoding::Other(name) => {
                return err(ErrorCode::UnsupportedCodec, format!("scale \"{}\": unsupported encoding \"{name}\"", s.key))
            }
        };
        let c = s.chunk_size;
        checked_bytes(&[c[0], c[1], c[2], nc], dtype.size() as u64)?;
        let counts = [0, 1, 2].map(|i| s.size[i].div_ceil(c[i]));
        let sharded = match s.sharding {
            None => None,
            Some(spec) => Some(Sharded {
                spec,
                morton: Morton::new(counts)?,
                entry: Rc::new(ShardIndexEntry { spec }),
                minishard: Rc::new(MinishardIndex { spec }),
            }),
        };
        let gzipped = sharded.as_ref().is_some_and(|s| s.spec.data_encoding == DataEncoding::Gzip);
        let bytes: Vec<Box<dyn Codec>> = if gzipped { vec![Box::new(Gzip)] } else { Vec::new() };
        let chain = Chain::new(array, to_bytes, bytes, dtype);
        let grid = Grid::regular(&[c[0], c[1], c[2], nc], &[s.size[0], s.size[1], s.size[2], nc]);
        Ok(ScaleLayout { volume, index, grid, sharded, chain })
    }

    /// Parse an `info` file and open one of its scales.
    pub fn from_info(text: &[u8], which: ScaleRef) -> Result<ScaleLayout> {
        let volume = VolumeInfo::parse(text)?;
        let index = volume.find(which)?;
        ScaleLayout::new(Rc::new(volume), index)
    }

    pub fn volume(&self) -> &VolumeInfo {
        &self.volume
    }
    /// This scale's position in the volume's scales.
    pub fn index(&self) -> usize {
        self.index
    }
    pub fn scale(&self) -> &ScaleInfo {
        &self.volume.scales[self.index]
    }

    fn check(&self, coords: &[u64]) -> Result<[u64; 3]> {
        if !self.grid.contains(coords) {
            return err(
                ErrorCode::InvalidSelection,
                format!(
                    "scale \"{}\": chunk {} is outside the chunk grid {}",
                    self.scale().key,
                    crate::core::error::List(coords),
                    crate::core::error::List(&self.grid.count())
                ),
            );
        }
        Ok([coords[0], coords[1], coords[2]])
    }

    /// The compressed Morton code of a chunk (its id in a sharded scale).
    pub fn chunk_id(&self, coords: &[u64]) -> Result<Option<u64>> {
        let g = self.check(coords)?;
        Ok(self.sharded.as_ref().map(|s| s.morton.encode(g)))
    }
}

impl Layout for ScaleLayout {
    fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Shards hold chunks chosen by hash, not a box of the volume: no shard shape.
    fn shard_shape(&self) -> Option<Vec<u64>> {
        None
    }

    fn locate(&self, coords: &[u64]) -> Result<Located> {
        let g = self.check(coords)?;
        let key = &self.scale().key;
        match &self.sharded {
            Some(s) => {
                let id = s.morton.encode(g);
                let (shard, minishard) = s.spec.place(id);
                let levels = vec![(s.entry.clone(), minishard), (s.minishard.clone(), id)];
                Ok(Located { key: format!("{key}/{}", s.spec.shard_name(shard)), levels })
            }
            None => {
                let m = self.scale();
                let [x, y, z] = [0, 1, 2].map(|i| {
                    // Fits: voxel_offset + size was checked not to overflow i64.
                    let lo = m.voxel_offset[i] + (g[i] * m.chunk_size[i]) as i64;
                    let hi = lo + m.chunk_size[i].min(m.size[i] - g[i] * m.chunk_size[i]) as i64;
                    format!("{lo}-{hi}")
                });
                Ok(Located { key: format!("{key}/{x}_{y}_{z}"), levels: Vec::new() })
            }
        }
    }

    /// Little-endian elements with strides (in elements) along `[x, y, z, channel]` of the
    /// clipped chunk.
    fn decode(&self, coords: &[u64], bytes: Vec<u8>, decoders: Option<&dyn Decoders>) -> Result<Decoded> {
        self.check(coords)?;
        self.chain.decode(bytes, &self.grid.clipped(coords), decoders)
    }

    fn decoders(&self) -> Vec<&'static str> {
        self.chain.decoders()
    }

    fn costly_decode(&self) -> bool {
        self.chain.costly()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metadata::precomputed::ScaleRef;
    use serde_json::json;

    fn open(scale: serde_json::Value, dtype: &str, nc: u64) -> Result<ScaleLayout> {
        let info = json!({"data_type": dtype, "num_channels": nc, "type": "image", "scales": [scale]});
        ScaleLayout::from_info(serde_json::to_string(&info).unwrap().as_bytes(), ScaleRef::Index(0))
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
        assert_eq!(
            (s.grid().shape(), s.grid().chunk_shape(), s.grid().count()),
            (vec![10, 5, 3, 2], Some(vec![4, 4, 4, 2]), vec![3, 2, 1, 1])
        );
        assert_eq!(s.locate(&[2, 1, 0, 0]).unwrap().key, "a/4-6_4-5_7-10");
        assert!(s.locate(&[0, 0, 0, 0]).unwrap().levels.is_empty());
        assert_eq!(s.locate(&[3, 0, 0, 0]).err().unwrap().code, ErrorCode::InvalidSelection);
        assert_eq!(s.locate(&[0, 0, 0, 1]).err().unwrap().code, ErrorCode::InvalidSelection);
        assert_eq!(s.locate(&[0, 0, 0]).err().unwrap().code, ErrorCode::InvalidSelection);
        // Chunk (2, 1, 0) is 2x1x3, 2 channels of uint16.
        let d = s.decode(&[2, 1, 0, 0], (0..24).collect(), None).unwrap();
        assert_eq!(d.strides, [1, 2, 2, 6]);
        assert_eq!(s.decode(&[2, 1, 0, 0], vec![0; 23], None).unwrap_err().code, ErrorCode::CorruptChunk);
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
        let Located { key, levels } = s.locate(&[1, 1, 1, 0]).unwrap();
        assert_eq!(key, "s0/0.shard");
        assert_eq!(levels.iter().map(|l| l.1).collect::<Vec<_>>(), [3, 7]);
        assert_eq!(s.decode(&[0, 0, 0, 0], vec![1, 2, 3], None).unwrap_err().code, ErrorCode::CorruptChunk);
    }
}

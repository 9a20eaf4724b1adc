//! The `info` file of a Neuroglancer precomputed volume.
use super::dtype::DataType;
use crate::core::error::{err, invalid, Error, ErrorCode, Result};
use crate::core::json::{Map, Value};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

#[derive(Clone, Debug, PartialEq)]
pub struct VolumeInfo {
    pub data_type: DataType,
    pub num_channels: u64,
    /// `"image"`, `"segmentation"`, ...
    pub kind: String,
    pub scales: Vec<ScaleInfo>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ScaleInfo {
    pub key: String,
    /// Voxels along x, y, z.
    pub size: [u64; 3],
    pub voxel_offset: [i64; 3],
    /// The first of `chunk_sizes`.
    pub chunk_size: [u64; 3],
    pub resolution: [f64; 3],
    pub encoding: Encoding,
    pub sharding: Option<ShardingSpec>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Encoding {
    Raw,
    /// Block size along x, y, z.
    CompressedSegmentation([u64; 3]),
    Jpeg,
    Png,
    /// seung-lab's compresso (segmentation labels).
    Compresso,
    /// JPEG XL images (8-bit).
    Jxl,
    /// Named in the info but not readable here; opening such a scale fails.
    Other(String),
}

impl Encoding {
    pub fn name(&self) -> &str {
        match self {
            Encoding::Raw => "raw",
            Encoding::CompressedSegmentation(_) => "compressed_segmentation",
            Encoding::Jpeg => "jpeg",
            Encoding::Png => "png",
            Encoding::Compresso => "compresso",
            Encoding::Jxl => "jxl",
            Encoding::Other(s) => s,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hash {
    Identity,
    MurmurHash3X86_128,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataEncoding {
    Raw,
    Gzip,
}

/// `neuroglancer_uint64_sharded_v1` parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardingSpec {
    pub preshift_bits: u32,
    pub hash: Hash,
    pub minishard_bits: u32,
    pub shard_bits: u32,
    pub minishard_index_encoding: DataEncoding,
    pub data_encoding: DataEncoding,
}

/// Which scale to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleRef<'a> {
    Index(usize),
    Key(&'a str),
}

fn triple<T: Copy + Default>(v: Option<&Value>, what: &str, get: impl Fn(&Value) -> Option<T>) -> Result<[T; 3]> {
    let bad = || invalid(format!("{what} must be a list of 3 numbers, found {}", v.unwrap_or(&Value::Null)));
    let a = v.and_then(Value::as_array).filter(|a| a.len() == 3).ok_or_else(bad)?;
    let mut out = [T::default(); 3];
    for (o, x) in out.iter_mut().zip(a) {
        *o = get(x).ok_or_else(bad)?;
    }
    Ok(out)
}

fn positive(v: Option<&Value>, what: &str) -> Result<[u64; 3]> {
    let t = triple(v, what, Value::as_u64)?;
    if t.contains(&0) {
        return Err(invalid(format!("{what} entries must be positive, found {}", crate::core::error::List(&t))));
    }
    Ok(t)
}

fn bits(o: &Map, name: &str, max: u64) -> Result<u32> {
    match o.get(name).and_then(Value::as_u64) {
        Some(b) if b <= max => Ok(b as u32),
        _ => Err(invalid(format!(
            "sharding {name} must be an integer in 0..={max}, found {}",
            o.get(name).unwrap_or(&Value::Null)
        ))),
    }
}

fn data_encoding(o: &Map, name: &str) -> Result<DataEncoding> {
    match o.get(name) {
        None | Some(Value::Null) => Ok(DataEncoding::Raw),
        Some(Value::String(s)) if s == "raw" => Ok(DataEncoding::Raw),
        Some(Value::String(s)) if s == "gzip" => Ok(DataEncoding::Gzip),
        Some(Value::String(s)) => err(ErrorCode::UnsupportedCodec, format!("unsupported sharding {name} \"{s}\"")),
        Some(v) => Err(invalid(format!("sharding {name} must be a string, found {v}"))),
    }
}

impl ShardingSpec {
    pub fn parse(v: &Value) -> Result<ShardingSpec> {
        let o = v.as_object().ok_or_else(|| invalid("sharding must be an object"))?;
        match o.get("@type") {
            Some(Value::String(t)) if t == "neuroglancer_uint64_sharded_v1" => {}
            Some(Value::String(t)) => return err(ErrorCode::UnsupportedFormat, format!("unsupported sharding \"{t}\"")),
            other => {
                return Err(invalid(format!(
                    "sharding @type must be \"neuroglancer_uint64_sharded_v1\", found {}",
                    other.unwrap_or(&Value::Null)
                )))
            }
        }
        let hash = match o.get("hash") {
            Some(Value::String(h)) if h == "identity" => Hash::Identity,
            Some(Value::String(h)) if h == "murmurhash3_x86_128" => Hash::MurmurHash3X86_128,
            Some(Value::String(h)) => {
                return err(ErrorCode::UnsupportedFormat, format!("unsupported sharding hash \"{h}\""))
            }
            other => {
                return Err(invalid(format!("sharding hash must be a string, found {}", other.unwrap_or(&Value::Null))))
            }
        };
        let preshift_bits = bits(o, "preshift_bits", 64)?;
        let minishard_bits = bits(o, "minishard_bits", 60)?;
        let shard_bits = bits(o, "shard_bits", 64 - u64::from(minishard_bits))?;
        Ok(ShardingSpec {
            preshift_bits,
            hash,
            minishard_bits,
            shard_bits,
            minishard_index_encoding: data_encoding(o, "minishard_index_encoding")?,
            data_encoding: data_encoding(o, "data_encoding")?,
        })
    }
}

impl ScaleInfo {
    fn parse(v: &Value, i: usize) -> Result<ScaleInfo> {
        let o = v.as_object().ok_or_else(|| invalid(format!("scales[{i}] must be an object")))?;
        let at = |e: Error| Error::new(e.code, format!("scales[{i}]: {}", e.message));
        let key = match o.get("key") {
            Some(Value::String(k)) if !k.is_empty() => k.trim_end_matches('/').to_string(),
            other => {
                return Err(at(invalid(format!(
                    "key must be a non-empty string, found {}",
                    other.unwrap_or(&Value::Null)
                ))))
            }
        };
        let size = triple(o.get("size"), "size", Value::as_u64).map_err(at)?;
        let voxel_offset = match o.get("voxel_offset") {
            None | Some(Value::Null) => [0; 3],
            v => triple(v, "voxel_offset", Value::as_i64).map_err(at)?,
        };
        for (s, off) in size.iter().zip(&voxel_offset) {
            if i64::try_from(*s).ok().and_then(|s| off.checked_add(s)).is_none() {
                return Err(at(invalid(format!("voxel_offset {} + size {} overflows", crate::core::error::List(&voxel_offset), crate::core::error::List(&size)))));
            }
        }
        let first = match o.get("chunk_sizes").and_then(Value::as_array) {
            Some(list) if !list.is_empty() => list.first(),
            _ => return Err(at(invalid("chunk_sizes must be a non-empty list of [x, y, z] sizes"))),
        };
        let chunk_size = positive(first, "chunk_sizes[0]").map_err(at)?;
        let resolution = triple(o.get("resolution"), "resolution", Value::as_f64).map_err(at)?;
        let encoding = match o.get("encoding") {
            Some(Value::String(e)) => match e.as_str() {
                "raw" => Encoding::Raw,
                "jpeg" => Encoding::Jpeg,
                "png" => Encoding::Png,
                "compresso" => Encoding::Compresso,
                "jxl" => Encoding::Jxl,
                "compressed_segmentation" => Encoding::CompressedSegmentation(
                    positive(o.get("compressed_segmentation_block_size"), "compressed_segmentation_block_size")
                        .map_err(at)?,
                ),
                other => Encoding::Other(other.to_string()),
            },
            other => {
                return Err(at(invalid(format!("encoding must be a string, found {}", other.unwrap_or(&Value::Null)))))
            }
        };
        let sharding = match o.get("sharding") {
            None | Some(Value::Null) => None,
            Some(s) => Some(ShardingSpec::parse(s).map_err(at)?),
        };
        Ok(ScaleInfo { key, size, voxel_offset, chunk_size, resolution, encoding, sharding })
    }
}

impl VolumeInfo {
    pub fn parse(text: &[u8]) -> Result<VolumeInfo> {
        let v = crate::core::json::parse(text).map_err(|e| invalid(format!("info is not valid JSON: {e}")))?;
        let o = v.as_object().ok_or_else(|| invalid("info must be a JSON object"))?;
        match o.get("@type") {
            None | Some(Value::Null) => {}
            Some(Value::String(t)) if t == "neuroglancer_multiscale_volume" => {}
            Some(other) => {
                return err(
                    ErrorCode::UnsupportedFormat,
                    format!("unsupported precomputed @type {other} (expected a volume)"),
                )
            }
        }
        let data_type = match o.get("data_type") {
            Some(Value::String(t)) => match t.as_str() {
                "uint8" => DataType::UInt8,
                "uint16" => DataType::UInt16,
                "uint32" => DataType::UInt32,
                "uint64" => DataType::UInt64,
                "int8" => DataType::Int8,
                "int16" => DataType::Int16,
                "int32" => DataType::Int32,
                "float32" => DataType::Float32,
                other => {
                    return err(ErrorCode::UnsupportedDataType, format!("unsupported precomputed data_type \"{other}\""))
                }
            },
            other => {
                return Err(invalid(format!("data_type must be a string, found {}", other.unwrap_or(&Value::Null))))
            }
        };
        let num_channels = match o.get("num_channels").and_then(Value::as_u64) {
            Some(n) if n > 0 => n,
            _ => {
                return Err(invalid(format!(
                    "num_channels must be a positive integer, found {}",
                    o.get("num_channels").unwrap_or(&Value::Null)
                )))
            }
        };
        let kind = match o.get("type") {
            Some(Value::String(t)) => t.clone(),
            other => return Err(invalid(format!("type must be a string, found {}", other.unwrap_or(&Value::Null)))),
        };
        let scales = match o.get("scales").and_then(Value::as_array) {
            Some(s) if !s.is_empty() => s,
            _ => return Err(invalid("scales must be a non-empty list")),
        };
        let scales = scales.iter().enumerate().map(|(i, s)| ScaleInfo::parse(s, i)).collect::<Result<Vec<_>>>()?;
        Ok(VolumeInfo { data_type, num_channels, kind, scales })
    }

    /// The position in `scales` of the wanted scale.
    pub fn find(&self, which: ScaleRef) -> Result<usize> {
        let found = match which {
            ScaleRef::Index(i) => (i < self.scales.len()).then_some(i),
            ScaleRef::Key(k) => self.scales.iter().position(|s| s.key == k.trim_end_matches('/')),
        };
        found.ok_or_else(|| {
            let keys: Vec<&str> = self.scales.iter().map(|s| s.key.as_str()).collect();
            let which = match which {
                ScaleRef::Index(i) => format!("{i}"),
                ScaleRef::Key(k) => format!("\"{k}\""),
            };
            Error::new(ErrorCode::InvalidSelection, format!("no scale {which}; the volume has scales \"{}\"", keys.join("\", \"")))
        })
    }
}

impl<'a> ScaleRef<'a> {
    /// A scale named by the caller: an index when it parses as one, else a key.
    pub fn from_name(s: &'a str) -> ScaleRef<'a> {
        match s.parse::<usize>() {
            Ok(i) => ScaleRef::Index(i),
            Err(_) => ScaleRef::Key(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn info(scale: Value) -> Value {
        json!({"@type": "neuroglancer_multiscale_volume", "data_type": "uint16", "num_channels": 2, "type": "image",
               "scales": [scale]})
    }

    fn scale() -> Value {
        json!({"key": "8_8_8", "size": [10, 20, 30], "chunk_sizes": [[4, 4, 4], [8, 8, 8]], "resolution": [8, 8, 8.5],
               "encoding": "raw"})
    }

    fn parse(v: Value) -> Result<VolumeInfo> {
        VolumeInfo::parse(serde_json::to_string(&v).unwrap().as_bytes())
    }

    #[test]
    fn parses_a_sharded_scale() {
        let mut s = scale();
        s["sharding"] = json!({"@type": "neuroglancer_uint64_sharded_v1", "preshift_bits": 3, "hash": "murmurhash3_x86_128",
                               "minishard_bits": 6, "shard_bits": 2, "minishard_index_encoding": "gzip"});
        s["voxel_offset"] = json!([-1, 2, 3]);
        let i = parse(info(s)).unwrap();
        assert_eq!((i.data_type, i.num_channels, i.kind.as_str()), (DataType::UInt16, 2, "image"));
        let s = &i.scales[0];
        assert_eq!((s.size, s.chunk_size, s.voxel_offset), ([10, 20, 30], [4, 4, 4], [-1, 2, 3]));
        assert_eq!(s.resolution, [8.0, 8.0, 8.5]);
        let sh = s.sharding.unwrap();
        assert_eq!((sh.preshift_bits, sh.minishard_bits, sh.shard_bits, sh.hash), (3, 6, 2, Hash::MurmurHash3X86_128));
        assert_eq!((sh.minishard_index_encoding, sh.data_encoding), (DataEncoding::Gzip, DataEncoding::Raw));
        assert_eq!(i.find(ScaleRef::Key("8_8_8")).unwrap(), 0);
        assert_eq!(i.find(ScaleRef::Index(1)).unwrap_err().code, ErrorCode::InvalidSelection);
        assert_eq!(i.find(ScaleRef::Key("x")).unwrap_err().code, ErrorCode::InvalidSelection);
    }

    #[test]
    fn errors_are_typed_and_named() {
        let code = |v: Value| parse(v).unwrap_err();
        let mut bad = info(scale());
        bad["data_type"] = json!("float64");
        let e = code(bad);
        assert_eq!(e.code, ErrorCode::UnsupportedDataType);
        assert!(e.message.contains("float64"), "{e}");
        let mut s = scale();
        s["sharding"] = json!({"@type": "neuroglancer_uint64_sharded_v1", "hash": "sha1", "preshift_bits": 0,
                               "minishard_bits": 0, "shard_bits": 0});
        let e = code(info(s));
        assert_eq!(e.code, ErrorCode::UnsupportedFormat);
        assert!(e.message.contains("sha1"), "{e}");
        let mut s = scale();
        s["sharding"] = json!({"@type": "neuroglancer_uint64_sharded_v1", "hash": "identity", "preshift_bits": 0,
                               "minishard_bits": 0, "shard_bits": 0, "data_encoding": "zstd"});
        let e = code(info(s));
        assert_eq!(e.code, ErrorCode::UnsupportedCodec);
        assert!(e.message.contains("zstd"), "{e}");
        let mut s = scale();
        s["sharding"] = json!({"@type": "neuroglancer_uint64_sharded_v1", "hash": "identity", "preshift_bits": 0,
                               "minishard_bits": 40, "shard_bits": 30});
        assert_eq!(code(info(s)).code, ErrorCode::InvalidMetadata);
        for (field, value) in [
            ("size", json!([1, 2])),
            ("chunk_sizes", json!([])),
            ("chunk_sizes", json!([[0, 1, 1]])),
            ("key", json!("")),
            ("resolution", json!("x")),
            ("voxel_offset", json!([i64::MAX, 0, 0])),
            ("encoding", json!(3)),
        ] {
            let mut s = scale();
            s[field] = value;
            assert_eq!(code(info(s)).code, ErrorCode::InvalidMetadata, "{field}");
        }
        let mut s = scale();
        s["encoding"] = json!("compressed_segmentation");
        assert_eq!(code(info(s)).code, ErrorCode::InvalidMetadata, "needs a block size");
        let mut s = scale();
        s["encoding"] = json!("fpzip");
        assert_eq!(parse(info(s)).unwrap().scales[0].encoding, Encoding::Other("fpzip".into()));
        assert_eq!(VolumeInfo::parse(b"{").unwrap_err().code, ErrorCode::InvalidMetadata);
        assert_eq!(VolumeInfo::parse(b"[]").unwrap_err().code, ErrorCode::InvalidMetadata);
        let mut v = info(scale());
        v["@type"] = json!("neuroglancer_annotations_v1");
        assert_eq!(code(v).code, ErrorCode::UnsupportedFormat);
        let mut v = info(scale());
        v["num_channels"] = json!(0);
        assert_eq!(code(v).code, ErrorCode::InvalidMetadata);
    }
}

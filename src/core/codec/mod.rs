//! Zarr v3 codecs: a chain is array→array codecs, one array→bytes codec, bytes→bytes codecs.
pub mod blosc;
pub mod compress;
pub mod sharding;

use super::dtype::DataType;
use super::error::{checked_bytes, err, Error, ErrorCode, Result};
use super::metadata::{named, shape_of};
use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Map, Value};
pub use sharding::Sharding;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BytesCodec {
    Gzip,
    Zstd,
    Crc32c,
    Blosc,
    /// A zlib stream (numcodecs `zlib`).
    Zlib,
    /// numcodecs `lz4`: the decoded size (4 bytes, little endian), then an LZ4 block.
    Lz4,
}

impl BytesCodec {
    /// A numcodecs-style compressor: Zarr v2 `{"id": "zlib", …}` or the draft v3
    /// `{"codec": "https://purl.org/zarr/spec/codec/zlib/1.0", …}`; `null` is none.
    pub fn numcodecs(v: &Value) -> Result<Option<BytesCodec>> {
        let id = match v {
            Value::Null => return Ok(None),
            Value::Object(o) => match (o.get("id"), o.get("codec")) {
                (Some(Value::String(id)), _) => id.as_str(),
                (_, Some(Value::String(url))) => url.trim_end_matches('/').rsplit('/').nth(1).unwrap_or(url),
                _ => return Err(Error::new(ErrorCode::InvalidMetadata, "compressor needs an \"id\"")),
            },
            _ => return Err(Error::new(ErrorCode::InvalidMetadata, "compressor must be an object or null")),
        };
        Ok(Some(match id {
            "gzip" => BytesCodec::Gzip,
            "zstd" => BytesCodec::Zstd,
            "blosc" => BytesCodec::Blosc,
            "zlib" => BytesCodec::Zlib,
            "lz4" => BytesCodec::Lz4,
            "crc32c" => BytesCodec::Crc32c,
            other => return unsupported(other, ""),
        }))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum CodecChain {
    /// `[sharding_indexed]`: chunks of this chain are shards.
    Sharded(Box<Sharding>),
    /// transposes, then `bytes`, then bytes→bytes codecs (in encoding order).
    Plain { transposes: Vec<Vec<usize>>, big_endian: bool, bytes_codecs: Vec<BytesCodec> },
}

/// A decoded chunk: little-endian elements, `strides` in elements for the chunk's own axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    pub bytes: Vec<u8>,
    pub strides: Vec<u64>,
}

pub(crate) fn c_strides(shape: &[u64]) -> Vec<u64> {
    let mut s = alloc::vec![1u64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1].saturating_mul(shape[i + 1]);
    }
    s
}

fn unsupported<T>(name: &str, why: &str) -> Result<T> {
    err(ErrorCode::UnsupportedCodec, format!("unsupported codec {name:?}{why}"))
}

impl CodecChain {
    /// Parse `codecs` applied to chunks of `shape`.
    pub fn parse(v: &Value, shape: &[u64]) -> Result<CodecChain> {
        let list = v.as_array().ok_or_else(|| Error::new(ErrorCode::InvalidMetadata, "codecs must be a list"))?;
        let mut transposes = Vec::new();
        let mut a2b: Option<(String, Option<&Map<String, Value>>)> = None;
        let mut bytes_codecs = Vec::new();
        for c in list {
            let (name, conf) = named(c, "codec")?;
            let stage = match name {
                "transpose" => 0,
                "bytes" | "sharding_indexed" => 1,
                "gzip" | "zstd" | "crc32c" | "blosc" => 2,
                other => return unsupported(other, ""),
            };
            let have = if !bytes_codecs.is_empty() {
                2
            } else if a2b.is_some() {
                1
            } else {
                0
            };
            if stage < have || (stage == 1 && a2b.is_some()) {
                return Err(Error::new(ErrorCode::InvalidMetadata, format!("codec {name:?} is out of order")));
            }
            match name {
                "transpose" => transposes.push(parse_transpose(conf, shape.len())?),
                "gzip" => bytes_codecs.push(BytesCodec::Gzip),
                "zstd" => bytes_codecs.push(BytesCodec::Zstd),
                "crc32c" => bytes_codecs.push(BytesCodec::Crc32c),
                "blosc" => bytes_codecs.push(BytesCodec::Blosc),
                _ => a2b = Some((name.into(), conf)),
            }
        }
        let (name, conf) =
            a2b.ok_or_else(|| Error::new(ErrorCode::InvalidMetadata, "codecs need an array->bytes codec (\"bytes\")"))?;
        if name == "sharding_indexed" {
            if !transposes.is_empty() || !bytes_codecs.is_empty() {
                return unsupported(
                    "sharding_indexed",
                    " combined with other codecs around it (no partial reads possible)",
                );
            }
            return Ok(CodecChain::Sharded(Box::new(Sharding::parse(conf, shape)?)));
        }
        Ok(CodecChain::Plain { transposes, big_endian: parse_endian(conf)?, bytes_codecs })
    }

    /// Decode a whole chunk of `shape` (a plain chain only).
    pub fn decode(&self, encoded: Vec<u8>, shape: &[u64], dtype: DataType) -> Result<Decoded> {
        let (elem, unit) = (dtype.size(), dtype.swap_unit());
        let CodecChain::Plain { transposes, big_endian, bytes_codecs } = self else {
            return err(ErrorCode::UnsupportedCodec, "a sharded chunk cannot be decoded whole");
        };
        let nbytes = checked_bytes(shape, elem as u64)?;
        let crcs = bytes_codecs.iter().filter(|c| **c == BytesCodec::Crc32c).count();
        let limit = nbytes + 4 * crcs;
        let mut data = encoded;
        for codec in bytes_codecs.iter().rev() {
            data = match codec {
                BytesCodec::Gzip => compress::gunzip(&data, limit)?,
                BytesCodec::Zstd => compress::unzstd(&data, limit)?,
                BytesCodec::Crc32c => compress::strip_crc32c(data)?,
                // The frame header says everything; the codec's configuration is not needed.
                BytesCodec::Blosc => blosc::decode(&data, limit)?,
                BytesCodec::Zlib => compress::unzlib(&data, limit)?,
                BytesCodec::Lz4 => compress::numcodecs_lz4(&data, limit)?,
            };
        }
        if data.len() != nbytes {
            return err(ErrorCode::CorruptChunk, format!("decoded chunk has {} bytes, expected {nbytes}", data.len()));
        }
        if *big_endian && unit > 1 {
            data.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
        }
        // Undo the transposes as a change of strides: encoded axis k holds original axis p[k].
        let mut enc_shape: Vec<u64> = shape.to_vec();
        for p in transposes {
            enc_shape = p.iter().map(|&i| enc_shape[i]).collect();
        }
        let mut strides = c_strides(&enc_shape);
        for p in transposes.iter().rev() {
            let mut s = alloc::vec![0; strides.len()];
            for (k, &axis) in p.iter().enumerate() {
                s[axis] = strides[k];
            }
            strides = s;
        }
        Ok(Decoded { bytes: data, strides })
    }
}

pub(crate) fn parse_endian(conf: Option<&Map<String, Value>>) -> Result<bool> {
    match conf.and_then(|c| c.get("endian")) {
        None | Some(Value::Null) => Ok(false),
        Some(v) => match v.as_str() {
            Some("little") => Ok(false),
            Some("big") => Ok(true),
            _ => Err(Error::new(
                ErrorCode::InvalidMetadata,
                format!("bytes endian must be \"little\" or \"big\", found {v}"),
            )),
        },
    }
}

fn parse_transpose(conf: Option<&Map<String, Value>>, ndim: usize) -> Result<Vec<usize>> {
    let order = conf.and_then(|c| c.get("order"));
    let perm: Vec<usize> = match order {
        Some(Value::String(s)) if s == "C" => (0..ndim).collect(),
        Some(Value::String(s)) if s == "F" => (0..ndim).rev().collect(),
        Some(v @ Value::Array(_)) => {
            shape_of(Some(v), "transpose order", true)?.into_iter().map(|x| x as usize).collect()
        }
        _ => return Err(Error::new(ErrorCode::InvalidMetadata, "transpose needs an \"order\"")),
    };
    let mut seen = alloc::vec![false; ndim];
    if perm.len() != ndim || perm.iter().any(|&i| i >= ndim || core::mem::replace(&mut seen[i], true)) {
        return Err(Error::new(
            ErrorCode::InvalidMetadata,
            format!("transpose order {perm:?} is not a permutation of {ndim} axes"),
        ));
    }
    Ok(perm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn transpose_is_a_stride_change() {
        let chain =
            CodecChain::parse(&json!([{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes"}]), &[2, 3])
                .unwrap();
        // Encoded array is 3x2 (the transpose of [[0,1,2],[3,4,5]]) = [[0,3],[1,4],[2,5]].
        let d = chain.decode(alloc::vec![0, 3, 1, 4, 2, 5], &[2, 3], DataType::UInt8).unwrap();
        assert_eq!(d.strides, [1, 2]);
        let at = |i: u64, j: u64| d.bytes[(i * d.strides[0] + j * d.strides[1]) as usize];
        assert_eq!([at(0, 0), at(0, 2), at(1, 0), at(1, 2)], [0, 2, 3, 5]);
    }

    #[test]
    fn big_endian_and_wrong_size() {
        let chain = CodecChain::parse(&json!([{"name":"bytes","configuration":{"endian":"big"}}]), &[2]).unwrap();
        assert_eq!(chain.decode(alloc::vec![1, 2, 3, 4], &[2], DataType::UInt16).unwrap().bytes, [2, 1, 4, 3]);
        assert_eq!(
            chain.decode(alloc::vec![1, 2, 3], &[2], DataType::UInt16).unwrap_err().code,
            ErrorCode::CorruptChunk
        );
    }

    #[test]
    fn bad_chains() {
        let p = |v| CodecChain::parse(&v, &[4]).unwrap_err().code;
        assert_eq!(p(json!([{"name":"gzip"},{"name":"bytes"}])), ErrorCode::InvalidMetadata);
        assert_eq!(p(json!([{"name":"blosc2"}])), ErrorCode::UnsupportedCodec);
        assert_eq!(
            p(json!([{"name":"transpose","configuration":{"order":[1]}},{"name":"bytes"}])),
            ErrorCode::InvalidMetadata
        );
        assert_eq!(p(json!([])), ErrorCode::InvalidMetadata);
    }
}

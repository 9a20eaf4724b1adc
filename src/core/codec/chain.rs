//! A codec chain: array→array codecs, one array→bytes codec, bytes→bytes codecs (in encoding
//! order), built from the codecs metadata names; decoding runs it backwards.
use super::astype::AsType;
use super::bitround::BitRound;
use super::blosc::Blosc;
use super::bytes::Bytes;
use super::categorize::Categorize;
use super::checksum32::Checksum32;
use super::crc32c::Crc32c;
use super::delta::Delta;
use super::fixedscaleoffset::FixedScaleOffset;
use super::gzip::Gzip;
use super::json2::Json2;
use super::lz4::Lz4;
use super::packbits::PackBits;
use super::shuffle::Shuffle;
use super::transpose::Transpose;
use super::vlen::VLen;
use super::zlib::Zlib;
use super::zstd::ZstdCodec;
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, err, invalid, ErrorCode, Result};
use crate::core::metadata::{DataType, Named};
use alloc::boxed::Box;
use alloc::format;
use alloc::vec::Vec;

#[derive(Debug)]
pub struct Chain {
    array: Vec<Box<dyn Codec>>,
    to_bytes: Box<dyn Codec>,
    bytes: Vec<Box<dyn Codec>>,
    dtype: DataType,
}

/// The codec `c` names, for chunks of `ndim` axes whose elements (as this codec decodes them)
/// are `dtype`.
fn build(c: &Named, ndim: usize, dtype: DataType) -> Result<Box<dyn Codec>> {
    let conf = &c.configuration;
    Ok(match c.name.as_str() {
        "vlen-utf8" | "numcodecs.vlen-utf8" if dtype == DataType::String => Box::new(VLen { utf8: true }),
        "vlen-bytes" | "numcodecs.vlen-bytes" if dtype == DataType::Bytes => Box::new(VLen { utf8: false }),
        "json2" | "numcodecs.json2" if dtype == DataType::Json => Box::new(Json2),
        "vlen-utf8" | "vlen-bytes" | "json2" | "numcodecs.vlen-utf8" | "numcodecs.vlen-bytes" | "numcodecs.json2" => {
            return err(
                ErrorCode::InvalidMetadata,
                format!("codec \"{}\" does not encode {} elements", c.name, dtype.name()),
            )
        }
        "categorize" | "numcodecs.categorize" => Box::new(Categorize::parse(conf, dtype)?),
        "scale_offset" => Box::new(super::scale_offset::ScaleOffset::parse(conf, dtype)?),
        "cast_value" => Box::new(super::cast_value::CastValue::parse(conf, dtype)?),
        "delta" | "numcodecs.delta" => Box::new(Delta::parse(conf, dtype)?),
        "fixedscaleoffset" | "numcodecs.fixedscaleoffset" => Box::new(FixedScaleOffset::parse(conf)?),
        "quantize" | "numcodecs.quantize" => Box::new(AsType::quantize(conf)?),
        "astype" | "numcodecs.astype" => Box::new(AsType::parse(conf)?),
        // zarr-extensions' `bitround` and numcodecs' alike: rounded when written, nothing to undo.
        "bitround" | "numcodecs.bitround" => Box::new(BitRound),
        "packbits" | "numcodecs.packbits" if dtype == DataType::Bool => Box::new(PackBits),
        "shuffle" | "numcodecs.shuffle" => Box::new(Shuffle::parse(conf)?),
        "numcodecs.crc32" | "numcodecs.adler32" | "numcodecs.crc32c" | "numcodecs.fletcher32"
        | "numcodecs.jenkins_lookup3" => match Checksum32::parse(&c.name["numcodecs.".len()..], conf)? {
            Some(sum) => Box::new(sum),
            None => return err(ErrorCode::UnsupportedCodec, format!("unsupported codec \"{}\"", c.name)),
        },
        "transpose" => Box::new(Transpose::parse(conf, ndim)?),
        "bytes" => Box::new(Bytes::parse(conf)?),
        "gzip" | "numcodecs.gzip" => Box::new(Gzip),
        "zstd" | "numcodecs.zstd" => Box::new(ZstdCodec),
        "crc32c" => Box::new(Crc32c),
        // The frame header says everything; the codec's configuration is not needed.
        "blosc" | "numcodecs.blosc" => Box::new(Blosc),
        "numcodecs.zlib" => Box::new(Zlib),
        "numcodecs.lz4" => Box::new(Lz4),
        "numcodecs.bz2" => Box::new(super::bz2::Bz2),
        "numcodecs.lzma" => Box::new(super::lzma::Lzma::parse(conf)?),
        "numcodecs.pcodec" => Box::new(super::pcodec::PCodec),
        // HDF5's own filters (LZF, its LZ4, scale-offset), through its reader module.
        "hdf5_filter" => Box::new(super::hdf5_filter::Hdf5Filter::parse(conf)?),
        // TIFF's, under imagecodecs' names.
        "imagecodecs_lzw" => Box::new(super::lzw::Lzw),
        "imagecodecs_packbits" => Box::new(super::tiff_packbits::TiffPackBits),
        "tiff_strip" => Box::new(super::tiff_strip::TiffStrip::parse(conf)),
        "imagecodecs_packints" => Box::new(super::packints::PackInts::parse(conf)?),
        name @ ("imagecodecs_jpeg" | "imagecodecs_webp" | "imagecodecs_jpegxl" | "imagecodecs_lerc" | "imagecodecs_ccitt") => {
            Box::new(super::tiff_image::TiffImage::parse(name, conf)?)
        }
        "imagecodecs_delta" => Box::new(super::predictor::HorizontalDelta::parse(conf, ndim)?),
        "imagecodecs_floatpred" => Box::new(super::predictor::FloatPredictor::parse(conf, ndim)?),
        "sharding_indexed" => return err(
            ErrorCode::UnsupportedCodec,
            "unsupported codec \"sharding_indexed\" combined with other codecs around it (no partial reads possible)",
        ),
        other => return err(ErrorCode::UnsupportedCodec, format!("unsupported codec \"{other}\"")),
    })
}

impl Chain {
    /// The chain `codecs` (encoding order) describes, for chunks of `ndim` axes of `dtype`.
    pub fn parse(codecs: &[Named], ndim: usize, dtype: DataType) -> Result<Chain> {
        let mut array = Vec::new();
        let mut to_bytes = None;
        let mut bytes = Vec::new();
        // The element type each codec decodes to: array→array codecs may change it.
        let mut stage = dtype;
        for c in codecs {
            let codec = build(c, ndim, stage)?;
            if codec.kind() == Kind::ArrayToArray {
                stage = codec.encoded_dtype(stage);
            }
            let out_of_order = match codec.kind() {
                Kind::ArrayToArray => to_bytes.is_some(),
                Kind::ArrayToBytes => to_bytes.is_some(),
                Kind::BytesToBytes => to_bytes.is_none(),
            };
            if out_of_order {
                return Err(invalid(format!("codec \"{}\" is out of order", c.name)));
            }
            match codec.kind() {
                Kind::ArrayToArray => array.push(codec),
                Kind::ArrayToBytes => to_bytes = Some(codec),
                Kind::BytesToBytes => bytes.push(codec),
            }
        }
        let to_bytes = to_bytes.ok_or_else(|| invalid("codecs need an array->bytes codec (\"bytes\")"))?;
        if stage.is_variable() && to_bytes.name() == "bytes" {
            return err(ErrorCode::InvalidMetadata, format!("the bytes codec cannot encode {} elements", stage.name()));
        }
        Ok(Chain { array, to_bytes, bytes, dtype })
    }

    /// A chain put together by a layout (Neuroglancer precomputed's encodings).
    pub fn new(
        array: Vec<Box<dyn Codec>>,
        to_bytes: Box<dyn Codec>,
        bytes: Vec<Box<dyn Codec>>,
        dtype: DataType,
    ) -> Chain {
        Chain { array, to_bytes, bytes, dtype }
    }

    /// Whether decoding a chunk is real work (see [`Codec::costly`]).
    pub fn costly(&self) -> bool {
        self.array.iter().chain(&self.bytes).any(|c| c.costly()) || self.to_bytes.costly()
    }

    /// The external decoders (see [`super::external`]) this chain's codecs use.
    pub fn decoders(&self) -> Vec<&'static str> {
        self.array.iter().chain(core::iter::once(&self.to_bytes)).chain(&self.bytes).filter_map(|c| c.decoder()).collect()
    }

    /// Decode a whole chunk of `shape`: little-endian elements with their strides.
    pub fn decode(&self, encoded: Vec<u8>, shape: &[u64], decoders: Option<&dyn super::Decoders>) -> Result<Decoded> {
        // The shape and type each array→array codec decodes to, and what the array→bytes codec reads.
        let mut shapes = Vec::with_capacity(self.array.len() + 1);
        let mut dtypes = Vec::with_capacity(self.array.len() + 1);
        shapes.push(shape.to_vec());
        dtypes.push(self.dtype);
        for c in &self.array {
            let next = c.encoded_shape(shapes.last().map_or(shape, |s| s));
            shapes.push(next);
            dtypes.push(c.encoded_dtype(dtypes.last().copied().unwrap_or(self.dtype)));
        }
        let inner = shapes.last().map_or(shape, |s| s);
        let dtype = dtypes.last().copied().unwrap_or(self.dtype);
        let nbytes = checked_bytes(inner, dtype.size() as u64)?;
        // What each bytes→bytes codec may decode to: its input when it encoded.
        let mut limits = Vec::with_capacity(self.bytes.len());
        let mut n = self.to_bytes.max_encoded_len(nbytes);
        for c in &self.bytes {
            limits.push(n);
            n = c.max_encoded_len(n);
        }
        let mut data = Decoded::bytes(encoded);
        for (c, &limit) in self.bytes.iter().zip(&limits).rev() {
            data = c.decode(data, &Ctx { shape: &[], dtype, limit, decoders })?;
        }
        data = self.to_bytes.decode(data, &Ctx { shape: inner, dtype, limit: nbytes, decoders })?;
        for ((c, s), &dtype) in self.array.iter().zip(&shapes).zip(&dtypes).rev() {
            data = c.decode(data, &Ctx { shape: s, dtype, limit: nbytes, decoders })?;
        }
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::{json, Value};

    fn chain(v: Value, ndim: usize, dtype: DataType) -> Result<Chain> {
        let list: Vec<Named> = v.as_array().unwrap().iter().map(|c| Named::parse(c, "codec").unwrap()).collect();
        Chain::parse(&list, ndim, dtype)
    }

    #[test]
    fn transpose_is_a_stride_change() {
        let c =
            chain(json!([{"name":"transpose","configuration":{"order":[1,0]}},{"name":"bytes"}]), 2, DataType::UInt8)
                .unwrap();
        // Encoded array is 3x2 (the transpose of [[0,1,2],[3,4,5]]) = [[0,3],[1,4],[2,5]].
        let d = c.decode(alloc::vec![0, 3, 1, 4, 2, 5], &[2, 3], None).unwrap();
        assert_eq!(d.strides, [1, 2]);
        let at = |i: u64, j: u64| d.bytes[(i * d.strides[0] + j * d.strides[1]) as usize];
        assert_eq!([at(0, 0), at(0, 2), at(1, 0), at(1, 2)], [0, 2, 3, 5]);
        assert!(!c.costly());
    }

    #[test]
    fn big_endian_and_wrong_size() {
        let c = chain(json!([{"name":"bytes","configuration":{"endian":"big"}}]), 1, DataType::UInt16).unwrap();
        assert_eq!(c.decode(alloc::vec![1, 2, 3, 4], &[2], None).unwrap().bytes, [2, 1, 4, 3]);
        assert_eq!(c.decode(alloc::vec![1, 2, 3], &[2], None).unwrap_err().code, ErrorCode::CorruptChunk);
    }

    #[test]
    fn bad_chains() {
        let p = |v| chain(v, 1, DataType::UInt8).unwrap_err().code;
        assert_eq!(p(json!([{"name":"gzip"},{"name":"bytes"}])), ErrorCode::InvalidMetadata);
        assert_eq!(p(json!([{"name":"blosc2"}])), ErrorCode::UnsupportedCodec);
        assert_eq!(
            p(json!([{"name":"transpose","configuration":{"order":[1]}},{"name":"bytes"}])),
            ErrorCode::InvalidMetadata
        );
        assert_eq!(p(json!([])), ErrorCode::InvalidMetadata);
        let e = chain(json!([{"name":"bytes"},{"name":"lzma"}]), 1, DataType::UInt8).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedCodec);
        assert!(e.message.contains("lzma"), "{}", e.message);
    }
}

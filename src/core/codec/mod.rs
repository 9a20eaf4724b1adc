//! Codecs: one file per codec behind one trait, [`Codec`]; [`Chain`] builds a chain from the
//! codecs metadata names and decodes chunks through it. Zarr v3 codecs under their v3 names and
//! under the `numcodecs.<id>` names zarr-python writes (which Zarr v2 and the draft layout are
//! spelled in), and Neuroglancer precomputed's chunk encodings.
//!
//! May import: `error`, `nd`, `json`, `zstd`, `crc`, `external`, `metadata`.
pub mod astype;
pub mod bitround;
pub mod blosc;
pub mod bytes;
pub mod bz2;
pub mod cast_value;
pub mod categorize;
pub mod chain;
pub mod checksum32;
pub mod compresso;
pub mod crc32c;
pub mod cseg;
pub mod deflate;
pub mod external;
pub mod delta;
pub mod fixedscaleoffset;
pub mod gzip;
pub mod hdf5_filter;
pub mod jpeg;
pub mod json2;
pub mod jxl;
pub mod lz4;
pub mod lzw;
pub mod lzma;
pub mod numeric;
pub mod packbits;
pub mod packints;
pub mod pcodec;
pub mod png;
pub mod predictor;
pub mod scale_offset;
pub mod shuffle;
pub mod tiff_image;
pub mod tiff_packbits;
pub mod tiff_strip;
pub mod transpose;
pub mod vlen;
pub mod zlib;
pub mod zstd;

pub use chain::Chain;
pub use external::Decoders;

use crate::core::error::Result;
use crate::core::metadata::DataType;
use alloc::vec::Vec;

/// A chunk on its way through a chain: bytes, and (once an array→bytes codec has read them
/// as elements) the element strides of the chunk's axes. Decoded elements are little-endian;
/// variable-length ones are handles into `heap` (see [`crate::core::metadata::dtype::HANDLE`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decoded {
    pub bytes: Vec<u8>,
    pub strides: Vec<u64>,
    /// Contents of variable-length elements (empty otherwise).
    pub heap: Vec<u8>,
}

impl Decoded {
    /// Plain bytes (no element layout yet).
    pub fn bytes(bytes: Vec<u8>) -> Decoded {
        Decoded { bytes, ..Decoded::default() }
    }

    /// Elements laid out with `strides`.
    pub fn elements(bytes: Vec<u8>, strides: Vec<u64>) -> Decoded {
        Decoded { bytes, strides, heap: Vec::new() }
    }
}

/// What a codec turns into what, in Zarr v3 terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    ArrayToArray,
    ArrayToBytes,
    BytesToBytes,
}

/// What a codec needs to decode one chunk.
#[derive(Clone, Copy, Debug)]
pub struct Ctx<'a> {
    /// The shape of the codec's decoded output (for an array→bytes codec: of the array it
    /// encodes; unused by bytes→bytes codecs).
    pub shape: &'a [u64],
    /// The data type of the codec's decoded output (as `shape`).
    pub dtype: DataType,
    /// Bytes the codec's decoded output may hold at most (sizes come from the network).
    pub limit: usize,
    /// The decoders kept outside this module, for the codecs that need one.
    pub decoders: Option<&'a dyn Decoders>,
}

/// One encoding step, undone by `decode`.
pub trait Codec: crate::core::error::TestDebug {
    fn name(&self) -> &str;
    fn kind(&self) -> Kind;
    /// An array→array codec: the shape of what it encodes an array of `shape` into.
    fn encoded_shape(&self, shape: &[u64]) -> Vec<u64> {
        shape.to_vec()
    }
    /// An array→array codec: the data type of what it encodes an array of `decoded` into.
    fn encoded_dtype(&self, decoded: DataType) -> DataType {
        decoded
    }
    /// The most bytes encoding `n` bytes (for an array→bytes codec: an array of `n` bytes)
    /// can give: what the codec outside it may decode to at most.
    fn max_encoded_len(&self, n: usize) -> usize {
        n
    }
    /// Whether decoding is real work (decompression, checksums, image decoding), worth a
    /// worker; rearranging or byte-swapping is not.
    fn costly(&self) -> bool {
        true
    }
    /// The external decoder (see [`external`]) this codec hands its bytes to, if any.
    fn decoder(&self) -> Option<&'static str> {
        None
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded>;
}

/// Outside unit tests a codec prints as its name (no per-codec `Debug` code in the module).
#[cfg(not(test))]
impl core::fmt::Debug for dyn Codec + '_ {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Above what a compressor's output can reach for `n` input bytes (deflate, zstd, LZ4 and
/// blosc all stay under `n + n/8 + 1 KiB`).
pub(crate) fn compressed_bound(n: usize) -> usize {
    n.saturating_add(n / 8).saturating_add(1024)
}

/// An external decoder's output, checked to be `n` bytes.
pub(crate) fn check_len(name: &str, bytes: Vec<u8>, n: u64) -> Result<Vec<u8>> {
    if bytes.len() as u64 != n {
        let why = alloc::format!("{name}: decoded {} bytes, expected {n}", bytes.len());
        return Err(crate::core::error::Error::new(crate::core::error::ErrorCode::CorruptChunk, why));
    }
    Ok(bytes)
}

/// Encoded images (and label tables) can exceed the raw size: headers, noisy pixels.
pub(crate) fn image_bound(n: usize) -> usize {
    n.saturating_mul(4).saturating_add(1 << 16).min(crate::core::error::MAX_ALLOC as usize)
}

/// A precomputed image chunk (`ctx.shape` `[x, y, z, channel]`) decoded by `decode(bytes,
/// voxels, channels)` into voxels in order (x fastest) with the channels interleaved.
pub(crate) fn interleaved_image(
    data: &Decoded,
    ctx: &Ctx,
    decode: impl FnOnce(&[u8], u64, u64) -> Result<Vec<u8>>,
) -> Result<Decoded> {
    let (voxels, channels) = image_geometry(ctx.shape)?;
    let bytes = decode(&data.bytes, voxels, channels)?;
    let [nx, ny, nc] = [ctx.shape[0], ctx.shape[1], channels];
    Ok(Decoded::elements(bytes, alloc::vec![nc, nx * nc, nx * ny * nc, 1]))
}

/// A precomputed chunk `[x, y, z, channel]`: its voxels and channels.
pub(crate) fn image_geometry(shape: &[u64]) -> Result<(u64, u64)> {
    match shape {
        [x, y, z, c] => Ok((crate::core::error::checked_bytes(&[*x, *y, *z], 1)? as u64, *c)),
        _ => Err(crate::core::error::invalid("an image chunk has axes x, y, z, channel")),
    }
}

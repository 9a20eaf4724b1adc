//! Decoders kept outside this module: jpeg, png, jxl, bz2, lzma, pcodec, compresso, parquet,
//! hdf5, webp, lerc, tiff, ccitt and netcdf3 are large and few datasets use them, so the npm package ships each as a wasm module of
//! its own (`decoders/*`), fetched when an opened array (or a store kind: parquet for reference
//! files, hdf5 for HDF5 files, tiff for TIFF files, netcdf3 for NetCDF-3 files) needs it; natively they are linked in (feature `native-decoders`). The codecs and
//! store kinds that need one hand it bytes and check what comes back; the decoder behind
//! [`Decoders`] is the binding's (or the linked crates'). A foundation module: codecs and
//! store kinds both use it.
//!
//! May import: `error`.
use crate::core::error::{Error, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

/// Every external decoder, by name.
/// The HDF5 reader's module: it also undoes HDF5's own filters.
pub const HDF5: &str = "hdf5";
/// The TIFF reader's module: it describes a TIFF's images.
pub const TIFF: &str = "tiff";
pub const NAMES: [&str; 14] = ["jpeg", "png", "jxl", "bz2", "lzma", "pcodec", "compresso", "parquet", "hdf5", "webp", "lerc", "tiff", "ccitt", "netcdf3"];

/// Runs external decoders: `decode(name, input, args)` as decoder `name`'s calling convention
/// says (see each `decoders/<name>` crate: numeric arguments, bytes out).
pub trait Decoders: crate::core::error::TestDebug {
    fn decode(&self, name: &str, input: &[u8], args: &[f64]) -> Result<Vec<u8>>;
}

#[cfg(not(test))]
impl core::fmt::Debug for dyn Decoders + '_ {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Decoders")
    }
}

/// Decode through `decoders` (`None`: none loaded — the caller opened the array without them).
pub fn run(decoders: Option<&dyn Decoders>, name: &str, input: &[u8], args: &[f64]) -> Result<Vec<u8>> {
    match decoders {
        Some(d) => d.decode(name, input, args),
        None => Err(Error::new(ErrorCode::UnsupportedCodec, format!("{name}: no {name} decoder is loaded"))),
    }
}

/// The decoders linked into this crate.
#[cfg(feature = "native-decoders")]
#[derive(Debug)]
pub struct Linked;

#[cfg(feature = "native-decoders")]
impl Decoders for Linked {
    fn decode(&self, name: &str, input: &[u8], args: &[f64]) -> Result<Vec<u8>> {
        let got = match name {
            "jpeg" => shardfetch_jpeg::decode(input, args),
            "png" => shardfetch_png::decode(input, args),
            "jxl" => shardfetch_jxl::decode(input, args),
            "bz2" => shardfetch_bz2::decode(input, args),
            "lzma" => shardfetch_lzma::decode(input, args),
            "pcodec" => shardfetch_pcodec::decode(input, args),
            "compresso" => shardfetch_compresso::decode(input, args),
            "parquet" => shardfetch_parquet::decode(input, args),
            "hdf5" => shardfetch_hdf5::decode(input, args),
            "webp" => shardfetch_webp::decode(input, args),
            "lerc" => shardfetch_lerc::decode(input, args),
            "tiff" => shardfetch_tiff::decode(input, args),
            "ccitt" => shardfetch_ccitt::decode(input, args),
            "netcdf3" => shardfetch_netcdf3::decode(input, args),
            _ => return Err(Error::new(ErrorCode::UnsupportedCodec, format!("no decoder named \"{name}\""))),
        };
        got.map_err(|f| failure(name, f.code, &f.message))
    }
}

/// A decoder's failure (its code as `decoders/abi` numbers them) as this crate's error.
pub fn failure(name: &str, code: u32, message: &str) -> Error {
    let code = match code {
        2 => ErrorCode::TooLarge,
        3 => ErrorCode::UnsupportedCodec,
        _ => ErrorCode::CorruptChunk,
    };
    Error::new(code, format!("{name}: {message}"))
}

/// The decoders linked into this crate, if it was built with them.
pub fn linked() -> Option<alloc::rc::Rc<dyn Decoders>> {
    #[cfg(feature = "native-decoders")]
    return Some(alloc::rc::Rc::new(Linked));
    #[cfg(not(feature = "native-decoders"))]
    return None;
}

//! The calling convention of shardfetch's decoder modules. Each decoder (jpeg, png, jxl, bz2,
//! lzma, pcodec, compresso, parquet, hdf5, webp, lerc, tiff, ccitt, netcdf3) is a crate of its
//! own: natively a function, `decode(input, args)`; compiled to
//! wasm32, a module of its own in the npm package, loaded only when an opened array names it
//! (and `raster`, the map adapters' pixel work, loaded when an adapter draws its first tile).
//! [`export_decoder!`] gives the module its exports (no imports, no JS glue):
//!
//! - `input(n) -> ptr`: room for `n` input bytes in the module's memory (zeroed), to write into;
//! - `decode(a0, a1, a2, a3) -> status`: decode those bytes with up to four numeric arguments
//!   (f64: every value fits 2^53); 0 is success, else a [`Failure`] code;
//! - `output() -> ptr`, `output_len() -> n`: the decoded bytes (or the failure's message, UTF-8).
//!
//! A trap (a bug in a decoder) stops that module's instance only: the host replaces it.
//!
//! The metadata readers (`hdf5`, `netcdf3`, `tiff`) take a [`request`] — JSON and windows of
//! the file — and answer JSON ([`json`]). The core depends on this crate too (`no_std` + alloc,
//! no unsafe): it writes the requests with [`encode_request`] and looks in its windows with
//! [`held`], the one lookup both sides use.
#![no_std]
#![forbid(unsafe_code)]
extern crate alloc;

pub mod json;
mod protocol;

pub use protocol::{encode_request, held, request, tails};

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// Why a decode failed; `code` as the module's `decode` returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: u32,
    pub message: String,
}

/// The bytes do not decode (shardfetch's `CorruptChunk`).
pub const CORRUPT: u32 = 1;
/// More than the limits allow (`TooLarge`).
pub const TOO_LARGE: u32 = 2;
/// A variant of the format this decoder does not read (`UnsupportedCodec`).
pub const UNSUPPORTED: u32 = 3;

impl Failure {
    pub fn corrupt(message: impl Into<String>) -> Failure {
        Failure { code: CORRUPT, message: message.into() }
    }
    pub fn too_large(message: impl Into<String>) -> Failure {
        Failure { code: TOO_LARGE, message: message.into() }
    }
    pub fn unsupported(message: impl Into<String>) -> Failure {
        Failure { code: UNSUPPORTED, message: message.into() }
    }
}

/// A numeric argument as a count (non-negative integer), or a failure naming it.
pub fn count(args: &[f64], i: usize, what: &str) -> Result<u64, Failure> {
    match args.get(i) {
        Some(&v) if v >= 0.0 && v % 1.0 == 0.0 && v <= 9_007_199_254_740_991.0 => Ok(v as u64),
        _ => Err(Failure::corrupt(format!("argument {i} ({what}) is not a count"))),
    }
}

/// The wasm exports of a decoder module around the crate's function
/// `$decode: fn(&[u8], &[f64]) -> Result<Vec<u8>, Failure>` (at the crate's root), when the
/// crate is built as its module (its feature `module`).
#[macro_export]
macro_rules! export_decoder {
    ($decode:ident) => {
        #[cfg(all(target_arch = "wasm32", feature = "module"))]
        mod exports {
            use std::cell::RefCell;
            std::thread_local! {
                static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
                static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
            }

            #[no_mangle]
            pub extern "C" fn input(n: usize) -> *mut u8 {
                INPUT.with(|i| {
                    let mut i = i.borrow_mut();
                    i.clear();
                    i.shrink_to(n);
                    i.resize(n, 0);
                    i.as_mut_ptr()
                })
            }

            #[no_mangle]
            pub extern "C" fn decode(a0: f64, a1: f64, a2: f64, a3: f64) -> u32 {
                let input = INPUT.with(|i| core::mem::take(&mut *i.borrow_mut()));
                let (code, out) = match super::$decode(&input, &[a0, a1, a2, a3]) {
                    Ok(out) => (0, out),
                    Err(f) => (f.code.max(1), f.message.into_bytes()),
                };
                drop(input);
                OUTPUT.with(|o| *o.borrow_mut() = out);
                code
            }

            #[no_mangle]
            pub extern "C" fn output() -> *const u8 {
                OUTPUT.with(|o| o.borrow().as_ptr())
            }

            #[no_mangle]
            pub extern "C" fn output_len() -> usize {
                OUTPUT.with(|o| o.borrow().len())
            }

            /// Let go of the last output (the host has copied it).
            #[no_mangle]
            pub extern "C" fn release() {
                OUTPUT.with(|o| *o.borrow_mut() = Vec::new());
            }
        }
    };
}

/// A streaming decompressor's output buffer, full: room for more — doubling from 4× the input,
/// never past `limit` (+1, to see an overshoot) — or the failure when it is past the limit or
/// cannot grow.
pub fn grow_output(out: &mut Vec<u8>, input: usize, limit: usize) -> Result<(), Failure> {
    if out.len() > limit {
        return Err(Failure::corrupt(format!("decompresses to more than {limit} bytes")));
    }
    let want = out.capacity().max(input.saturating_mul(4)).max(4096).min(limit.saturating_add(1) - out.len()).max(1);
    out.try_reserve_exact(want).map_err(|_| Failure::too_large(format!("cannot allocate {} bytes", out.len() + want)))
}

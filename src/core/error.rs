//! Errors and allocation limits: the foundation every layer uses. Imports nothing of the core.
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

/// Declares [`ErrorCode`] once: the enum, its names, and the TypeScript union the binding
/// publishes (so the JS side cannot drift from this list).
macro_rules! error_codes {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        /// Stable error codes, surfaced to JS as `ShardfetchError.code`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum ErrorCode {
            $($(#[$doc])* $name,)*
        }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$name),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$name => stringify!($name),)*
                }
            }

            /// The code named `name` (as [`ErrorCode::as_str`] spells it).
            pub fn parse(name: &str) -> Option<ErrorCode> {
                ErrorCode::ALL.iter().copied().find(|c| c.as_str() == name)
            }
        }

        /// `export type CoreErrorCode = "NotFound" | …;`: every code, as TypeScript.
        pub const ERROR_CODES_TS: &str =
            concat!("export type CoreErrorCode =", $(" | \"", stringify!($name), "\"",)* ";\n");
    };
}

error_codes! {
    /// No array or group at the URL.
    NotFound,
    /// A group where an array was asked for.
    NotAnArray,
    /// An HTTP answer that is neither data nor "missing" (with `status`).
    HttpError,
    /// The request did not get an answer (unreachable host, CORS refusal, reset).
    Network,
    InvalidMetadata,
    UnsupportedCodec,
    UnsupportedDataType,
    UnsupportedFormat,
    ChecksumMismatch,
    /// A shard's index or its answer is inconsistent.
    CorruptShard,
    /// A chunk's bytes do not decode.
    CorruptChunk,
    InvalidSelection,
    /// A size above a limit (or above what memory can hold).
    TooLarge,
    Aborted,
    /// An object changed under an open array in a way no read can resolve: its metadata, or
    /// twice during one read (the message names the object and both versions).
    Changed,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
    /// HTTP status when the error comes from an HTTP answer.
    pub status: Option<u16>,
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error { code, message: message.into(), status: None }
    }
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }
    /// Prefix the message with where it happened (a URL or key), once.
    pub fn at(mut self, place: &str) -> Self {
        if !self.message.contains(place) {
            self.message = alloc::format!("{place}: {}", self.message);
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

pub type Result<T> = core::result::Result<T, Error>;

pub(crate) fn err<T>(code: ErrorCode, message: impl ToString) -> Result<T> {
    Err(Error::new(code, message.to_string()))
}

/// An `InvalidMetadata` error.
pub(crate) fn invalid(message: impl ToString) -> Error {
    Error::new(ErrorCode::InvalidMetadata, message.to_string())
}

/// A `CorruptChunk` error.
pub(crate) fn corrupt_chunk(message: impl ToString) -> Error {
    Error::new(ErrorCode::CorruptChunk, message.to_string())
}

/// A `CorruptChunk` error of one codec: `"{codec}: {why}"`.
pub(crate) fn corrupt_in(codec: &str, why: impl fmt::Display) -> Error {
    corrupt_dyn(codec, &why)
}

// One copy of the formatting, whatever the callers pass (wasm size).
#[inline(never)]
fn corrupt_dyn(codec: &str, why: &dyn fmt::Display) -> Error {
    Error::new(ErrorCode::CorruptChunk, alloc::format!("{codec}: {why}"))
}

/// A `CorruptShard` error.
pub(crate) fn corrupt_shard(message: impl ToString) -> Error {
    Error::new(ErrorCode::CorruptShard, message.to_string())
}

/// Largest single buffer allocated from sizes that come from the network or the caller, whatever
/// the options: a quarter of wasm32's address space, well below its `isize::MAX` (2³¹ − 1).
pub const MAX_ALLOC: u64 = 1 << 30;

/// Default of `maxDecodedBytes`: the most bytes one decoded chunk, fill or region may take; also
/// what a chunk of variable-length elements (whose size the metadata does not fix) may decode to.
pub const MAX_DECODED: usize = 512 << 20;

/// Default of `maxMetadataBytes`: the most bytes a metadata document may have.
pub const MAX_METADATA: usize = 16 << 20;

/// A `TooLarge` error naming the size, the limit and the option that sets it.
pub fn too_large(what: &str, size: u64, limit: u64, option: &str) -> Error {
    Error::new(ErrorCode::TooLarge, alloc::format!("{what} is {size} bytes, above the {limit}-byte limit ({option})"))
}

/// Checked product of a shape, also bounded by [`MAX_ALLOC`] when multiplied by `elem`.
pub fn checked_bytes(shape: &[u64], elem: u64) -> Result<usize> {
    let mut n: u64 = elem;
    for &d in shape {
        n = n.checked_mul(d).ok_or_else(|| Error::new(ErrorCode::TooLarge, "size overflows"))?;
    }
    if n > MAX_ALLOC {
        return err(ErrorCode::TooLarge, alloc::format!("{n} bytes exceeds the {MAX_ALLOC}-byte limit"));
    }
    usize::try_from(n).map_err(|_| Error::new(ErrorCode::TooLarge, "size does not fit in memory"))
}

/// Zeros to copy from (in wasm's zero-initialised memory: no bytes in the module).
static ZEROS: [u8; 1 << 16] = [0; 1 << 16];

/// A zeroed buffer of `n` bytes, or `TooLarge` when the allocation fails.
pub fn zeroed(n: usize) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        return err(ErrorCode::TooLarge, alloc::format!("cannot allocate {n} bytes"));
    }
    extend_zeroed(&mut v, n);
    Ok(v)
}

/// `v.resize(v.len() + n, 0)`, copied in blocks (memory.copy): at the module's opt-level "z",
/// `resize` writes byte by byte — measured a third of a full read's time.
pub fn extend_zeroed(v: &mut Vec<u8>, n: usize) {
    let end = v.len() + n;
    while v.len() < end {
        v.extend_from_slice(&ZEROS[..(end - v.len()).min(ZEROS.len())]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_their_typescript_union_agree() {
        assert_eq!(ErrorCode::ALL.len(), 15);
        for c in ErrorCode::ALL {
            assert!(ERROR_CODES_TS.contains(&alloc::format!("\"{}\"", c.as_str())), "{}", c.as_str());
        }
        assert!(ERROR_CODES_TS.starts_with("export type CoreErrorCode = | \"NotFound\""));
    }
}

/// `Debug` in unit tests only: trait objects (codecs, decoders, resolvers) print in assertions
/// there, while the module carries no `Debug` code for them.
#[cfg(test)]
pub trait TestDebug: core::fmt::Debug {}
#[cfg(test)]
impl<T: core::fmt::Debug + ?Sized> TestDebug for T {}
#[cfg(not(test))]
pub trait TestDebug {}
#[cfg(not(test))]
impl<T: ?Sized> TestDebug for T {}


/// A list as `[1, 2, 3]` in messages: `Display`, where `{:?}` would link `Debug` for each
/// element type into the module.
pub struct List<'a, T>(pub &'a [T]);

impl<T: core::fmt::Display> core::fmt::Display for List<'_, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("[")?;
        for (i, x) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            x.fmt(f)?;
        }
        f.write_str("]")
    }
}

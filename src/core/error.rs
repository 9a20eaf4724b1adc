use alloc::string::{String, ToString};
use core::fmt;

/// Stable error codes, surfaced to JS as `ShardfetchError.code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    NotFound,
    NotAnArray,
    HttpError,
    Network,
    InvalidMetadata,
    UnsupportedCodec,
    UnsupportedDataType,
    UnsupportedFormat,
    ChecksumMismatch,
    CorruptShard,
    CorruptChunk,
    InvalidSelection,
    TooLarge,
    Aborted,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "NotFound",
            ErrorCode::NotAnArray => "NotAnArray",
            ErrorCode::HttpError => "HttpError",
            ErrorCode::Network => "Network",
            ErrorCode::InvalidMetadata => "InvalidMetadata",
            ErrorCode::UnsupportedCodec => "UnsupportedCodec",
            ErrorCode::UnsupportedDataType => "UnsupportedDataType",
            ErrorCode::UnsupportedFormat => "UnsupportedFormat",
            ErrorCode::ChecksumMismatch => "ChecksumMismatch",
            ErrorCode::CorruptShard => "CorruptShard",
            ErrorCode::CorruptChunk => "CorruptChunk",
            ErrorCode::InvalidSelection => "InvalidSelection",
            ErrorCode::TooLarge => "TooLarge",
            ErrorCode::Aborted => "Aborted",
        }
    }
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

/// Largest single buffer we allocate from sizes that come from the network (wasm32 has 4 GiB).
pub const MAX_ALLOC: u64 = 1 << 31;

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

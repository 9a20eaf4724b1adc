//! The read-ahead windows a store kind keeps of the one file it reads, `(offset, bytes)` — a
//! TIFF's directories, an HDF5 file's structures —, looked in before the next range request;
//! and handed with a request to the kind's reader in a decoder module (`decoders/hdf5`,
//! `decoders/netcdf3`, `decoders/tiff`), whose JSON answer comes back. The request format and
//! the lookup are the protocol crate's (`decoders/abi`), which the modules read them with.
use crate::core::error::{Error, ErrorCode, Result};
use crate::core::external::Decoders;
use crate::core::json::{self, Value};
use alloc::format;

/// Reader `name`'s answer to `request` (a JSON object) about file `url`, given `windows`: a
/// JSON value, or its `{"error":…}` (and the reader's own failures) as an error naming the file.
pub fn ask<'a>(
    decoders: Option<&dyn Decoders>,
    (name, what): (&str, &str),
    url: &str,
    request_json: &str,
    windows: impl IntoIterator<Item = (u64, &'a [u8])> + Clone,
) -> Result<Value> {
    let Some(d) = decoders else {
        let why = format!("{url}: no {name} decoder is loaded (it reads {what})");
        return Err(Error::new(ErrorCode::UnsupportedCodec, why));
    };
    let input = abi::encode_request(request_json, windows);
    let out = d.decode(name, &input, &[]).map_err(|e| reader_error(url, e))?;
    drop(input);
    let v = json::parse(&out).map_err(|_| Error::new(ErrorCode::CorruptShard, format!("{url}: the {name} reader's answer is not JSON")))?;
    if let Some(e) = v.get("error") {
        let code = e.get("code").and_then(Value::as_str).and_then(ErrorCode::parse);
        let message = e.get("message").and_then(Value::as_str).unwrap_or("");
        return Err(Error::new(code.unwrap_or(ErrorCode::CorruptShard), format!("{url}: {message}")));
    }
    Ok(v)
}

/// A failure of the reader itself (a malformed request, a trap) as this file's error.
pub fn reader_error(url: &str, e: Error) -> Error {
    match e.code {
        ErrorCode::UnsupportedCodec => e,
        code => Error::new(code, format!("{url}: {}", e.message)),
    }
}

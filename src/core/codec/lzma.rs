//! numcodecs `LZMA` in its default `.xz` container (format 1), its check (CRC-32 or CRC-64)
//! verified; decoded by `xz4rust` (no_std, memory safe). The `.lzma` and raw formats are
//! refused by name.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{err, invalid, ErrorCode, Result};
use crate::core::json::{Map, Value};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// The largest dictionary accepted: xz's `-9` preset.
const MAX_DICT: usize = 64 << 20;

#[derive(Debug)]
pub struct Lzma;

impl Lzma {
    pub fn parse(conf: &Map) -> Result<Lzma> {
        match conf.get("format").map(|f| (f, f.as_u64())) {
            None | Some((Value::Null, _)) | Some((_, Some(1))) => Ok(Lzma),
            Some((_, Some(2))) => err(ErrorCode::UnsupportedCodec, "unsupported lzma format 2 (.lzma, \"alone\"): only .xz (format 1) is read"),
            Some((_, Some(3))) => err(ErrorCode::UnsupportedCodec, "unsupported lzma format 3 (raw): only .xz (format 1) is read"),
            Some((f, _)) => Err(invalid(format!("lzma format {f}"))),
        }
    }
}

impl Codec for Lzma {
    fn name(&self) -> &str {
        "numcodecs.lzma"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::compressed_bound(n)
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        Ok(Decoded::bytes(unxz(&data.bytes, ctx.limit)?))
    }
}

/// One `.xz` stream decompressed to at most `limit` bytes.
pub fn unxz(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    use xz4rust::{XzDecoder, XzError, XzNextBlockResult};
    if !data.starts_with(b"\xfd7zXZ\0") {
        return err(ErrorCode::CorruptChunk, "lzma: not an .xz stream");
    }
    let mut d = XzDecoder::in_heap_with_alloc_dict_size(4096, MAX_DICT);
    let mut out: Vec<u8> = Vec::new();
    let mut pos = 0;
    loop {
        if out.len() == out.capacity() {
            super::grow_output(&mut out, data.len(), limit, "lzma")?;
        }
        let start = out.len();
        out.resize(out.capacity(), 0);
        let r = d.decode(&data[pos..], &mut out[start..]);
        let (used, made, end) = match r {
            Ok(XzNextBlockResult::NeedMoreData(used, made)) => (used, made, false),
            Ok(XzNextBlockResult::EndOfStream(used, made)) => (used, made, true),
            Err(XzError::DictionaryTooLarge(n)) => {
                return err(ErrorCode::TooLarge, format!("lzma: a {n}-byte dictionary exceeds the {MAX_DICT}-byte limit"))
            }
            Err(e) => return err(ErrorCode::CorruptChunk, format!("lzma: {e}")),
        };
        out.truncate(start + made);
        pos += used;
        if end {
            break;
        }
        if used == 0 && made == 0 {
            return err(ErrorCode::CorruptChunk, "lzma: the stream ends early");
        }
    }
    if out.len() > limit {
        return err(ErrorCode::CorruptChunk, format!("lzma: decompresses to more than {limit} bytes"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_other_formats_and_garbage() {
        let conf = |f: u64| crate::core::json::json!({ "format": f }).as_object().unwrap().clone();
        assert_eq!(Lzma::parse(&conf(2)).unwrap_err().code, ErrorCode::UnsupportedCodec);
        assert!(Lzma::parse(&conf(1)).is_ok());
        assert_eq!(unxz(b"\xfd7zXZ\0\0\x04", 100).unwrap_err().code, ErrorCode::CorruptChunk);
        assert_eq!(unxz(b"nope", 100).unwrap_err().code, ErrorCode::CorruptChunk);
    }
}

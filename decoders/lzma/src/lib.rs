//! numcodecs `LZMA` in its default `.xz` container (format 1): `decode(stream, [limit])` → one
//! `.xz` stream decompressed to at most `limit` bytes, its check (CRC-32 or CRC-64) verified.
#![forbid(unsafe_code)]
use abi::{count, grow_output, Failure};
use xz4rust::{XzDecoder, XzError, XzNextBlockResult};

abi::export_decoder!(decode);

/// The largest dictionary accepted: xz's `-9` preset.
const MAX_DICT: usize = 64 << 20;

pub fn decode(data: &[u8], args: &[f64]) -> Result<Vec<u8>, Failure> {
    let limit = usize::try_from(count(args, 0, "limit")?).unwrap_or(usize::MAX);
    if !data.starts_with(b"\xfd7zXZ\0") {
        return Err(Failure::corrupt("not an .xz stream"));
    }
    let mut d = XzDecoder::in_heap_with_alloc_dict_size(4096, MAX_DICT);
    let mut out: Vec<u8> = Vec::new();
    let mut pos = 0;
    loop {
        if out.len() == out.capacity() {
            grow_output(&mut out, data.len(), limit)?;
        }
        let start = out.len();
        out.resize(out.capacity(), 0);
        let (used, made, end) = match d.decode(&data[pos..], &mut out[start..]) {
            Ok(XzNextBlockResult::NeedMoreData(used, made)) => (used, made, false),
            Ok(XzNextBlockResult::EndOfStream(used, made)) => (used, made, true),
            Err(XzError::DictionaryTooLarge(n)) => {
                return Err(Failure::too_large(format!("a {n}-byte dictionary exceeds the {MAX_DICT}-byte limit")))
            }
            Err(e) => return Err(Failure::corrupt(e.to_string())),
        };
        out.truncate(start + made);
        pos += used;
        if end {
            break;
        }
        if used == 0 && made == 0 {
            return Err(Failure::corrupt("the stream ends early"));
        }
    }
    if out.len() > limit {
        return Err(Failure::corrupt(format!("decompresses to more than {limit} bytes")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn rejects_garbage() {
        assert_eq!(super::decode(b"\xfd7zXZ\0\0\x04", &[100.0]).unwrap_err().code, abi::CORRUPT);
        assert_eq!(super::decode(b"nope", &[100.0]).unwrap_err().code, abi::CORRUPT);
    }
}

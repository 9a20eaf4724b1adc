//! numcodecs `BZ2`: `decode(stream, [limit])` → one bzip2 stream decompressed to at most `limit`
//! bytes.
#![forbid(unsafe_code)]
use abi::{count, grow_output, Failure};

abi::export_decoder!(decode);

pub fn decode(data: &[u8], args: &[f64]) -> Result<Vec<u8>, Failure> {
    let limit = usize::try_from(count(args, 0, "limit")?).unwrap_or(usize::MAX);
    if !data.starts_with(b"BZh") {
        return Err(Failure::corrupt("not a bzip2 stream (no \"BZh\" magic)"));
    }
    let mut d = bzip2::Decompress::new(false);
    let mut out: Vec<u8> = Vec::new();
    loop {
        if out.len() == out.capacity() {
            grow_output(&mut out, data.len(), limit)?;
        }
        let consumed = usize::try_from(d.total_in()).unwrap_or(usize::MAX).min(data.len());
        let before = out.len();
        let status = d.decompress_vec(&data[consumed..], &mut out).map_err(|e| Failure::corrupt(e.to_string()))?;
        match status {
            bzip2::Status::StreamEnd => break,
            bzip2::Status::MemNeeded => return Err(Failure::too_large("out of memory")),
            _ if out.len() == before && out.len() < out.capacity() => {
                return Err(Failure::corrupt("the stream ends early"));
            }
            _ => {}
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
    fn rejects_non_bzip2_and_truncated() {
        assert_eq!(super::decode(b"hello", &[100.0]).unwrap_err().code, abi::CORRUPT);
        // "BZh9" + a block magic, cut short.
        assert_eq!(super::decode(b"BZh91AY&SY", &[100.0]).unwrap_err().code, abi::CORRUPT);
    }
}

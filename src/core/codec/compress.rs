//! gzip, zstd and crc32c, each decoding into a bounded buffer (sizes come from the network).
use crate::core::error::{err, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

/// A single-member gzip stream (RFC 1952), inflated to at most `limit` bytes.
pub fn gunzip(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    let bad = |why: &str| err(ErrorCode::CorruptChunk, format!("gzip: {why}"));
    if data.len() < 18 || data[0] != 0x1f || data[1] != 0x8b || data[2] != 8 {
        return bad("not a gzip stream");
    }
    let flags = data[3];
    let mut pos = 10usize;
    if flags & FEXTRA != 0 {
        let n = match data.get(pos..pos + 2) {
            Some(b) => u16::from_le_bytes([b[0], b[1]]) as usize,
            None => return bad("truncated header"),
        };
        pos += 2 + n;
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            match data.get(pos..).and_then(|d| d.iter().position(|&b| b == 0)) {
                Some(z) => pos += z + 1,
                None => return bad("truncated header"),
            }
        }
    }
    if flags & FHCRC != 0 {
        pos += 2;
    }
    if pos + 8 > data.len() {
        return bad("truncated stream");
    }
    let body = &data[pos..data.len() - 8];
    let out = miniz_oxide::inflate::decompress_to_vec_with_limit(body, limit).map_err(|e| {
        crate::core::Error::new(ErrorCode::CorruptChunk, format!("gzip: {:?} (or larger than {limit} bytes)", e.status))
    })?;
    let t = &data[data.len() - 4..];
    let isize = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
    if isize != out.len() as u32 {
        return bad("length in the trailer does not match");
    }
    Ok(out)
}

/// One or more zstd frames, decoded to at most `limit` bytes.
pub fn unzstd(data: &[u8], limit: usize) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    if out.try_reserve_exact(limit).is_err() {
        return err(ErrorCode::TooLarge, format!("cannot allocate {limit} bytes"));
    }
    let mut d = ruzstd::decoding::FrameDecoder::new();
    d.decode_all_to_vec(data, &mut out)
        .map_err(|e| crate::core::Error::new(ErrorCode::CorruptChunk, format!("zstd: {e} (limit {limit} bytes)")))?;
    Ok(out)
}

/// Verify and strip a trailing CRC-32C (little-endian).
pub fn strip_crc32c(mut data: Vec<u8>) -> Result<Vec<u8>> {
    if data.len() < 4 {
        return err(ErrorCode::CorruptChunk, "crc32c: shorter than its checksum");
    }
    let n = data.len() - 4;
    verify_crc32c(&data[..n], &data[n..])?;
    data.truncate(n);
    Ok(data)
}

pub fn verify_crc32c(data: &[u8], stored: &[u8]) -> Result<()> {
    let stored = u32::from_le_bytes([stored[0], stored[1], stored[2], stored[3]]);
    let actual = crc32c::crc32c(data);
    if stored != actual {
        return err(
            ErrorCode::ChecksumMismatch,
            format!("crc32c mismatch: stored {stored:#010x}, computed {actual:#010x}"),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_known_vector() {
        // RFC 3720 test vector: 32 bytes of zeros.
        assert_eq!(crc32c::crc32c(&[0u8; 32]), 0x8a9136aa);
        let mut v = alloc::vec![1u8, 2, 3];
        v.extend_from_slice(&crc32c::crc32c(&[1, 2, 3]).to_le_bytes());
        assert_eq!(strip_crc32c(v.clone()).unwrap(), [1, 2, 3]);
        v[0] ^= 1;
        assert_eq!(strip_crc32c(v).unwrap_err().code, ErrorCode::ChecksumMismatch);
    }

    #[test]
    fn gzip_rejects_garbage_and_bombs() {
        assert_eq!(gunzip(b"not gzip at all, clearly", 100).unwrap_err().code, ErrorCode::CorruptChunk);
        // `python3 -c "import gzip,sys; sys.stdout.buffer.write(gzip.compress(b'a'*1000, mtime=0))"`
        let gz: [u8; 29] = [
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0x4c, 0x1c, 0x05, 0xa3, 0x60, 0x14, 0x0c,
            0x77, 0x00, 0x00, 0x03, 0xda, 0x38, 0x9a, 0xe8, 0x03, 0x00, 0x00,
        ];
        assert_eq!(gunzip(&gz, 1000).unwrap(), [b'a'; 1000]);
        assert!(gunzip(&gz, 999).is_err());
    }

    #[test]
    fn zstd_rejects_garbage() {
        assert_eq!(unzstd(b"\x28\xb5\x2f\xfd garbage", 100).unwrap_err().code, ErrorCode::CorruptChunk);
    }
}

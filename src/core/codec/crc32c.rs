//! `crc32c`: a trailing CRC-32C (little-endian), verified and stripped.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{err, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

#[derive(Debug)]
pub struct Crc32c;

impl Codec for Crc32c {
    fn name(&self) -> &str {
        "crc32c"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        n.saturating_add(4)
    }
    fn decode(&self, data: Decoded, _ctx: &Ctx) -> Result<Decoded> {
        Ok(Decoded::bytes(strip_crc32c(data.bytes)?))
    }
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
    let actual = crate::core::crc::crc32c(data);
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
        assert_eq!(crate::core::crc::crc32c(&[0u8; 32]), 0x8a9136aa);
        let mut v = alloc::vec![1u8, 2, 3];
        v.extend_from_slice(&crate::core::crc::crc32c(&[1, 2, 3]).to_le_bytes());
        assert_eq!(strip_crc32c(v.clone()).unwrap(), [1, 2, 3]);
        v[0] ^= 1;
        assert_eq!(strip_crc32c(v).unwrap_err().code, ErrorCode::ChecksumMismatch);
    }
}

//! `gzip` (Zarr v3, numcodecs `GZip`): a single-member gzip stream.
pub use super::deflate::gunzip;
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::Result;

#[derive(Debug)]
pub struct Gzip;

impl Codec for Gzip {
    fn name(&self) -> &str {
        "gzip"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::compressed_bound(n)
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        Ok(Decoded::bytes(gunzip(&data.bytes, ctx.limit)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::ErrorCode;

    #[test]
    fn gzip_rejects_garbage_and_bombs() {
        assert_eq!(gunzip(b"not gzip at all, clearly", 100).unwrap_err().code, ErrorCode::CorruptChunk);
        // `python3 -c "import gzip,sys; sys.stdout.buffer.write(gzip.compress(b'a'*1000, mtime=0))"`
        let gz: [u8; 29] = [
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x4b, 0x4c, 0x1c, 0x05, 0xa3, 0x60, 0x14, 0x0c,
            0x77, 0x00, 0x00, 0x03, 0xda, 0x38, 0x9a, 0xe8, 0x03, 0x00, 0x00,
        ];
        assert_eq!(gunzip(&gz, 1000).unwrap(), [b'a'; 1000]);
        // A byte over the limit: refused as a bomb would be (CorruptChunk naming the limit).
        let e = gunzip(&gz, 999).unwrap_err();
        assert_eq!(e.code, ErrorCode::CorruptChunk, "{e}");
        assert!(e.message.contains("999 bytes"), "{e}");
        let mut wrong = gz;
        wrong[21] ^= 1; // the CRC-32: the data inflate alike, the check catches it
        assert_eq!(gunzip(&wrong, 1000).unwrap_err().code, ErrorCode::ChecksumMismatch);
    }
}

//! `gzip` (Zarr v3, numcodecs `GZip`): a single-member gzip stream.
use super::deflate::inflate;
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{err, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

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
    let t = &data[data.len() - 4..];
    let isize = u32::from_le_bytes([t[0], t[1], t[2], t[3]]) as usize;
    // The trailer's length (mod 2^32) sizes the output; a lying trailer fails the check below.
    let out = inflate(body, false, limit, isize.min(limit)).map_err(|e| e.at("gzip"))?;
    if isize as u32 != out.len() as u32 {
        return bad("length in the trailer does not match");
    }
    let c = &data[data.len() - 8..data.len() - 4];
    let stored = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    let actual = crc32fast::hash(&out);
    if stored != actual {
        return err(
            ErrorCode::ChecksumMismatch,
            format!("gzip: CRC-32 mismatch: stored {stored:#010x}, computed {actual:#010x}"),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut wrong = gz;
        wrong[21] ^= 1; // the CRC-32: the data inflate alike, the check catches it
        assert_eq!(gunzip(&wrong, 1000).unwrap_err().code, ErrorCode::ChecksumMismatch);
    }
}

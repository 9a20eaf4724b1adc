//! Raw deflate and zlib streams inflated into a bounded buffer (zune-inflate).
use alloc::vec::Vec;

pub use zune_inflate::errors::DecodeErrorStatus;

/// `data` (raw deflate, or zlib with its Adler-32 checked when `zlib`) inflated to at most
/// `limit` bytes, into a buffer first sized `hint`. The decoder checks its limit between blocks
/// and matches: a stored block may overshoot it, so callers check the length.
#[inline(never)]
pub fn inflate(data: &[u8], zlib: bool, limit: usize, hint: usize) -> Result<Vec<u8>, DecodeErrorStatus> {
    let options = zune_inflate::DeflateOptions::default().set_limit(limit).set_size_hint(hint);
    let mut d = zune_inflate::DeflateDecoder::new_with_options(data, options);
    let r = if zlib { d.decode_zlib() } else { d.decode_deflate() };
    r.map_err(|e| e.error)
}

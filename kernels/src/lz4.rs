//! One LZ4 block (no frame), by lz4_flex (safe decode, checked).

pub use lz4_flex::block::DecompressError;

/// `block` decoded into `out`; the number of bytes written.
#[inline(never)]
pub fn decompress_into(block: &[u8], out: &mut [u8]) -> Result<usize, DecompressError> {
    lz4_flex::block::decompress_into(block, out)
}

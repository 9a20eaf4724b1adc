//! Bounded reads of little-endian numbers, for the parsers of binary indexes (zip directories,
//! flatbuffers, TIFF and HDF5 headers): past the end is `None`, never a panic.
//!
//! May import: nothing.

/// The `N` bytes at `at` of `b` (for a little-endian number), or `None` past its end.
pub fn le<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}

pub fn u16_le(b: &[u8], at: usize) -> Option<u16> {
    le(b, at).map(u16::from_le_bytes)
}

pub fn u32_le(b: &[u8], at: usize) -> Option<u32> {
    le(b, at).map(u32::from_le_bytes)
}

pub fn u64_le(b: &[u8], at: usize) -> Option<u64> {
    le(b, at).map(u64::from_le_bytes)
}

//! The read-ahead windows a store kind keeps of the one file it reads, `(offset, bytes)` — a
//! TIFF's directories, an HDF5 file's structures —, looked in before the next range request.

/// The `len` bytes at `at`, if one of `windows` holds them all.
pub fn held<'a>(windows: impl IntoIterator<Item = (u64, &'a [u8])>, at: u64, len: u64) -> Option<&'a [u8]> {
    let len = usize::try_from(len).ok()?;
    windows.into_iter().find_map(|(w, b)| b.get(usize::try_from(at.checked_sub(w)?).ok()?..)?.get(..len))
}

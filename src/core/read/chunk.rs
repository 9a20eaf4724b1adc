//! What reads hand back: chunks and regions as the API returns them, and each piece of a read.
use crate::core::codec::Decoded;
use crate::core::metadata::dtype::content;
use crate::core::metadata::DataType;
use alloc::vec::Vec;

/// An array chunk or region: little-endian elements, `stride` in elements per axis.
/// For a chunk at the array's edge `shape` is clipped while `stride` may stay the stored
/// chunk's, so `bytes` may hold more elements than `shape` covers.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub bytes: Vec<u8>,
    pub shape: Vec<u64>,
    pub stride: Vec<u64>,
    /// Contents of variable-length elements, which `bytes` holds as handles (else empty).
    pub heap: Vec<u8>,
}

/// What a read hands over for one piece of its plan.
#[derive(Debug)]
pub enum Got {
    /// Decoded (a read that decodes here).
    Decoded(Decoded),
    /// The stored bytes, for a decoder elsewhere (a worker).
    Encoded(Vec<u8>),
    /// Not stored: the fill value.
    Absent,
}

/// One element of a text, bytes or JSON array, as read.
#[derive(Clone, Debug, PartialEq)]
pub enum Element<'a> {
    Text(alloc::string::String),
    Bytes(&'a [u8]),
    /// A JSON value's text.
    Json(&'a [u8]),
}

/// How fixed-length strings come out (the `strings` option): as the file declares them (an HDF5
/// or NetCDF string as text, Zarr's `null_terminated_bytes` as bytes), all as text (the latter
/// as UTF-8), or all as bytes (without their padding).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strings {
    #[default]
    Declared,
    Text,
    Bytes,
}

impl Chunk {
    /// Element `i` of `bytes` (in storage order, as `stride` addresses it) when the data type
    /// is text, bytes or JSON; `None` for other types or an index or handle out of range.
    pub fn element(&self, dtype: DataType, i: usize) -> Option<Element<'_>> {
        self.element_as(dtype, i, Strings::Declared)
    }

    /// [`Chunk::element`], fixed-length strings as `strings` says.
    pub fn element_as(&self, dtype: DataType, i: usize, strings: Strings) -> Option<Element<'_>> {
        let size = dtype.size();
        let raw = self.bytes.get(i.checked_mul(size)?..i.checked_mul(size)?.checked_add(size)?)?;
        Some(match dtype {
            DataType::String => {
                Element::Text(alloc::string::String::from_utf8_lossy(content(raw, &self.heap)?).into_owned())
            }
            DataType::Bytes => Element::Bytes(content(raw, &self.heap)?),
            DataType::Json => Element::Json(content(raw, &self.heap)?),
            // NumPy strips the NUL padding of `U` and `S` elements.
            DataType::FixedUtf32(_) => {
                let mut units: alloc::vec::Vec<u32> =
                    raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
                while units.last() == Some(&0) {
                    units.pop();
                }
                Element::Text(units.into_iter().map(|u| char::from_u32(u).unwrap_or('\u{fffd}')).collect())
            }
            DataType::FixedBytes(_) => {
                let end = raw.iter().rposition(|&b| b != 0).map_or(0, |k| k + 1);
                let b = raw.get(..end)?;
                match strings {
                    Strings::Text => Element::Text(alloc::string::String::from_utf8_lossy(b).into_owned()),
                    _ => Element::Bytes(b),
                }
            }
            DataType::FixedString(t) => match strings {
                Strings::Bytes => Element::Bytes(t.content(raw)),
                _ => Element::Text(t.text(raw)),
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metadata::dtype::StrType;

    fn chunk(bytes: &[u8]) -> Chunk {
        Chunk { bytes: bytes.to_vec(), shape: alloc::vec![2], stride: alloc::vec![1], heap: Vec::new() }
    }

    #[test]
    fn fixed_length_strings_as_declared_as_text_or_as_bytes() {
        let t = DataType::FixedString(StrType::parse(4, "utf-8", "nullterm").unwrap());
        let c = chunk(b"\xc3\xa9\0xab\xff\0");
        let text = |i, s| c.element_as(t, i, s);
        assert_eq!(c.element(t, 0), Some(Element::Text("\u{e9}".into())));
        assert_eq!(text(1, Strings::Text), Some(Element::Text("ab\u{fffd}".into())));
        assert_eq!(text(0, Strings::Bytes), Some(Element::Bytes(b"\xc3\xa9")));
        assert_eq!(text(2, Strings::Declared), None);
        // Zarr's NumPy `S`: bytes as declared, UTF-8 text when asked.
        let z = DataType::FixedBytes(4);
        assert_eq!(c.element(z, 1), Some(Element::Bytes(b"ab\xff")));
        assert_eq!(c.element_as(z, 0, Strings::Text), Some(Element::Text("\u{e9}\0x".into())));
        assert_eq!(c.element_as(z, 1, Strings::Bytes), Some(Element::Bytes(b"ab\xff")));
    }
}

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

impl Chunk {
    /// Element `i` of `bytes` (in storage order, as `stride` addresses it) when the data type
    /// is text, bytes or JSON; `None` for other types or an index or handle out of range.
    pub fn element(&self, dtype: DataType, i: usize) -> Option<Element<'_>> {
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
                Element::Bytes(&raw[..end])
            }
            _ => return None,
        })
    }
}

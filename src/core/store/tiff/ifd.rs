//! TIFF's structure, read from bytes: the header (classic or BigTIFF, either byte order) and an
//! image file directory's entries, each a tag, a type, a count and its value — inline, or at an
//! offset in the file. Every count and offset is checked against what it can hold.
use crate::core::error::{Error, ErrorCode, Result};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// What the first bytes of a TIFF say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub big_endian: bool,
    pub bigtiff: bool,
    /// Where the first directory is.
    pub first: u64,
}

impl Header {
    /// The header at the start of `b`, if it is one.
    pub fn parse(b: &[u8]) -> Option<Header> {
        let big_endian = match b.get(..2)? {
            b"II" => false,
            b"MM" => true,
            _ => return None,
        };
        let h = Header { big_endian, bigtiff: false, first: 0 };
        match h.u16(b, 2)? {
            42 => Some(Header { first: u64::from(h.u32(b, 4)?), ..h }),
            43 if h.u16(b, 4)? == 8 && h.u16(b, 6)? == 0 => Some(Header { bigtiff: true, first: h.u64(b, 8)?, ..h }),
            _ => None,
        }
    }

    fn bytes<const N: usize>(&self, b: &[u8], at: usize) -> Option<[u8; N]> {
        let mut v = crate::core::bytes::le::<N>(b, at)?;
        if self.big_endian {
            v.reverse();
        }
        Some(v)
    }
    pub fn u16(&self, b: &[u8], at: usize) -> Option<u16> {
        self.bytes(b, at).map(u16::from_le_bytes)
    }
    pub fn u32(&self, b: &[u8], at: usize) -> Option<u32> {
        self.bytes(b, at).map(u32::from_le_bytes)
    }
    pub fn u64(&self, b: &[u8], at: usize) -> Option<u64> {
        self.bytes(b, at).map(u64::from_le_bytes)
    }

    /// Bytes of a directory's entry count, of one entry, of the next-directory offset.
    pub fn sizes(&self) -> (u64, u64, u64) {
        if self.bigtiff {
            (8, 20, 8)
        } else {
            (2, 12, 4)
        }
    }
}

/// Where an entry's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// In the entry itself (the first `count × size` of these bytes, in the file's order).
    Inline([u8; 8]),
    /// At this offset of the file.
    Offset(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub tag: u16,
    pub typ: u16,
    pub count: u64,
    pub at: At,
}

/// Bytes of one value of TIFF type `typ`, if it is one.
pub fn type_size(typ: u16) -> Option<u64> {
    Some(match typ {
        1 | 2 | 6 | 7 => 1,
        3 | 8 => 2,
        4 | 9 | 11 | 13 => 4,
        5 | 10 | 12 | 16 | 17 | 18 => 8,
        _ => return None,
    })
}

impl Entry {
    /// Bytes of its value, when its type is one TIFF defines.
    pub fn len(&self) -> Option<u64> {
        self.count.checked_mul(type_size(self.typ)?)
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// One directory: its entries by tag, and where the next one is (0: none).
#[derive(Clone, Debug, Default)]
pub struct Ifd {
    pub entries: Vec<Entry>,
    pub next: u64,
}

impl Ifd {
    pub fn get(&self, tag: u16) -> Option<&Entry> {
        self.entries.iter().find(|e| e.tag == tag)
    }
}

pub fn corrupt(file: &str, why: impl core::fmt::Display) -> Error {
    Error::new(ErrorCode::CorruptShard, format!("{file}: not a readable TIFF: {why}"))
}

/// How many entries the directory whose first bytes are `b` has (what its whole size follows from).
pub fn entry_count(h: &Header, b: &[u8]) -> Option<u64> {
    if h.bigtiff {
        h.u64(b, 0)
    } else {
        h.u16(b, 0).map(u64::from)
    }
}

/// The directory whose bytes are `b` (count, entries, next offset), in file `file`.
pub fn parse_ifd(file: &str, h: &Header, b: &[u8]) -> Result<Ifd> {
    let (head, each, tail) = h.sizes();
    let n = entry_count(h, b).ok_or_else(|| corrupt(file, "a directory cut short"))?;
    let need = n.checked_mul(each).and_then(|x| x.checked_add(head + tail));
    if need.is_none_or(|need| need > b.len() as u64) {
        return Err(corrupt(file, format!("a directory of {n} entries in {} bytes", b.len())));
    }
    let mut entries = Vec::with_capacity(n as usize);
    for k in 0..n as usize {
        let at = head as usize + k * each as usize;
        let bad = || corrupt(file, "a directory entry cut short");
        let tag = h.u16(b, at).ok_or_else(bad)?;
        let typ = h.u16(b, at + 2).ok_or_else(bad)?;
        let (count, value_at, inline) = match h.bigtiff {
            true => (h.u64(b, at + 4).ok_or_else(bad)?, at + 12, 8),
            false => (u64::from(h.u32(b, at + 4).ok_or_else(bad)?), at + 8, 4),
        };
        let size = type_size(typ).and_then(|s| s.checked_mul(count));
        let at = match size {
            Some(s) if s <= inline => {
                let mut v = [0u8; 8];
                v[..inline as usize].copy_from_slice(b.get(value_at..value_at + inline as usize).ok_or_else(bad)?);
                At::Inline(v)
            }
            _ if h.bigtiff => At::Offset(h.u64(b, value_at).ok_or_else(bad)?),
            _ => At::Offset(u64::from(h.u32(b, value_at).ok_or_else(bad)?)),
        };
        entries.push(Entry { tag, typ, count, at });
    }
    let next_at = head as usize + n as usize * each as usize;
    let next = if h.bigtiff { h.u64(b, next_at) } else { h.u32(b, next_at).map(u64::from) };
    Ok(Ifd { entries, next: next.unwrap_or(0) })
}

/// The integers of a value of type BYTE, SHORT, LONG, LONG8 or IFD (`b`: its bytes).
pub fn integers(h: &Header, e: &Entry, b: &[u8]) -> Option<Vec<u64>> {
    let size = type_size(e.typ)? as usize;
    let n = usize::try_from(e.count).ok()?;
    if b.len() < n.checked_mul(size)? {
        return None;
    }
    (0..n)
        .map(|k| match e.typ {
            1 => b.get(k).map(|&v| u64::from(v)),
            3 => h.u16(b, 2 * k).map(u64::from),
            4 | 13 => h.u32(b, 4 * k).map(u64::from),
            16 | 18 => h.u64(b, 8 * k),
            _ => None,
        })
        .collect()
}

/// The numbers of a value of a numeric type, as f64 (rationals divided out).
pub fn numbers(h: &Header, e: &Entry, b: &[u8]) -> Option<Vec<f64>> {
    let n = usize::try_from(e.count).ok()?;
    if b.len() < n.checked_mul(type_size(e.typ)? as usize)? {
        return None;
    }
    (0..n)
        .map(|k| match e.typ {
            1 => b.get(k).map(|&v| f64::from(v)),
            6 => b.get(k).map(|&v| f64::from(v as i8)),
            3 => h.u16(b, 2 * k).map(f64::from),
            8 => h.u16(b, 2 * k).map(|v| f64::from(v as i16)),
            4 | 13 => h.u32(b, 4 * k).map(f64::from),
            9 => h.u32(b, 4 * k).map(|v| f64::from(v as i32)),
            11 => h.u32(b, 4 * k).map(|v| f64::from(f32::from_bits(v))),
            12 => h.u64(b, 8 * k).map(f64::from_bits),
            16 | 18 => h.u64(b, 8 * k).map(|v| v as f64),
            17 => h.u64(b, 8 * k).map(|v| v as i64 as f64),
            5 => Some(f64::from(h.u32(b, 8 * k)?) / f64::from(h.u32(b, 8 * k + 4)?)),
            10 => Some(f64::from(h.u32(b, 8 * k)? as i32) / f64::from(h.u32(b, 8 * k + 4)? as i32)),
            _ => None,
        })
        .collect()
}

/// The text of an ASCII value (up to its first NUL).
pub fn text(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_of_four_kinds() {
        assert_eq!(Header::parse(b"II*\0\x08\0\0\0"), Some(Header { big_endian: false, bigtiff: false, first: 8 }));
        assert_eq!(Header::parse(b"MM\0*\0\0\0\x08"), Some(Header { big_endian: true, bigtiff: false, first: 8 }));
        let big = b"II+\0\x08\0\0\0\x10\0\0\0\0\0\0\0";
        assert_eq!(Header::parse(big), Some(Header { big_endian: false, bigtiff: true, first: 16 }));
        assert_eq!(Header::parse(b"PK\x03\x04"), None);
        assert_eq!(Header::parse(b"II+\0\x04\0\0\0"), None);
    }

    #[test]
    fn a_directory_and_its_values() {
        let h = Header { big_endian: false, bigtiff: false, first: 8 };
        let mut b = Vec::new();
        b.extend_from_slice(&2u16.to_le_bytes());
        // ImageWidth SHORT 1 = 300; BitsPerSample SHORT 3 at offset 100.
        b.extend_from_slice(&[0, 1, 3, 0, 1, 0, 0, 0, 44, 1, 0, 0]);
        b.extend_from_slice(&[2, 1, 3, 0, 3, 0, 0, 0, 100, 0, 0, 0]);
        b.extend_from_slice(&0u32.to_le_bytes());
        let ifd = parse_ifd("f", &h, &b).unwrap();
        assert_eq!(ifd.entries.len(), 2);
        let w = ifd.get(256).unwrap();
        let At::Inline(v) = w.at else { panic!() };
        assert_eq!(integers(&h, w, &v), Some(alloc::vec![300]));
        assert_eq!(ifd.get(258).unwrap().at, At::Offset(100));
        assert_eq!(parse_ifd("f", &h, &b[..20]).unwrap_err().code, ErrorCode::CorruptShard);
    }
}

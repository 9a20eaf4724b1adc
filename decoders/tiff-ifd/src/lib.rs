//! TIFF's structure, read from bytes: the header (classic or BigTIFF, either byte order) and an
//! image file directory's entries, each a tag, a type, a count and its value — inline, or at an
//! offset in the file. Every count and offset is checked against what it can hold.
//!
//! A crate both sides depend on: the core (which follows directories to tiles) and the tiff
//! decoder module (which describes them). Every function is `#[inline]`: compiled into the
//! core's own code, as when this was a file of the core (without, the core module was 2.3 KB
//! gzipped larger).
#![no_std]
#![forbid(unsafe_code)]
extern crate alloc;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

pub const IMAGE_WIDTH: u16 = 256;
pub const IMAGE_LENGTH: u16 = 257;
pub const BITS_PER_SAMPLE: u16 = 258;
pub const COMPRESSION: u16 = 259;
pub const PHOTOMETRIC: u16 = 262;
pub const IMAGE_DESCRIPTION: u16 = 270;
pub const STRIP_OFFSETS: u16 = 273;
pub const SAMPLES_PER_PIXEL: u16 = 277;
pub const ROWS_PER_STRIP: u16 = 278;
pub const STRIP_BYTE_COUNTS: u16 = 279;
pub const PLANAR: u16 = 284;
pub const PREDICTOR: u16 = 317;
pub const TILE_WIDTH: u16 = 322;
pub const TILE_LENGTH: u16 = 323;
pub const TILE_OFFSETS: u16 = 324;
pub const TILE_BYTE_COUNTS: u16 = 325;
pub const SAMPLE_FORMAT: u16 = 339;
pub const NEW_SUBFILE_TYPE: u16 = 254;
pub const MODEL_PIXEL_SCALE: u16 = 33550;
pub const MODEL_TIEPOINT: u16 = 33922;
pub const MODEL_TRANSFORMATION: u16 = 34264;
pub const GEO_KEY_DIRECTORY: u16 = 34735;
pub const GDAL_NODATA: u16 = 42113;
pub const GDAL_METADATA: u16 = 42112;
pub const JPEG_TABLES: u16 = 347;
pub const LERC_PARAMETERS: u16 = 50674;

/// Bytes of a tag's value given with the raw tags (where the bytes read hold it).
pub const RAW_TAG_BYTES: u64 = 16 << 10;

/// Tags whose values describe the image (read before it is described, where not inline).
pub const DESCRIBING: [u16; 10] = [
    GDAL_METADATA,
    BITS_PER_SAMPLE,
    SAMPLE_FORMAT,
    GDAL_NODATA,
    MODEL_PIXEL_SCALE,
    MODEL_TIEPOINT,
    MODEL_TRANSFORMATION,
    GEO_KEY_DIRECTORY,
    JPEG_TABLES,
    LERC_PARAMETERS,
];

/// SubIFDs: the reduced-resolution images of an OME-TIFF plane.
pub const SUB_IFDS: u16 = 330;

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
    #[inline]
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

    #[inline]

    fn bytes<const N: usize>(&self, b: &[u8], at: usize) -> Option<[u8; N]> {
        let mut v: [u8; N] = b.get(at..at.checked_add(N)?)?.try_into().ok()?;
        if self.big_endian {
            v.reverse();
        }
        Some(v)
    }
        #[inline]
        pub fn u16(&self, b: &[u8], at: usize) -> Option<u16> {
        self.bytes(b, at).map(u16::from_le_bytes)
    }
        #[inline]
        pub fn u32(&self, b: &[u8], at: usize) -> Option<u32> {
        self.bytes(b, at).map(u32::from_le_bytes)
    }
        #[inline]
        pub fn u64(&self, b: &[u8], at: usize) -> Option<u64> {
        self.bytes(b, at).map(u64::from_le_bytes)
    }

    /// Bytes of a directory's entry count, of one entry, of the next-directory offset.
        #[inline]
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
#[inline]
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
        #[inline]
        pub fn len(&self) -> Option<u64> {
        self.count.checked_mul(type_size(self.typ)?)
    }
        #[inline]
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
        #[inline]
        pub fn get(&self, tag: u16) -> Option<&Entry> {
        self.entries.iter().find(|e| e.tag == tag)
    }
}

/// How many entries the directory whose first bytes are `b` has (what its whole size follows from).
#[inline]
pub fn entry_count(h: &Header, b: &[u8]) -> Option<u64> {
    if h.bigtiff {
        h.u64(b, 0)
    } else {
        h.u16(b, 0).map(u64::from)
    }
}

/// Bytes of a directory of `n` entries (count, entries, next offset), if it can be that large.
#[inline]
pub fn directory_len(h: &Header, n: u64) -> Option<u64> {
    let (head, each, tail) = h.sizes();
    n.checked_mul(each)?.checked_add(head + tail)
}

/// The directory whose bytes are `b` (count, entries, next offset), or why it is none.
#[inline]
pub fn parse_ifd(h: &Header, b: &[u8]) -> Result<Ifd, String> {
    let (head, each, _) = h.sizes();
    let n = entry_count(h, b).ok_or("a directory cut short")?;
    if directory_len(h, n).is_none_or(|need| need > b.len() as u64) {
        return Err(format!("a directory of {n} entries in {} bytes", b.len()));
    }
    let mut entries = Vec::with_capacity(n as usize);
    for k in 0..n as usize {
        let at = head as usize + k * each as usize;
        let bad = || String::from("a directory entry cut short");
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
#[inline]
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
        let ifd = parse_ifd(&h, &b).unwrap();
        assert_eq!(ifd.entries.len(), 2);
        let w = ifd.get(256).unwrap();
        let At::Inline(v) = w.at else { panic!() };
        assert_eq!(integers(&h, w, &v), Some(alloc::vec![300]));
        assert_eq!(ifd.get(258).unwrap().at, At::Offset(100));
        assert_eq!(parse_ifd(&h, &b[..20]).unwrap_err(), "a directory of 2 entries in 20 bytes");
    }
}

//! A flatbuffers reader for the few tables Icechunk's files hold: every offset and length
//! checked against the buffer before it is followed (a hostile file is an error, never a read
//! out of bounds or an allocation). Reads fields in place; nothing is copied or validated ahead.
use crate::core::error::{Error, ErrorCode, Result};

fn bad() -> Error {
    Error::new(ErrorCode::CorruptShard, "a malformed flatbuffer (an offset or length outside the file)")
}

fn le<const N: usize>(b: &[u8], at: usize) -> Result<[u8; N]> {
    crate::core::bytes::le(b, at).ok_or_else(bad)
}
fn u16_at(b: &[u8], at: usize) -> Result<u16> {
    Ok(u16::from_le_bytes(le(b, at)?))
}
fn u32_at(b: &[u8], at: usize) -> Result<u32> {
    Ok(u32::from_le_bytes(le(b, at)?))
}

/// A table: its position and its vtable's.
#[derive(Clone, Copy, Debug)]
pub struct Table<'a> {
    buf: &'a [u8],
    at: usize,
    vtable: usize,
    slots: usize,
}

/// A vector: where its elements start, and how many.
#[derive(Clone, Copy, Debug)]
pub struct Vector<'a> {
    buf: &'a [u8],
    at: usize,
    pub len: usize,
}

/// The root table of a buffer.
pub fn root(buf: &[u8]) -> Result<Table<'_>> {
    Table::at(buf, u32_at(buf, 0)? as usize)
}

/// What an offset stored at `at` points to.
fn follow(buf: &[u8], at: usize) -> Result<usize> {
    at.checked_add(u32_at(buf, at)? as usize).filter(|&p| p < buf.len()).ok_or_else(bad)
}

impl<'a> Table<'a> {
    fn at(buf: &'a [u8], at: usize) -> Result<Table<'a>> {
        let back = i32::from_le_bytes(le(buf, at)?) as i64;
        let vtable = usize::try_from(at as i64 - back).map_err(|_| bad())?;
        let size = usize::from(u16_at(buf, vtable)?);
        if size < 4 || size % 2 != 0 || vtable + size > buf.len() {
            return Err(bad());
        }
        Ok(Table { buf, at, vtable, slots: (size - 4) / 2 })
    }

    /// Where field `slot`'s value is, if present (`width` bytes of it inside the buffer).
    fn field(&self, slot: usize, width: usize) -> Result<Option<usize>> {
        if slot >= self.slots {
            return Ok(None);
        }
        let off = usize::from(u16_at(self.buf, self.vtable + 4 + 2 * slot)?);
        if off == 0 {
            return Ok(None);
        }
        let at = self.at + off;
        if at.checked_add(width).is_none_or(|e| e > self.buf.len()) {
            return Err(bad());
        }
        Ok(Some(at))
    }

    pub fn u8(&self, slot: usize, default: u8) -> Result<u8> {
        Ok(match self.field(slot, 1)? {
            Some(at) => self.buf[at],
            None => default,
        })
    }
    pub fn u32(&self, slot: usize, default: u32) -> Result<u32> {
        self.field(slot, 4)?.map_or(Ok(default), |at| u32_at(self.buf, at))
    }
    pub fn u64(&self, slot: usize, default: u64) -> Result<u64> {
        self.field(slot, 8)?.map_or(Ok(default), |at| Ok(u64::from_le_bytes(le(self.buf, at)?)))
    }

    /// An inline struct of `n` bytes.
    pub fn bytes(&self, slot: usize, n: usize) -> Result<Option<&'a [u8]>> {
        Ok(self.field(slot, n)?.map(|at| &self.buf[at..at + n]))
    }

    pub fn table(&self, slot: usize) -> Result<Option<Table<'a>>> {
        self.field(slot, 4)?.map(|at| Table::at(self.buf, follow(self.buf, at)?)).transpose()
    }

    /// A vector of elements of `size` bytes (4 for tables, strings and offsets).
    pub fn vector(&self, slot: usize, size: usize) -> Result<Option<Vector<'a>>> {
        let Some(at) = self.field(slot, 4)? else { return Ok(None) };
        let start = follow(self.buf, at)?;
        let len = u32_at(self.buf, start)? as usize;
        let at = start + 4;
        // Checked before anything is read: a length claiming billions of elements is an error.
        if len.checked_mul(size).and_then(|n| n.checked_add(at)).is_none_or(|e| e > self.buf.len()) {
            return Err(bad());
        }
        Ok(Some(Vector { buf: self.buf, at, len }))
    }

    /// A string or a `[ubyte]` vector.
    pub fn blob(&self, slot: usize) -> Result<Option<&'a [u8]>> {
        Ok(self.vector(slot, 1)?.map(|v| &v.buf[v.at..v.at + v.len]))
    }

    pub fn str(&self, slot: usize) -> Result<Option<&'a str>> {
        self.blob(slot)?.map(|b| core::str::from_utf8(b).map_err(|_| bad())).transpose()
    }
}

impl<'a> Vector<'a> {
    /// Element `i` of a vector of structs of `size` bytes.
    pub fn item(&self, i: usize, size: usize) -> &'a [u8] {
        let at = self.at + i.min(self.len) * size;
        self.buf.get(at..at + size).unwrap_or(&[])
    }

    pub fn u32(&self, i: usize) -> Result<u32> {
        u32_at(self.item(i, 4), 0)
    }

    /// Element `i` of a vector of tables.
    pub fn table(&self, i: usize) -> Result<Table<'a>> {
        if i >= self.len {
            return Err(bad());
        }
        Table::at(self.buf, follow(self.buf, self.at + 4 * i)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// A root table with one u32 field (7) and a vector of two u32 (1, 2):
    /// root offset, vtable, table, vector.
    fn sample() -> alloc::vec::Vec<u8> {
        let mut b = vec![];
        b.extend_from_slice(&12u32.to_le_bytes()); // root table at 12
        b.extend_from_slice(&[8, 0, 12, 0, 4, 0, 8, 0]); // vtable at 4: size 8, table 12, fields at +4, +8
        b.extend_from_slice(&8i32.to_le_bytes()); // table at 12: vtable at 12 - 8 = 4
        b.extend_from_slice(&7u32.to_le_bytes()); // field 0
        b.extend_from_slice(&4u32.to_le_bytes()); // field 1 at 20: vector at 24
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&2u32.to_le_bytes());
        b
    }

    #[test]
    fn reads_fields_and_vectors() {
        let b = sample();
        let t = root(&b).unwrap();
        assert_eq!(t.u32(0, 0).unwrap(), 7);
        assert_eq!(t.u32(5, 9).unwrap(), 9); // past the vtable: the default
        let v = t.vector(1, 4).unwrap().unwrap();
        assert_eq!((v.len, v.u32(0).unwrap(), v.u32(1).unwrap()), (2, 1, 2));
    }

    #[test]
    fn hostile_offsets_are_errors() {
        let b = sample();
        // A vector claiming 2^32-1 elements.
        let mut h = b.clone();
        h[24..28].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(root(&h).unwrap().vector(1, 4).unwrap_err().code, ErrorCode::CorruptShard);
        // Offsets past the end, a vtable outside the buffer, truncation anywhere.
        let mut h = b.clone();
        h[20..24].copy_from_slice(&1000u32.to_le_bytes());
        assert_eq!(root(&h).unwrap().vector(1, 4).unwrap_err().code, ErrorCode::CorruptShard);
        let mut h = b.clone();
        h[12..16].copy_from_slice(&(-1000i32).to_le_bytes());
        assert_eq!(root(&h).err().map(|e| e.code), Some(ErrorCode::CorruptShard));
        for n in 0..b.len() {
            let t = root(&b[..n]);
            let _ = t.and_then(|t| t.vector(1, 4)).map(|v| v.map(|v| v.u32(1)));
        }
        // A table whose vtable is itself: a size of 0 is refused.
        let mut h = b.clone();
        h[12..16].copy_from_slice(&0i32.to_le_bytes());
        assert_eq!(root(&h).err().map(|e| e.code), Some(ErrorCode::CorruptShard));
    }
}

//! Where a chunk of an array is, from the manifest its snapshot names: inline bytes, a range of
//! a chunk file, or a range of a virtual chunk's object.
use super::flatbuf::{root, Vector};
use super::version::base32;
use crate::core::error::{Error, ErrorCode, Result};
use crate::core::zstd;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cmp::Ordering;

/// path and the chunk's coordinates.
pub(super) fn chunk_key(key: &str) -> Option<(&str, Vec<u32>)> {
    // (A byte search: `rsplit_once` with a string pattern costs 1.7 KB of module.)
    let (path, coords) = match key.as_bytes().windows(3).rposition(|w| w == b"/c/") {
        Some(i) => (&key[..i], &key[i + 3..]),
        None if key == "c" => return Some(("", Vec::new())),
        None if key.ends_with("/c") => return Some((&key[..key.len() - 2], Vec::new())),
        None => ("", key.strip_prefix("c/")?),
    };
    let mut out = Vec::new();
    for part in coords.split('/') {
        let digit = |v: u32, d: u8| v.checked_mul(10)?.checked_add(u32::from(d.checked_sub(b'0').filter(|d| *d < 10)?));
        out.push(Some(part).filter(|p| !p.is_empty())?.bytes().try_fold(0u32, digit)?);
    }
    Some((path, out))
}

/// The id of the manifest holding the chunk at `coords`: the one whose extents contain it.
pub(super) fn manifest_for(manifests: Vector<'_>, coords: &[u32]) -> Result<Option<[u8; 12]>> {
    for i in 0..manifests.len {
        let m = manifests.table(i)?;
        let Some(id) = m.bytes(0, 12)? else { continue };
        let extents = m.vector(1, 8)?.map_or(0, |v| v.len);
        let covers = match m.vector(1, 8)? {
            // No extents: every chunk.
            None => true,
            Some(_) if extents == 0 => true,
            Some(v) if v.len != coords.len() => false,
            Some(v) => coords.iter().enumerate().all(|(k, &x)| {
                let r = v.item(k, 8);
                let from = r.get(..4).and_then(|b| b.try_into().ok()).map_or(u32::MAX, u32::from_le_bytes);
                let to = r.get(4..8).and_then(|b| b.try_into().ok()).map_or(0, u32::from_le_bytes);
                from <= x && x < to
            }),
        };
        if covers {
            let mut out = [0u8; 12];
            out.copy_from_slice(id);
            return Ok(Some(out));
        }
    }
    Ok(None)
}


/// Where a manifest says a chunk is.
pub(super) enum ChunkRef {
    Missing,
    Inline(Vec<u8>),
    /// A range of the repository's chunk file `chunks/<id>`.
    Native { id: String, offset: u64, len: u64 },
    /// A range of a virtual chunk's object, at `location` as written.
    Virtual { location: String, offset: u64, len: u64 },
}

/// Where the chunk at `coords` of array `node` is, from its manifest `fb`.
pub(super) fn chunk_ref(fb: &[u8], node: &[u8], coords: &[u32]) -> Result<ChunkRef> {
    let m = root(fb)?;
    let none = || Error::new(ErrorCode::CorruptShard, "a manifest without its arrays or refs");
    let arrays = m.vector(1, 4)?.ok_or_else(none)?;
    let id_of = |i: usize| -> Result<&[u8]> { arrays.table(i)?.bytes(0, 8)?.ok_or_else(none) };
    let Some(a) = crate::core::nd::search(arrays.len, &|i| Ok(id_of(i)?.cmp(node)))? else { return Ok(ChunkRef::Missing) };
    let refs = arrays.table(a)?.vector(1, 4)?.ok_or_else(none)?;
    let index_cmp = |i: usize| -> Result<Ordering> {
        let index = refs.table(i)?.vector(0, 4)?.ok_or_else(none)?;
        for (k, &want) in coords.iter().enumerate() {
            if k >= index.len {
                return Ok(Ordering::Less);
            }
            match index.u32(k)?.cmp(&want) {
                Ordering::Equal => {}
                o => return Ok(o),
            }
        }
        Ok(index.len.cmp(&coords.len()))
    };
    let Some(i) = crate::core::nd::search(refs.len, &index_cmp)? else { return Ok(ChunkRef::Missing) };
    let r = refs.table(i)?;
    if let Some(bytes) = r.blob(1)? {
        return Ok(ChunkRef::Inline(bytes.to_vec()));
    }
    let (offset, len) = (r.u64(2, 0)?, r.u64(3, 0)?);
    if len == 0 || offset.checked_add(len).is_none() {
        return Err(Error::new(ErrorCode::CorruptShard, format!("a chunk reference of {len} bytes at {offset}")));
    }
    if let Some(id) = r.bytes(4, 12)? {
        return Ok(ChunkRef::Native { id: base32(id), offset, len });
    }
    let location = match (r.str(5)?, r.blob(8)?) {
        (Some(l), _) => l.to_string(),
        (None, Some(packed)) => {
            let dict = m.blob(2)?.unwrap_or(&[]);
            let l = zstd::unzstd_with_dict(packed, dict, 1024).map_err(|e| {
                Error::new(ErrorCode::CorruptShard, format!("a compressed location: {}", e.message))
            })?;
            String::from_utf8(l).map_err(|_| Error::new(ErrorCode::CorruptShard, "a location that is not UTF-8"))?
        }
        (None, None) => {
            return Err(Error::new(
                ErrorCode::CorruptShard,
                "a chunk reference that is neither inline, native nor virtual",
            ))
        }
    };
    Ok(ChunkRef::Virtual { location, offset, len })
}

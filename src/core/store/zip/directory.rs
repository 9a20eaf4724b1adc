//! A zip archive's central directory, read from bytes: the end record (ZIP64 too), the entries
//! by name, and where each entry's data starts when the layout says so without reading its
//! local header (the data ends where the next header, or the directory, starts, which must agree
//! with the header's length as the directory gives it, or that plus a ZIP64 extra field of two
//! sizes in a ZIP64 archive). Every offset and count is checked against the bytes there are.
use crate::core::bytes::{u16_le as u16_at, u32_le as u32_at, u64_le as u64_at};
use crate::core::error::{Error, ErrorCode, Result};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

pub(super) const EOCD: u32 = 0x0605_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;
const ZIP64_EOCD: u32 = 0x0606_4b50;
pub(super) const CENTRAL: u32 = 0x0201_4b50;
pub(super) const LOCAL: u32 = 0x0403_4b50;

/// One entry of the central directory.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub name: String,
    pub method: u16,
    pub flags: u16,
    pub crc: u32,
    pub compressed: u64,
    pub size: u64,
    /// Offset of the local header.
    pub header: u64,
    /// Where the data starts, when the layout says so without reading the local header.
    pub data: Option<u64>,
    /// Where the next local header (or the directory) starts.
    pub end: u64,
    /// Why this entry cannot be read (overlapping, outside the archive), if it cannot.
    pub bad: Option<String>,
}

/// A parsed central directory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Directory {
    /// Sorted by name (a name given twice: the later entry).
    pub entries: Vec<Entry>,
    pub comment: String,
    pub zip64: bool,
    /// Size of the archive.
    pub size: u64,
    /// The archive's first bytes, when read (all of them when the first read held it).
    pub front: Option<Rc<Vec<u8>>>,
}

impl Directory {
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.binary_search_by(|e| e.name.as_str().cmp(name)).ok().map(|i| &self.entries[i])
    }

    pub(super) fn nbytes(d: &Directory) -> usize {
        256 + d.entries.iter().map(|e| 96 + e.name.len()).sum::<usize>() + d.front.as_ref().map_or(0, |w| w.len())
    }

    /// Bytes `a..b` of the archive when its first bytes hold them.
    pub(super) fn in_front(&self, a: u64, b: u64) -> Option<&[u8]> {
        self.front.as_ref()?.get(usize::try_from(a).ok()?..usize::try_from(b).ok()?)
    }

    pub(super) fn whole(&self) -> bool {
        self.front.as_ref().is_some_and(|f| f.len() as u64 == self.size)
    }
}

pub(super) fn corrupt(archive: &str, why: impl core::fmt::Display) -> Error {
    Error::new(ErrorCode::CorruptShard, format!("{archive}: not a readable zip archive: {why}"))
}

/// Where the directory is, from the end of the archive: `tail` holds its last bytes, from
/// `tail_at`; the archive has `size` bytes. (directory offset, size, entries, comment, zip64)
pub fn find_directory(archive: &str, tail: &[u8], tail_at: u64, size: u64) -> Result<(u64, u64, u64, String, bool)> {
    // The end record: the last signature whose comment length reaches the end exactly.
    let mut at = None;
    for i in (0..tail.len().saturating_sub(21)).rev() {
        if u32_at(tail, i) == Some(EOCD) && u16_at(tail, i + 20).map(usize::from) == Some(tail.len() - i - 22) {
            at = Some(i);
            break;
        }
    }
    let i = at.ok_or_else(|| corrupt(archive, "no end of central directory record"))?;
    let field = |o: usize| u16_at(tail, i + o).unwrap_or(0);
    let mut entries = u64::from(field(10));
    let mut cd_size = u64::from(u32_at(tail, i + 12).unwrap_or(0));
    let mut cd_offset = u64::from(u32_at(tail, i + 16).unwrap_or(0));
    let comment = String::from_utf8_lossy(&tail[i + 22..]).into_owned();
    let mut zip64 = false;
    // A ZIP64 locator just before the end record points at the ZIP64 end record.
    if i >= 20 && u32_at(tail, i - 20) == Some(ZIP64_LOCATOR) {
        zip64 = true;
        let record = u64_at(tail, i - 12).unwrap_or(u64::MAX);
        let local = record.checked_sub(tail_at).map(|r| r as usize);
        let r = match local {
            Some(r) if u32_at(tail, r) == Some(ZIP64_EOCD) && r + 56 <= tail.len() => r,
            _ => return Err(corrupt(archive, "the ZIP64 end record is not where its locator says")),
        };
        entries = u64_at(tail, r + 32).unwrap_or(0);
        cd_size = u64_at(tail, r + 40).unwrap_or(0);
        cd_offset = u64_at(tail, r + 48).unwrap_or(0);
    }
    let end = cd_offset.checked_add(cd_size).ok_or_else(|| corrupt(archive, "the directory's size overflows"))?;
    if end > size {
        return Err(corrupt(archive, format!("the directory ({cd_size} bytes at {cd_offset}) lies beyond its {size} bytes")));
    }
    // Each entry takes at least 46 bytes of the directory.
    if entries.saturating_mul(46) > cd_size {
        return Err(corrupt(archive, format!("{entries} entries cannot fit in a {cd_size}-byte directory")));
    }
    Ok((cd_offset, cd_size, entries, comment, zip64))
}

/// The entries of a central directory (`cd`, at `cd_offset` of an archive of `size` bytes).
pub fn parse_directory(archive: &str, cd: &[u8], cd_offset: u64, entries: u64, zip64: bool) -> Result<Vec<Entry>> {
    let mut out: Vec<Entry> = Vec::new();
    out.try_reserve_exact(entries.min(cd.len() as u64 / 46) as usize)
        .map_err(|_| Error::new(ErrorCode::TooLarge, format!("{archive}: cannot hold {entries} entries")))?;
    let mut p = 0usize;
    // Where each entry's local header could begin when the layout is as the directory says.
    let mut declared_headers: Vec<u64> = Vec::new();
    for k in 0..entries {
        let bad = || corrupt(archive, format!("directory entry {k} is cut short or malformed"));
        if u32_at(cd, p) != Some(CENTRAL) {
            return Err(bad());
        }
        let flags = u16_at(cd, p + 8).ok_or_else(bad)?;
        let method = u16_at(cd, p + 10).ok_or_else(bad)?;
        let crc = u32_at(cd, p + 16).ok_or_else(bad)?;
        let mut compressed = u64::from(u32_at(cd, p + 20).ok_or_else(bad)?);
        let mut size = u64::from(u32_at(cd, p + 24).ok_or_else(bad)?);
        let name_len = usize::from(u16_at(cd, p + 28).ok_or_else(bad)?);
        let extra_len = usize::from(u16_at(cd, p + 30).ok_or_else(bad)?);
        let comment_len = usize::from(u16_at(cd, p + 32).ok_or_else(bad)?);
        let mut header = u64::from(u32_at(cd, p + 42).ok_or_else(bad)?);
        let name_bytes = cd.get(p + 46..p + 46 + name_len).ok_or_else(bad)?;
        let extra = cd.get(p + 46 + name_len..p + 46 + name_len + extra_len).ok_or_else(bad)?;
        // ZIP64 extended information: the fields whose 32-bit value is all ones, in order.
        let mut e = 0;
        while e + 4 <= extra.len() {
            let (id, n) = (u16_at(extra, e).unwrap_or(0), usize::from(u16_at(extra, e + 2).unwrap_or(0)));
            if id == 1 {
                let mut q = e + 4;
                let mut take = |v: &mut u64| {
                    if *v == 0xffff_ffff {
                        if let Some(x) = u64_at(extra, q) {
                            *v = x;
                            q += 8;
                        }
                    }
                };
                take(&mut size);
                take(&mut compressed);
                take(&mut header);
            }
            e += 4 + n;
        }
        let name = String::from_utf8_lossy(name_bytes).into_owned();
        let mut bad_entry = None;
        if name_bytes.first() == Some(&b'/') || name_bytes.split(|&c| c == b'/' || c == b'\\').any(|s| s == b"..") {
            bad_entry = Some(format!("its name \"{name}\" leaves the archive's root"));
        }
        declared_headers.push(header.saturating_add(30 + name_len as u64 + extra_len as u64));
        out.push(Entry { name, method, flags, crc, compressed, size, header, data: None, end: 0, bad: bad_entry });
        p += 46 + name_len + extra_len + comment_len;
    }
    place_data(&mut out, &declared_headers, cd_offset, zip64);
    // Later entries of a name win (as Python's zipfile reads them).
    let names: Vec<&[u8]> = out.iter().map(|e| e.name.as_bytes()).collect();
    let order = crate::core::nd::order(out.len(), &|a, b| names[a] < names[b]);
    drop(names);
    let mut slots: Vec<Option<Entry>> = out.into_iter().map(Some).collect();
    let mut sorted: Vec<Entry> = Vec::with_capacity(slots.len());
    for e in order.into_iter().filter_map(|i| slots[i].take()) {
        if sorted.last().is_some_and(|l| l.name == e.name) {
            sorted.pop();
        }
        sorted.push(e);
    }
    Ok(sorted)
}

/// Where each entry's data starts when the layout shows it (see the module's doc), and which
/// entries overlap others or the directory.
fn place_data(entries: &mut [Entry], declared: &[u64], cd_offset: u64, zip64: bool) {
    let by_offset = crate::core::nd::order(entries.len(), &|a, b| entries[a].header < entries[b].header);
    for (k, &i) in by_offset.iter().enumerate() {
        let next = by_offset.get(k + 1).map_or(cd_offset, |&j| entries[j].header);
        entries[i].end = next;
        let e = &entries[i];
        let min_data = e.header.saturating_add(30).saturating_add(e.name.len() as u64);
        if next < min_data.saturating_add(e.compressed) || e.header >= cd_offset {
            entries[i].bad = Some(format!("its data overlaps the next entry or the directory (header at {})", e.header));
            continue;
        }
        // A data descriptor (flag bit 3) follows the data: 12 to 24 bytes, signature optional.
        let descriptors: &[u64] = if e.flags & 8 != 0 { &[12, 16, 20, 24] } else { &[0] };
        let a = declared[i];
        for &d in descriptors {
            let Some(b) = next.checked_sub(e.compressed).and_then(|x| x.checked_sub(d)) else { continue };
            if b == a || (zip64 && b == a + 20) {
                entries[i].data = Some(b);
                break;
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A stored zip of `files` as Python's zipfile writes one (no descriptors, no extras).
    pub(crate) fn zip(files: &[(&str, &[u8])], comment: &str) -> Vec<u8> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (name, data) in files {
            let at = out.len() as u32;
            let crc = crate::core::crc::crc32(data);
            out.extend_from_slice(&LOCAL.to_le_bytes());
            out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            out.extend_from_slice(&crc.to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(&0u16.to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(data);
            central.extend_from_slice(&CENTRAL.to_le_bytes());
            central.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            central.extend_from_slice(&crc.to_le_bytes());
            central.extend_from_slice(&(data.len() as u32).to_le_bytes());
            central.extend_from_slice(&(data.len() as u32).to_le_bytes());
            central.extend_from_slice(&(name.len() as u16).to_le_bytes());
            central.extend_from_slice(&[0; 12]);
            central.extend_from_slice(&at.to_le_bytes());
            central.extend_from_slice(name.as_bytes());
        }
        let cd_at = out.len() as u32;
        out.extend_from_slice(&central);
        out.extend_from_slice(&EOCD.to_le_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.extend_from_slice(&(files.len() as u16).to_le_bytes());
        out.extend_from_slice(&(files.len() as u16).to_le_bytes());
        out.extend_from_slice(&(central.len() as u32).to_le_bytes());
        out.extend_from_slice(&cd_at.to_le_bytes());
        out.extend_from_slice(&(comment.len() as u16).to_le_bytes());
        out.extend_from_slice(comment.as_bytes());
        out
    }

    fn dir(z: &[u8]) -> Result<(Vec<Entry>, String)> {
        let (at, n, count, comment, zip64) = find_directory("z", z, 0, z.len() as u64)?;
        Ok((parse_directory("z", &z[at as usize..(at + n) as usize], at, count, zip64)?, comment))
    }

    #[test]
    fn entries_and_their_data_without_local_headers() {
        let z = zip(&[("b/zarr.json", b"{}"), ("a", b"hello")], "{\"ome\":{\"version\":\"0.5\"}}");
        let (entries, comment) = dir(&z).unwrap();
        assert_eq!(comment, "{\"ome\":{\"version\":\"0.5\"}}");
        assert_eq!(entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["a", "b/zarr.json"]);
        let a = &entries[0];
        let at = a.data.unwrap() as usize;
        assert_eq!(&z[at..at + 5], b"hello");
    }

    #[test]
    fn a_name_given_twice_is_its_later_entry() {
        let z = zip(&[("b", b"1"), ("a", b"first"), ("c", b"3"), ("a", b"later")], "");
        let (entries, _) = dir(&z).unwrap();
        assert_eq!(entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        let at = entries[0].data.unwrap() as usize;
        assert_eq!(&z[at..at + 5], b"later");
        // A backslash counts as a separator too.
        let (e, _) = dir(&zip(&[("a\\..\\b", b"x")], "")).unwrap();
        assert!(e[0].bad.is_some());
    }

    #[test]
    fn hostile_directories_are_typed_errors() {
        let z = zip(&[("a", b"x")], "");
        let n = z.len();
        // The directory's offset pointing past the end.
        let mut bad = z.clone();
        bad[n - 6..n - 2].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(dir(&bad).unwrap_err().code, ErrorCode::CorruptShard);
        // 2^16-1 entries claimed in a tiny directory.
        let mut bad = z.clone();
        bad[n - 12..n - 10].copy_from_slice(&u16::MAX.to_le_bytes());
        assert_eq!(dir(&bad).unwrap_err().code, ErrorCode::CorruptShard);
        // No end record at all.
        assert_eq!(dir(b"not a zip at all, not at all").unwrap_err().code, ErrorCode::CorruptShard);
        // A name leaving the root, an entry overlapping the directory.
        let (e, _) = dir(&zip(&[("../evil", b"x")], "")).unwrap();
        assert!(e[0].bad.as_deref().unwrap().contains("root"));
    }
}

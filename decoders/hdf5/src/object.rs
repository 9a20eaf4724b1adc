//! The superblock and object headers (versions 1 and 2, with their continuation chunks).
use crate::io::{check_sum, corrupt, unsupported, Cur, File, E, R, UNDEF};
use alloc::format;
use alloc::vec::Vec;

pub const SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

pub struct Super {
    pub base: u64,
    pub o: u8,
    pub l: u8,
    /// The root group's object header address.
    pub root: u64,
    /// Group B-tree v1 internal node K (symbol-table groups) and chunk B-tree K.
    pub group_k: u16,
    pub chunk_k: u16,
}

/// Find the signature (at 0, 512, 1024, 2048, …) and read the superblock.
pub fn superblock(f: &File) -> R<Super> {
    let mut at = 0u64;
    loop {
        if let Some(size) = f.size {
            if at.saturating_add(8) > size {
                return Err(E::Fail(crate::io::Code::Unsupported, "not an HDF5 file (no signature found)".into()));
            }
        }
        if at > 1 << 40 {
            return Err(E::Fail(crate::io::Code::Unsupported, "not an HDF5 file (no signature found)".into()));
        }
        let sig = f.get_abs(at, 8, 4096)?;
        if sig == SIGNATURE {
            break;
        }
        at = if at == 0 { 512 } else { at * 2 };
    }
    let head = f.get_abs(at, 12, 4096)?;
    let version = head[8];
    let (o, l) = match version {
        0 | 1 => {
            let h = f.get_abs(at, 16, 4096)?;
            (h[13], h[14])
        }
        2 | 3 => (head[9], head[10]),
        v => return unsupported(format!("superblock version {v} is not read")),
    };
    if !matches!(o, 2 | 4 | 8) || !matches!(l, 2 | 4 | 8) {
        return corrupt(format!("superblock: sizes of offsets {o} and lengths {l}"));
    }
    let ou = o as usize;
    let (mut group_k, mut chunk_k) = (16u16, 32u16);
    let root = if version < 2 {
        // 24 fixed bytes (+4 for version 1), 4 addresses, then the root symbol table entry.
        let fixed = if version == 1 { 28 } else { 24 };
        let n = fixed + 4 * ou + 2 * ou + 24;
        let b = f.get_abs(at, n as u64, 4096)?;
        let mut c = Cur::new(b, o, l, "superblock");
        c.skip(16)?;
        let _leaf_k = c.u16()?;
        group_k = c.u16()?;
        c.skip(4)?;
        if version == 1 {
            chunk_k = c.u16()?;
            c.skip(2)?;
        }
        let _base = c.addr()?;
        c.skip(3 * ou)?;
        let _name = c.addr()?;
        c.addr()?
    } else {
        let n = 12 + 4 * ou + 4;
        let b = f.get_abs(at, n as u64, 4096)?;
        check_sum(b, "superblock")?;
        let mut c = Cur::new(b, o, l, "superblock");
        c.skip(12)?;
        let _base = c.addr()?;
        let _ext = c.addr()?;
        let _eof = c.addr()?;
        c.addr()?
    };
    if group_k == 0 || chunk_k == 0 {
        return corrupt("superblock: a B-tree K of 0");
    }
    if root == UNDEF {
        return corrupt("superblock: no root group");
    }
    // The library takes the signature's place as the base address when the two differ.
    Ok(Super { base: at, o, l, root, group_k, chunk_k })
}

#[derive(Clone, Copy)]
pub struct Msg<'f> {
    pub ty: u16,
    pub flags: u8,
    /// Absolute file offset of the message's data.
    pub at: u64,
    pub data: &'f [u8],
}

pub struct Header<'f> {
    pub addr: u64,
    pub msgs: Vec<Msg<'f>>,
}

impl<'f> Header<'f> {
    pub fn find(&self, ty: u16) -> Option<&Msg<'f>> {
        self.msgs.iter().find(|m| m.ty == ty)
    }
    pub fn all(&self, ty: u16) -> impl Iterator<Item = &Msg<'f>> {
        self.msgs.iter().filter(move |m| m.ty == ty)
    }
}

pub const DATASPACE: u16 = 0x01;
pub const LINK_INFO: u16 = 0x02;
pub const DATATYPE: u16 = 0x03;
pub const FILL_OLD: u16 = 0x04;
pub const FILL: u16 = 0x05;
pub const LINK: u16 = 0x06;
pub const EXTERNAL: u16 = 0x07;
pub const LAYOUT: u16 = 0x08;
pub const GROUP_INFO: u16 = 0x0a;
pub const FILTERS: u16 = 0x0b;
pub const ATTRIBUTE: u16 = 0x0c;
pub const CONTINUATION: u16 = 0x10;
pub const SYMBOL_TABLE: u16 = 0x11;
pub const ATTRIBUTE_INFO: u16 = 0x15;

/// At most this many continuation chunks per header.
const MAX_CHUNKS: usize = 4096;

/// The object header at file address `addr`, with all its continuation chunks.
pub fn header<'f>(f: &'f File, addr: u64) -> R<Header<'f>> {
    f.tick(1)?;
    let a = f.abs(addr)?;
    let pre = f.get_abs(a, 16, 1024)?;
    let mut msgs = Vec::new();
    let mut pending: Vec<(u64, u64)> = Vec::new();
    let v2 = &pre[..4] == b"OHDR";
    let mut crt = false;
    let mut seen: Vec<u64> = Vec::new();
    if v2 {
        if pre[4] != 2 {
            return corrupt(format!("object header version {}", pre[4]));
        }
        let flags = pre[5];
        crt = flags & 0x04 != 0;
        let mut n = 6usize;
        if flags & 0x20 != 0 {
            n += 16;
        }
        if flags & 0x10 != 0 {
            n += 4;
        }
        let sz = 1usize << (flags & 3);
        let p = f.get_abs(a, (n + sz) as u64, 1024)?;
        let size = crate::io::le(&p[n..n + sz]);
        let total = ((n + sz) as u64).checked_add(size).and_then(|t| t.checked_add(4));
        let total = match total {
            Some(t) => t,
            None => return corrupt("object header size overflows"),
        };
        let b = f.get_abs(a, total, 0)?;
        check_sum(b, "object header")?;
        seen.push(a);
        parse_chunk(f, &b[n + sz..b.len() - 4], a + (n + sz) as u64, true, crt, &mut msgs, &mut pending)?;
    } else {
        if pre[0] != 1 {
            return corrupt(format!("no object header at {addr} (version byte {})", pre[0]));
        }
        let size = crate::io::le(&pre[8..12]);
        let b = f.get_abs(a + 16, size, 0)?;
        seen.push(a + 16);
        parse_chunk(f, b, a + 16, false, false, &mut msgs, &mut pending)?;
    }
    while !pending.is_empty() {
        let batch = core::mem::take(&mut pending);
        let mut need = false;
        for (caddr, clen) in batch {
            let ca = f.abs(caddr)?;
            if seen.contains(&ca) {
                return corrupt(format!("object header at {addr}: its continuation chunks loop"));
            }
            if seen.len() >= MAX_CHUNKS {
                return corrupt(format!("object header at {addr}: more than {MAX_CHUNKS} chunks"));
            }
            seen.push(ca);
            let b = match f.get_abs(ca, clen, 0) {
                Ok(b) => b,
                Err(E::Need) => {
                    need = true;
                    continue;
                }
                Err(e) => return Err(e),
            };
            if v2 {
                if clen < 8 || &b[..4] != b"OCHK" {
                    return corrupt(format!("object header at {addr}: continuation without \"OCHK\""));
                }
                check_sum(b, "object header continuation")?;
                parse_chunk(f, &b[4..b.len() - 4], ca + 4, true, crt, &mut msgs, &mut pending)?;
            } else {
                parse_chunk(f, b, ca, false, false, &mut msgs, &mut pending)?;
            }
        }
        if need {
            prefetch_dimension_lists(f, &msgs);
            return Err(E::Need);
        }
    }
    Ok(Header { addr, msgs })
}

fn parse_chunk<'f>(
    f: &File,
    b: &'f [u8],
    at: u64,
    v2: bool,
    crt: bool,
    msgs: &mut Vec<Msg<'f>>,
    pending: &mut Vec<(u64, u64)>,
) -> R<()> {
    let hsize = if v2 { 4 + 2 * crt as usize } else { 8 };
    let mut c = f.cur(b, "object header message");
    while c.left() >= hsize {
        let (ty, size, flags) = if v2 {
            let ty = c.u8()? as u16;
            let size = c.u16()?;
            let flags = c.u8()?;
            if crt {
                c.skip(2)?;
            }
            (ty, size, flags)
        } else {
            let ty = c.u16()?;
            let size = c.u16()?;
            let flags = c.u8()?;
            c.skip(3)?;
            (ty, size, flags)
        };
        let pos = c.p;
        let data = c.take(size as usize)?;
        f.tick(1)?;
        if ty == CONTINUATION {
            let mut d = f.cur(data, "continuation message");
            let addr = d.addr()?;
            let len = d.len()?;
            if addr != UNDEF {
                pending.push((addr, len));
            }
            continue;
        }
        msgs.push(Msg { ty, flags, at: at + pos as u64, data });
    }
    Ok(())
}

/// A message that may be shared (flag bit 1): the message itself, or the one in the object
/// header it points at (a committed datatype).
pub fn unshare<'f>(f: &'f File, m: &Msg<'f>) -> R<Msg<'f>> {
    if m.flags & 0x02 == 0 {
        return Ok(*m);
    }
    let mut c = f.cur(m.data, "shared message");
    let version = c.u8()?;
    let kind = c.u8()?;
    let addr = match version {
        1 => {
            c.skip(6)?;
            c.addr()?
        }
        2 => c.addr()?,
        3 if kind == 2 => c.addr()?,
        3 => return unsupported("a message kept in the shared-message heap (SOHM) is not read"),
        v => return corrupt(format!("shared message version {v}")),
    };
    let h = header(f, addr)?;
    match h.msgs.iter().find(|x| x.ty == m.ty && x.flags & 0x02 == 0) {
        Some(x) => Ok(*x),
        None => corrupt(format!("the shared message's object at {addr} has no such message")),
    }
}

/// While a header's continuation is fetched, also fetch the global heap collections its
/// `DIMENSION_LIST` attribute points at (read next when the dataset is opened): a round less.
fn prefetch_dimension_lists(f: &File, msgs: &[Msg]) {
    for m in msgs.iter().filter(|m| m.ty == ATTRIBUTE) {
        let Ok(a) = crate::types::attribute(f, m.data) else { continue };
        if a.name != "DIMENSION_LIST" {
            continue;
        }
        let es = 8 + f.o as usize;
        for e in a.data.chunks_exact(es).take(32) {
            let mut c = f.cur(e, "DIMENSION_LIST");
            if let (Ok(_), Ok(coll)) = (c.u32(), c.addr()) {
                if coll != UNDEF {
                    let _ = f.get_hint(coll, 16, 4096);
                }
            }
        }
    }
}

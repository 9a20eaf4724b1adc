//! Groups: their links (symbol tables, link messages, dense link storage), paths, attributes.
use crate::heap::{bt1_node, bt2_all, bt2_header, field, heap_get, heap_header, heap_str, local_heap, Heap};
use crate::io::{all, corrupt, File, R, UNDEF};
use crate::object::{header, Header, Super, ATTRIBUTE, ATTRIBUTE_INFO, GROUP_INFO, LAYOUT, LINK, LINK_INFO, SYMBOL_TABLE};
use crate::types::{attribute, Attr};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    Hard(u64),
    Soft(String),
    External,
}

#[derive(Clone, Debug)]
pub struct Link {
    pub name: String,
    pub target: Target,
}

/// Most links one group may have.
const MAX_LINKS: usize = 1 << 20;

/// Every link of the group whose header is `h`.
pub fn links(f: &File, sb: &Super, h: &Header) -> R<Vec<Link>> {
    let mut out = Vec::new();
    if let Some(m) = h.find(SYMBOL_TABLE) {
        let mut c = f.cur(m.data, "symbol table message");
        let btree = c.addr()?;
        let heap = c.addr()?;
        let names = local_heap(f, heap);
        let entries = symbol_entries(f, sb, btree);
        let (names, entries) = (names?, entries?);
        for (name_off, addr, cache, scratch) in entries {
            let name = String::from_utf8_lossy(heap_str(names, name_off)?).into_owned();
            let target = if cache == 2 {
                Target::Soft(String::from_utf8_lossy(heap_str(names, crate::io::le(&scratch[..4]))?).into_owned())
            } else {
                Target::Hard(addr)
            };
            out.push(Link { name, target });
        }
        return Ok(out);
    }
    for m in h.all(LINK) {
        if let Some(l) = link_message(f, m.data)? {
            out.push(l);
        }
    }
    if let Some(m) = h.find(LINK_INFO) {
        if let Some((hh, recs)) = dense(f, m.data, "link", 8, 5)? {
            if recs.len() > MAX_LINKS {
                return crate::io::too_large(format!("a group of {} links", recs.len()));
            }
            let objs = all(&recs, |r| heap_get(f, &hh, r.get(4..).unwrap_or(&[])))?;
            for o in objs {
                if let Some(l) = link_message(f, o)? {
                    out.push(l);
                }
            }
        }
    }
    Ok(out)
}

/// Dense storage (links or attributes in a fractal heap, named by a B-tree v2 of type `ty`), as
/// its info message `info` says, whose optional field after the flags is `skip` bytes: the heap
/// and the index's records, or `None` when the object keeps none there.
fn dense<'f>(f: &'f File, info: &[u8], what: &str, skip: usize, ty: u8) -> R<Option<(Heap, Vec<&'f [u8]>)>> {
    let mut c = f.cur(info, "info message");
    c.u8()?;
    if c.u8()? & 1 != 0 {
        c.skip(skip)?;
    }
    let (heap, index) = (c.addr()?, c.addr()?);
    if heap == UNDEF || index == UNDEF {
        return Ok(None);
    }
    let (hh, bh) = (heap_header(f, heap), bt2_header(f, index));
    let (hh, bh) = (hh?, bh?);
    crate::heap::heap_prefetch(f, &hh);
    if bh.ty != ty {
        return corrupt(format!("{what} name index of type {}", bh.ty));
    }
    Ok(Some((hh, bt2_all(f, &bh)?)))
}

/// (name offset, object header address, cache type, scratch pad) of every entry of a
/// symbol-table group, read level by level.
fn symbol_entries(f: &File, sb: &Super, root: u64) -> R<Vec<(u64, u64, u32, [u8; 16])>> {
    let l = f.l as usize;
    let mut level = alloc::vec![root];
    let mut want: Option<u8> = None;
    let mut seen: Vec<u64> = Vec::new();
    let snods = loop {
        for &a in &level {
            if seen.contains(&a) {
                return corrupt("the group B-tree loops");
            }
            seen.push(a);
        }
        let nodes = all(&level, |&a| bt1_node(f, a, 0, l, sb.group_k))?;
        let mut next = Vec::new();
        let mut lv = None;
        for n in &nodes {
            if want.is_some_and(|w| w != n.level) || lv.is_some_and(|v| v != n.level) {
                return corrupt("the group B-tree's levels are inconsistent");
            }
            lv = Some(n.level);
            next.extend(n.children.iter().copied());
        }
        if next.len() > MAX_LINKS {
            return crate::io::too_large("a group B-tree of too many nodes");
        }
        match lv {
            None | Some(0) => break next,
            Some(v) => want = Some(v - 1),
        }
        level = next;
    };
    let o = f.o as usize;
    let esize = 2 * o + 24;
    let nodes = all(&snods, |&a| {
        let pre = f.get_hint(a, 8, 8 + 2 * sb.group_k as u64 * esize as u64)?;
        let mut c = f.cur(pre, "symbol table node");
        c.sig(b"SNOD")?;
        c.skip(2)?;
        let n = c.u16()? as usize;
        f.tick(n as u64)?;
        f.get(a, (8 + n * esize) as u64)
    })?;
    let mut out = Vec::new();
    for b in nodes {
        let mut c = f.cur(b, "symbol table node");
        c.skip(8)?;
        while c.left() >= esize {
            let name = c.addr()?;
            let addr = c.addr()?;
            let cache = c.u32()?;
            c.skip(4)?;
            let mut scratch = [0u8; 16];
            scratch.copy_from_slice(c.take(16)?);
            out.push((name, addr, cache, scratch));
        }
    }
    Ok(out)
}

/// A link message (in a header or a fractal heap); `None` for user-defined link types.
pub fn link_message(f: &File, b: &[u8]) -> R<Option<Link>> {
    let mut c = f.cur(b, "link message");
    if c.u8()? != 1 {
        return corrupt("link message version");
    }
    let flags = c.u8()?;
    let ty = if flags & 0x08 != 0 { c.u8()? } else { 0 };
    if flags & 0x04 != 0 {
        c.skip(8)?;
    }
    if flags & 0x10 != 0 {
        c.u8()?;
    }
    let n = c.uv(1 << (flags & 3))? as usize;
    let name = String::from_utf8_lossy(c.take(n)?).into_owned();
    let target = match ty {
        0 => Target::Hard(c.addr()?),
        1 => {
            let n = c.u16()? as usize;
            Target::Soft(String::from_utf8_lossy(c.take(n)?).into_owned())
        }
        64 => Target::External,
        _ => return Ok(None),
    };
    Ok(Some(Link { name, target }))
}

pub enum Kind {
    Group,
    Array,
    /// A named datatype, or an object of no kind this module lists.
    Other,
}

pub fn kind(h: &Header) -> Kind {
    if h.find(LAYOUT).is_some() {
        Kind::Array
    } else if h.find(SYMBOL_TABLE).is_some() || h.find(LINK_INFO).is_some() || h.find(GROUP_INFO).is_some() || h.find(LINK).is_some() {
        Kind::Group
    } else {
        Kind::Other
    }
}

/// A group on a resolved path, with its links (for names of dimension scales).
pub struct Visited {
    pub addr: u64,
    pub links: Vec<Link>,
}

/// Resolve `path` (components separated by '/') from the group `start` (the root when `None`):
/// soft links are followed (at most 16), external links end it (`None`), as does a missing name.
pub fn resolve<'f>(
    f: &'f File,
    sb: &Super,
    start: Option<(u64, Vec<String>)>,
    path: &str,
    visited: &mut Vec<Visited>,
) -> R<Option<(Header<'f>, Vec<String>)>> {
    let start = if path.starts_with('/') { None } else { start };
    let (mut addr, mut at) = start.unwrap_or((sb.root, Vec::new()));
    let mut h = header(f, addr)?;
    let mut queue: Vec<String> = path.split('/').rev().map(String::from).collect();
    let mut hops = 0u32;
    while let Some(name) = queue.pop() {
        if name.is_empty() || name == "." {
            continue;
        }
        f.tick(1)?;
        let links = match visited.iter().find(|v| v.addr == addr) {
            Some(v) => v.links.clone(),
            None => {
                if !matches!(kind(&h), Kind::Group) {
                    return Ok(None);
                }
                let l = links(f, sb, &h)?;
                visited.push(Visited { addr, links: l.clone() });
                l
            }
        };
        let Some(link) = links.iter().find(|l| l.name == name) else { return Ok(None) };
        match &link.target {
            Target::Hard(a) => {
                addr = *a;
                h = header(f, addr)?;
                at.push(name);
            }
            Target::Soft(p) => {
                hops += 1;
                if hops > 16 {
                    return corrupt("soft links loop or nest more than 16 deep");
                }
                queue.extend(p.split('/').rev().map(String::from));
                if p.starts_with('/') {
                    addr = sb.root;
                    h = header(f, addr)?;
                    at.clear();
                }
            }
            Target::External => return Ok(None),
        }
    }
    Ok(Some((h, at)))
}

/// Every attribute message of an object: in its header, and in dense storage (fractal heap and
/// name index), in creation order where known. Attributes that cannot be parsed are left out.
pub fn attributes<'f>(f: &'f File, h: &Header<'f>) -> R<Vec<Attr<'f>>> {
    let mut out = Vec::new();
    for m in h.all(ATTRIBUTE) {
        if m.flags & 0x02 != 0 {
            continue;
        }
        if let Ok(a) = attribute(f, m.data) {
            out.push(a);
        }
    }
    if let Some(m) = h.find(ATTRIBUTE_INFO) {
        if let Some((hh, mut recs)) = dense(f, m.data, "attribute", 2, 8)? {
            // Shared attributes (in the SOHM heap) are left out.
            recs.retain(|r| r.get(8).is_some_and(|fl| fl & 1 == 0));
            recs.sort_by_key(|r| field(r, 9, 4));
            let objs = all(&recs, |r| heap_get(f, &hh, r.get(..8).unwrap_or(&[])))?;
            for o in objs {
                if let Ok(a) = attribute(f, o) {
                    out.push(a);
                }
            }
        }
    }
    Ok(out)
}

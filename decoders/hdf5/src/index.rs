//! Chunk indexes: where chunk (i, j, …) of a chunked dataset is stored. Each lookup visits only
//! the index nodes on the way to that chunk, and reports the other chunks those nodes list.
use crate::dataset::{Dataset, Index, Layout};
use crate::heap::{bt1_node, bt2_find, bt2_header, field};
use crate::io::{check_sum, corrupt, le, log2, File, R, UNDEF};
use crate::object::Super;
use crate::types::UNLIMITED;
use alloc::format;
use alloc::vec::Vec;
use core::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Loc {
    /// File address (relative to the base).
    pub addr: u64,
    pub size: u64,
    pub mask: u32,
}

pub struct Lookup {
    pub hit: Option<Loc>,
    /// Other chunks found on the way: (chunk coordinates, location).
    pub more: Vec<(Vec<u64>, Loc)>,
}

/// Chunks along each axis over the dataspace's maximum dimensions (fixed arrays and implicit
/// indexes are laid out over those).
fn max_chunks(d: &Dataset, dims: &[u64]) -> R<Vec<u64>> {
    d.max
        .iter()
        .zip(&d.shape)
        .zip(dims)
        .map(|((&m, &s), &c)| {
            if m == UNLIMITED {
                corrupt("this chunk index needs fixed maximum dimensions")
            } else {
                Ok(m.max(s).div_ceil(c))
            }
        })
        .collect()
}

/// Row-major index of `coords` in a grid of `counts`, visiting axes in `order`.
fn linear(coords: &[u64], counts: &[u64], order: &[usize]) -> R<u64> {
    let mut idx = 0u64;
    for &a in order {
        idx = idx
            .checked_mul(counts[a])
            .and_then(|i| i.checked_add(coords[a]))
            .ok_or_else(|| crate::io::E::Fail(crate::io::Code::TooLarge, "too many chunks".into()))?;
    }
    Ok(idx)
}

fn unravel(mut idx: u64, counts: &[u64], order: &[usize]) -> Vec<u64> {
    let mut c = alloc::vec![0u64; counts.len()];
    for (k, &a) in order.iter().enumerate().rev() {
        if k == 0 {
            c[a] = idx;
        } else {
            let n = counts[a].max(1);
            c[a] = idx % n;
            idx /= n;
        }
    }
    c
}

pub fn find(f: &File, sb: &Super, d: &Dataset, coords: &[u64]) -> R<Lookup> {
    let Layout::Chunked { dims, index, .. } = &d.layout else { return corrupt("not a chunked dataset") };
    let rank = dims.len();
    let full = d.chunk_bytes(dims);
    let grid = d.grid(dims);
    let in_grid = |c: &[u64]| c.iter().zip(&grid).all(|(&x, &g)| x < g);
    let filtered = !d.filters.is_empty();
    let none = Lookup { hit: None, more: Vec::new() };
    let natural: Vec<usize> = (0..rank).collect();
    match *index {
        Index::Single { addr, filtered: fs } => {
            if addr == UNDEF {
                return Ok(none);
            }
            let (size, mask) = fs.unwrap_or((full, 0));
            Ok(Lookup { hit: Some(Loc { addr, size, mask }), more: Vec::new() })
        }
        Index::Implicit { addr } => {
            if addr == UNDEF {
                return Ok(none);
            }
            let counts = max_chunks(d, dims)?;
            let idx = linear(coords, &counts, &natural)?;
            let at = idx.checked_mul(full).and_then(|o| o.checked_add(addr));
            match at {
                Some(a) => Ok(Lookup { hit: Some(Loc { addr: a, size: full, mask: 0 }), more: Vec::new() }),
                None => corrupt("implicit chunk index: address overflows"),
            }
        }
        Index::BtreeV1 { addr } => btree_v1(f, sb, addr, dims, coords, filtered),
        Index::BtreeV2 { addr } => {
            if addr == UNDEF {
                return Ok(none);
            }
            let h = bt2_header(f, addr)?;
            let o = f.o as usize;
            let (size_len, at) = match h.ty {
                10 => (0, o),
                11 => {
                    let n = h.rsize.checked_sub(o + 4 + 8 * rank).filter(|&n| (1..=8).contains(&n));
                    let Some(n) = n else { return corrupt("B-tree v2 chunk records of a wrong size") };
                    (n, o + n + 4)
                }
                t => return corrupt(format!("a chunk B-tree v2 of type {t}")),
            };
            if h.rsize != at + 8 * rank {
                return corrupt("B-tree v2 chunk records of a wrong size");
            }
            let key = |r: &[u8]| -> Vec<u64> { (0..rank).map(|k| field(r, at + 8 * k, 8)).collect() };
            let loc = |r: &[u8]| -> Loc {
                if size_len == 0 {
                    Loc { addr: field(r, 0, o), size: full, mask: 0 }
                } else {
                    Loc { addr: undef(field(r, 0, o), o), size: field(r, o, size_len), mask: field(r, o + size_len, 4) as u32 }
                }
            };
            let (hit, seen) = bt2_find(f, &h, |r| coords.cmp(&key(r)[..]))?;
            let more = seen.iter().map(|r| (key(r), loc(r))).filter(|(c, l)| c != coords && l.addr != UNDEF && in_grid(c)).collect();
            Ok(Lookup { hit: hit.map(loc).filter(|l| l.addr != UNDEF), more })
        }
        Index::Fixed { addr } => {
            if addr == UNDEF {
                return Ok(none);
            }
            let counts = max_chunks(d, dims)?;
            let idx = linear(coords, &counts, &natural)?;
            let (hit, entries) = fixed_array(f, addr, idx, full)?;
            let more = entries
                .into_iter()
                .map(|(i, l)| (unravel(i, &counts, &natural), l))
                .filter(|(c, l)| c != coords && l.addr != UNDEF && in_grid(c))
                .collect();
            Ok(Lookup { hit, more })
        }
        Index::Extensible { addr } => {
            if addr == UNDEF {
                return Ok(none);
            }
            let Some(u) = d.unlimited_dim() else { return corrupt("an extensible array index without an unlimited dimension") };
            // The unlimited axis first (the library "swizzles" it there), then the others.
            let mut order = alloc::vec![u];
            order.extend((0..rank).filter(|&a| a != u));
            let counts: Vec<u64> = (0..rank)
                .map(|a| if a == u { u64::MAX } else { d.max[a].max(d.shape[a]).div_ceil(dims[a]) })
                .collect();
            let idx = linear(coords, &counts, &order)?;
            let (hit, entries) = extensible_array(f, addr, idx, full)?;
            let more = entries
                .into_iter()
                .map(|(i, l)| (unravel(i, &counts, &order), l))
                .filter(|(c, l)| c != coords && l.addr != UNDEF && in_grid(c))
                .collect();
            Ok(Lookup { hit, more })
        }
    }
}

fn undef(a: u64, o: usize) -> u64 {
    if o < 8 && a == (1u64 << (8 * o)) - 1 {
        UNDEF
    } else {
        a
    }
}

fn btree_v1(f: &File, sb: &Super, root: u64, dims: &[u64], coords: &[u64], _filtered: bool) -> R<Lookup> {
    if root == UNDEF {
        return Ok(Lookup { hit: None, more: Vec::new() });
    }
    let rank = dims.len();
    let ksize = 8 + 8 * (rank + 1);
    let target: Vec<u64> = coords.iter().zip(dims).map(|(&c, &d)| c.saturating_mul(d)).collect();
    let key = |k: &[u8]| -> (u64, u32, Vec<u64>) {
        (field(k, 0, 4), field(k, 4, 4) as u32, (0..rank).map(|a| field(k, 8 + 8 * a, 8)).collect())
    };
    let mut addr = root;
    let mut level: Option<u8> = None;
    let mut seen = Vec::new();
    loop {
        if seen.contains(&addr) {
            return corrupt("the chunk B-tree loops");
        }
        seen.push(addr);
        let n = bt1_node(f, addr, 1, ksize, sb.chunk_k)?;
        if level.is_some_and(|l| l != n.level.wrapping_add(1)) {
            return corrupt("the chunk B-tree's levels are inconsistent");
        }
        level = Some(n.level);
        if n.level == 0 {
            let mut hit = None;
            let mut more = Vec::new();
            for (k, &child) in n.keys.iter().zip(&n.children) {
                let (size, mask, off) = key(k);
                let c: Vec<u64> = off.iter().zip(dims).map(|(&o, &d)| o / d).collect();
                let loc = Loc { addr: child, size, mask };
                if off == target {
                    hit = Some(loc);
                } else if child != UNDEF && off.iter().zip(dims).all(|(&o, &d)| o % d == 0) {
                    more.push((c, loc));
                }
            }
            return Ok(Lookup { hit: hit.filter(|l| l.addr != UNDEF), more });
        }
        let mut next = None;
        for (k, &child) in n.keys.iter().zip(&n.children) {
            if key(k).2.as_slice().cmp(&target[..]) != Ordering::Greater {
                next = Some(child);
            } else {
                break;
            }
        }
        match next {
            Some(c) => addr = c,
            None => return Ok(Lookup { hit: None, more: Vec::new() }),
        }
    }
}

/// Is page `p`'s bit set in an initialisation bitmap (most significant bit first)?
fn bit(map: &[u8], p: u64) -> bool {
    map.get((p / 8) as usize).is_some_and(|b| b & (0x80 >> (p % 8)) != 0)
}

/// Parse `n` elements of `esize` bytes (address, [size, filter mask]), numbered from `first`.
fn elements(f: &File, b: &[u8], esize: usize, first: u64, full: u64, out: &mut Vec<(u64, Loc)>) -> R<()> {
    let o = f.o as usize;
    let size_len = esize.saturating_sub(o + 4);
    for (k, e) in b.chunks_exact(esize).enumerate() {
        let addr = undef(le(&e[..o]), o);
        let loc = if esize == o {
            Loc { addr, size: full, mask: 0 }
        } else {
            Loc { addr, size: le(&e[o..o + size_len]), mask: le(&e[o + size_len..o + size_len + 4]) as u32 }
        };
        out.push((first + k as u64, loc));
    }
    f.tick(b.len() as u64 / esize.max(1) as u64 / 64)?;
    Ok(())
}

fn check_esize(f: &File, esize: usize) -> R<()> {
    let o = f.o as usize;
    if esize != o && !(o + 5..=o + 12).contains(&esize) {
        return corrupt(format!("chunk index elements of {esize} bytes"));
    }
    Ok(())
}

type Found = (Option<Loc>, Vec<(u64, Loc)>);

fn pick(idx: u64, entries: Vec<(u64, Loc)>) -> Found {
    let hit = entries.iter().find(|e| e.0 == idx).map(|e| e.1).filter(|l| l.addr != UNDEF);
    (hit, entries)
}

fn fixed_array(f: &File, addr: u64, idx: u64, full: u64) -> R<Found> {
    let (o, l) = (f.o as u64, f.l as u64);
    let b = f.get_hint(addr, 8 + l + o + 4, 512)?;
    check_sum(b, "fixed array header")?;
    let mut c = f.cur(b, "fixed array header");
    c.sig(b"FAHD")?;
    c.u8()?;
    c.u8()?;
    let esize = c.u8()? as usize;
    let page_bits = c.u8()? as u32;
    let n = c.len()?;
    let dblk = c.addr()?;
    check_esize(f, esize)?;
    if idx >= n {
        return corrupt(format!("chunk {idx} is outside the fixed array of {n}"));
    }
    if dblk == UNDEF {
        return Ok((None, Vec::new()));
    }
    if page_bits > 32 {
        return corrupt("fixed array page size");
    }
    let page = 1u64 << page_bits;
    let prefix = 6 + o;
    let mut out = Vec::new();
    let overflow = || crate::io::E::Fail(crate::io::Code::Corrupt, "fixed array sizes overflow".into());
    if n <= page {
        let size = n.checked_mul(esize as u64).and_then(|s| s.checked_add(prefix + 4)).ok_or_else(overflow)?;
        let b = f.get(dblk, size)?;
        check_sum(b, "fixed array data block")?;
        if &b[..4] != b"FADB" {
            return corrupt("fixed array data block: no \"FADB\"");
        }
        elements(f, &b[prefix as usize..b.len() - 4], esize, 0, full, &mut out)?;
        return Ok(pick(idx, out));
    }
    let npages = n.div_ceil(page);
    let bitmap = npages.div_ceil(8);
    let b = f.get(dblk, prefix + bitmap + 4)?;
    check_sum(b, "fixed array data block")?;
    if &b[..4] != b"FADB" {
        return corrupt("fixed array data block: no \"FADB\"");
    }
    let p = idx / page;
    if !bit(&b[prefix as usize..], p) {
        return Ok((None, Vec::new()));
    }
    let psize = page * esize as u64 + 4;
    let in_page = page.min(n - p * page);
    let at = p
        .checked_mul(psize)
        .and_then(|x| x.checked_add(dblk)?.checked_add(prefix + bitmap + 4))
        .ok_or_else(overflow)?;
    let pb = f.get(at, in_page * esize as u64 + 4)?;
    check_sum(pb, "fixed array page")?;
    elements(f, &pb[..pb.len() - 4], esize, p * page, full, &mut out)?;
    Ok(pick(idx, out))
}

fn extensible_array(f: &File, addr: u64, idx: u64, full: u64) -> R<Found> {
    let (o, l) = (f.o as u64, f.l as u64);
    let b = f.get_hint(addr, 12 + 6 * l + o + 4, 512)?;
    check_sum(b, "extensible array header")?;
    let mut c = f.cur(b, "extensible array header");
    c.sig(b"EAHD")?;
    c.u8()?;
    c.u8()?;
    let esize = c.u8()? as usize;
    let max_bits = c.u8()? as u32;
    let idx_elmts = c.u8()? as u64;
    let dblk_min = c.u8()? as u64;
    let sblk_min_ptrs = c.u8()? as u64;
    let page_bits = c.u8()? as u32;
    for _ in 0..6 {
        c.len()?;
    }
    let iblock = c.addr()?;
    check_esize(f, esize)?;
    let ok = (1..=64).contains(&max_bits)
        && dblk_min.is_power_of_two()
        && sblk_min_ptrs.is_power_of_two()
        && page_bits < 32
        && log2(dblk_min) <= max_bits;
    if !ok {
        return corrupt("extensible array header parameters");
    }
    if iblock == UNDEF {
        return Ok((None, Vec::new()));
    }
    let es = esize as u64;
    let off_size = max_bits.div_ceil(8) as u64;
    let nsblks = 1 + (max_bits - log2(dblk_min)) as u64;
    let iblk_sblks = 2 * log2(sblk_min_ptrs) as u64;
    let ndblk_addrs = 2 * (sblk_min_ptrs - 1);
    let nsblk_addrs = nsblks.saturating_sub(iblk_sblks);
    let iprefix = 6 + o;
    let isize = iprefix + idx_elmts * es + (ndblk_addrs + nsblk_addrs) * o + 4;
    let ib = f.get_hint(iblock, isize, 4096)?;
    check_sum(ib, "extensible array index block")?;
    if &ib[..4] != b"EAIB" {
        return corrupt("extensible array index block: no \"EAIB\"");
    }
    let mut out = Vec::new();
    if idx < idx_elmts {
        let s = iprefix as usize;
        elements(f, &ib[s..s + (idx_elmts * es) as usize], esize, 0, full, &mut out)?;
        return Ok(pick(idx, out));
    }
    let addr_at = |k: u64| -> u64 {
        let s = (iprefix + idx_elmts * es + k * o) as usize;
        undef(le(&ib[s..s + o as usize]), o as usize)
    };
    let i = idx - idx_elmts;
    let sblk = log2(i / dblk_min + 1) as u64;
    if sblk >= nsblks {
        return corrupt(format!("chunk {idx} is past the extensible array's end"));
    }
    // Super block `sblk`: its data blocks, their sizes, where it starts.
    let (mut start_idx, mut start_dblk) = (0u64, 0u64);
    for u in 0..sblk {
        let nd = 1u64 << (u / 2);
        start_idx = start_idx.saturating_add(nd.saturating_mul((1u64 << u.div_ceil(2)) * dblk_min));
        start_dblk = start_dblk.saturating_add(nd);
    }
    let ndblks = 1u64 << (sblk / 2);
    let dblk_nelmts = (1u64 << sblk.div_ceil(2)) * dblk_min;
    let Some(local) = i.checked_sub(start_idx) else { return corrupt("extensible array indexing") };
    let d_in = local / dblk_nelmts;
    let page = 1u64 << page_bits;
    let paged = dblk_nelmts > page;
    let npages = if paged { dblk_nelmts.div_ceil(page) } else { 0 };
    let (dblk, page_ok) = if sblk < iblk_sblks {
        let k = start_dblk + d_in;
        if k >= ndblk_addrs {
            return corrupt("extensible array: a data block past the index block's");
        }
        (addr_at(k), true)
    } else {
        let s = addr_at(ndblk_addrs + (sblk - iblk_sblks));
        if s == UNDEF {
            return Ok((None, Vec::new()));
        }
        let init = npages.div_ceil(8);
        let sprefix = 6 + o + off_size;
        let ssize = ndblks
            .checked_mul(init + o)
            .and_then(|x| x.checked_add(sprefix + 4))
            .ok_or_else(|| crate::io::E::Fail(crate::io::Code::Corrupt, "extensible array sizes overflow".into()))?;
        let sb = f.get_hint(s, ssize, 4096)?;
        check_sum(sb, "extensible array super block")?;
        if &sb[..4] != b"EASB" {
            return corrupt("extensible array super block: no \"EASB\"");
        }
        let at = (sprefix + ndblks * init + d_in * o) as usize;
        if at + o as usize > sb.len() {
            return corrupt("extensible array super block");
        }
        let dblk = undef(le(&sb[at..at + o as usize]), o as usize);
        let p = (local % dblk_nelmts) / page;
        let ok = !paged || bit(&sb[(sprefix + d_in * init) as usize..], p);
        (dblk, ok)
    };
    if dblk == UNDEF || !page_ok {
        return Ok((None, Vec::new()));
    }
    let dprefix = 6 + o + off_size;
    let first = idx_elmts.saturating_add(start_idx).saturating_add(d_in.saturating_mul(dblk_nelmts));
    let p = if paged { Some((local % dblk_nelmts) / page) } else { None };
    ea_data_block(f, (dblk, dprefix), (dblk_nelmts, esize, page, p), (first, full), &mut out)?;
    Ok(pick(idx, out))
}

/// The elements of an extensible array's data block at `dblk` (its prefix `dprefix` bytes) of
/// `n` elements of `esize` bytes (of its page `p` of `page` elements when it is paged), the
/// first of them element `first`.
fn ea_data_block(
    f: &File,
    (dblk, dprefix): (u64, u64),
    (n, esize, page, p): (u64, usize, u64, Option<u64>),
    (first, full): (u64, u64),
    out: &mut Vec<(u64, Loc)>,
) -> R<()> {
    let es = esize as u64;
    let Some(p) = p else {
        let db = f.get(dblk, dprefix + n * es + 4)?;
        check_sum(db, "extensible array data block")?;
        if &db[..4] != b"EADB" {
            return corrupt("extensible array data block: no \"EADB\"");
        }
        return elements(f, &db[dprefix as usize..db.len() - 4], esize, first, full, out);
    };
    let at = p
        .checked_mul(page * es + 4)
        .and_then(|x| x.checked_add(dblk)?.checked_add(dprefix + 4))
        .ok_or_else(|| crate::io::E::Fail(crate::io::Code::Corrupt, "extensible array sizes overflow".into()))?;
    let pb = f.get(at, page * es + 4)?;
    check_sum(pb, "extensible array data block page")?;
    elements(f, &pb[..pb.len() - 4], esize, first + p * page, full, out)
}

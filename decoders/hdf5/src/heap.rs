//! Heaps and trees: local heaps, the global heap, fractal heaps, B-tree v1 nodes, B-tree v2.
use crate::io::{all, check_sum, corrupt, enc_size, le, log2, unsupported, File, R, UNDEF};
use alloc::format;
use alloc::vec::Vec;
use core::cmp::Ordering;

// ------------------------------------------------------------------------------------------------
// local and global heaps
// ------------------------------------------------------------------------------------------------

/// A local heap's data segment.
pub fn local_heap<'f>(f: &'f File, addr: u64) -> R<&'f [u8]> {
    let n = 8 + 2 * f.l as u64 + f.o as u64;
    let b = f.get_hint(addr, n, 1024)?;
    let mut c = f.cur(b, "local heap");
    c.sig(b"HEAP")?;
    c.skip(4)?;
    let size = c.len()?;
    c.len()?;
    let data = c.addr()?;
    if size == 0 {
        return Ok(&[]);
    }
    f.get(data, size)
}

/// The NUL-terminated string at `off` of a local heap's data.
pub fn heap_str(data: &[u8], off: u64) -> R<&[u8]> {
    let s = usize::try_from(off).ok().and_then(|o| data.get(o..));
    match s {
        Some(s) => Ok(&s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())]),
        None => corrupt(format!("local heap: offset {off} is outside the heap")),
    }
}

/// Object `index` of the global heap collection at `addr`.
pub fn global<'f>(f: &'f File, addr: u64, index: u32) -> R<&'f [u8]> {
    let l = f.l as usize;
    let pre = f.get_hint(addr, 8 + l as u64, 4096)?;
    let mut c = f.cur(pre, "global heap");
    c.sig(b"GCOL")?;
    c.skip(4)?;
    let size = c.len()?;
    let b = f.get(addr, size)?;
    let mut c = f.cur(b, "global heap");
    c.skip(8 + l)?;
    while c.left() >= 8 + l {
        f.tick(1)?;
        let i = c.u16()?;
        c.skip(6)?;
        let n = c.len()?;
        if i == 0 {
            break;
        }
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        let data = c.take(n)?;
        if u32::from(i) == index {
            return Ok(data);
        }
        c.skip((8 - n % 8) % 8).ok();
    }
    corrupt(format!("global heap at {addr}: no object {index}"))
}

// ------------------------------------------------------------------------------------------------
// B-tree v1 nodes
// ------------------------------------------------------------------------------------------------

pub struct Bt1<'f> {
    pub level: u8,
    pub keys: Vec<&'f [u8]>,
    pub children: Vec<u64>,
}

/// A version 1 B-tree node at `addr` whose keys are `key` bytes (`k` entries at most, used to
/// ask for the whole node at once).
pub fn bt1_node<'f>(f: &'f File, addr: u64, ty: u8, key: usize, k: u16) -> R<Bt1<'f>> {
    f.tick(1)?;
    let o = f.o as usize;
    let pre = 8 + 2 * o;
    let full = pre + (2 * k as usize + 1) * key + 2 * k as usize * o;
    let b = f.get_hint(addr, pre as u64, full as u64)?;
    let mut c = f.cur(b, "B-tree node");
    c.sig(b"TREE")?;
    let t = c.u8()?;
    let level = c.u8()?;
    let n = c.u16()? as usize;
    if t != ty {
        return corrupt(format!("B-tree node at {addr} is of type {t}, not {ty}"));
    }
    let size = pre + (n + 1) * key + n * o;
    let b = f.get(addr, size as u64)?;
    let mut c = f.cur(b, "B-tree node");
    c.skip(pre)?;
    let mut keys = Vec::with_capacity(n + 1);
    let mut children = Vec::with_capacity(n);
    for _ in 0..n {
        keys.push(c.take(key)?);
        children.push(c.addr()?);
    }
    keys.push(c.take(key)?);
    f.tick(n as u64)?;
    Ok(Bt1 { level, keys, children })
}

// ------------------------------------------------------------------------------------------------
// B-tree v2
// ------------------------------------------------------------------------------------------------

pub struct Bt2 {
    pub ty: u8,
    pub node_size: u64,
    pub rsize: usize,
    pub depth: u16,
    pub root: u64,
    pub root_nrec: u64,
    nrec_size: usize,
    /// Per depth: the size of a child pointer's "total records" field.
    cum_size: Vec<usize>,
}

pub fn bt2_header(f: &File, addr: u64) -> R<Bt2> {
    f.tick(1)?;
    let o = f.o as usize;
    let n = 4 + 1 + 1 + 4 + 2 + 2 + 1 + 1 + o + 2 + f.l as usize + 4;
    let b = f.get_hint(addr, n as u64, 512)?;
    check_sum(b, "B-tree v2 header")?;
    let mut c = f.cur(b, "B-tree v2 header");
    c.sig(b"BTHD")?;
    c.u8()?;
    let ty = c.u8()?;
    let node_size = c.u32()? as u64;
    let rsize = c.u16()? as usize;
    let depth = c.u16()?;
    c.skip(2)?;
    let root = c.addr()?;
    let root_nrec = c.u16()? as u64;
    if rsize == 0 || node_size < 16 + rsize as u64 || node_size > 1 << 24 || depth > 32 {
        return corrupt(format!("B-tree v2 at {addr}: node size {node_size}, record size {rsize}, depth {depth}"));
    }
    let leaf_max = (node_size - 10) / rsize as u64;
    let nrec_size = enc_size(leaf_max);
    let mut cum = leaf_max;
    let mut cum_size = alloc::vec![0usize];
    for d in 1..=depth as usize {
        let ptr = (o + nrec_size + cum_size[d - 1]) as u64;
        let max = node_size.saturating_sub(10 + ptr) / (rsize as u64 + ptr);
        cum = (max + 1).saturating_mul(cum).saturating_add(max);
        cum_size.push(enc_size(cum));
    }
    Ok(Bt2 { ty, node_size, rsize, depth, root, root_nrec, nrec_size, cum_size })
}

/// One node: its records, and for an internal node its children (address, record count).
fn bt2_node<'f>(f: &'f File, h: &Bt2, addr: u64, nrec: u64, depth: u16) -> R<(Vec<&'f [u8]>, Vec<(u64, u64)>)> {
    f.tick(nrec.saturating_add(1))?;
    let o = f.o as u64;
    let ptr = if depth == 0 {
        0
    } else {
        o + h.nrec_size as u64 + *h.cum_size.get(depth as usize - 1).unwrap_or(&0) as u64
    };
    let nrec_u = nrec;
    let size = nrec_u
        .checked_mul(h.rsize as u64)
        .and_then(|r| r.checked_add(if depth == 0 { 0 } else { (nrec_u + 1).checked_mul(ptr)? }))
        .map(|s| s + 10)
        .filter(|&s| s <= h.node_size);
    let size = match size {
        Some(s) => s,
        None => return corrupt(format!("B-tree v2 node at {addr}: {nrec} records do not fit")),
    };
    let b = f.get_hint(addr, size, h.node_size)?;
    check_sum(b, "B-tree v2 node")?;
    let mut c = f.cur(b, "B-tree v2 node");
    c.sig(if depth == 0 { b"BTLF" } else { b"BTIN" })?;
    c.u8()?;
    if c.u8()? != h.ty {
        return corrupt(format!("B-tree v2 node at {addr} is of another type"));
    }
    let mut recs = Vec::with_capacity(nrec as usize);
    for _ in 0..nrec {
        recs.push(c.take(h.rsize)?);
    }
    let mut kids = Vec::new();
    if depth > 0 {
        for _ in 0..=nrec {
            let a = c.addr()?;
            let n = c.uv(h.nrec_size)?;
            if depth > 1 {
                c.skip(h.cum_size[depth as usize - 1])?;
            }
            if a == UNDEF {
                return corrupt(format!("B-tree v2 node at {addr}: an undefined child"));
            }
            kids.push((a, n));
        }
    }
    Ok((recs, kids))
}

/// Every record of the tree (in no particular order).
pub fn bt2_all<'f>(f: &'f File, h: &Bt2) -> R<Vec<&'f [u8]>> {
    let mut out = Vec::new();
    if h.root == UNDEF || h.root_nrec == 0 && h.depth == 0 {
        return Ok(out);
    }
    let mut level = alloc::vec![(h.root, h.root_nrec)];
    let mut depth = h.depth;
    loop {
        let mut addrs: Vec<u64> = level.iter().map(|x| x.0).collect();
        addrs.sort_unstable();
        addrs.dedup();
        if addrs.len() != level.len() {
            return corrupt("B-tree v2: two children share a node");
        }
        let nodes = all(&level, |&(a, n)| bt2_node(f, h, a, n, depth))?;
        let mut next = Vec::new();
        for (recs, kids) in nodes {
            out.extend(recs);
            next.extend(kids);
        }
        if depth == 0 {
            return Ok(out);
        }
        depth -= 1;
        level = next;
    }
}

/// The record `cmp` finds equal (`cmp(record)` orders the target against a record), and every
/// record of the nodes visited on the way.
pub fn bt2_find<'f>(f: &'f File, h: &Bt2, cmp: impl Fn(&[u8]) -> Ordering) -> R<(Option<&'f [u8]>, Vec<&'f [u8]>)> {
    let mut seen = Vec::new();
    if h.root == UNDEF || h.root_nrec == 0 && h.depth == 0 {
        return Ok((None, seen));
    }
    let (mut addr, mut nrec, mut depth) = (h.root, h.root_nrec, h.depth);
    loop {
        let (recs, kids) = bt2_node(f, h, addr, nrec, depth)?;
        seen.extend(recs.iter().copied());
        let mut next = recs.len();
        for (i, r) in recs.iter().enumerate() {
            match cmp(r) {
                Ordering::Equal => return Ok((Some(r), seen)),
                Ordering::Less => {
                    next = i;
                    break;
                }
                Ordering::Greater => {}
            }
        }
        if depth == 0 {
            return Ok((None, seen));
        }
        let Some(&(a, n)) = kids.get(next) else { return corrupt("B-tree v2: a missing child") };
        addr = a;
        nrec = n;
        depth -= 1;
    }
}

// ------------------------------------------------------------------------------------------------
// fractal heap
// ------------------------------------------------------------------------------------------------

pub struct Heap {
    width: u64,
    start: u64,
    max_drows: u64,
    root: u64,
    cur_rows: u64,
    off_size: usize,
    len_size: usize,
    id_len: usize,
}

pub fn heap_header(f: &File, addr: u64) -> R<Heap> {
    f.tick(1)?;
    let (o, l) = (f.o as u64, f.l as u64);
    let n = 26 + 12 * l + 3 * o;
    let b = f.get_hint(addr, n, 512)?;
    let mut c = f.cur(b, "fractal heap header");
    c.sig(b"FRHP")?;
    c.u8()?;
    let id_len = c.u16()? as usize;
    let filt_len = c.u16()?;
    if filt_len != 0 {
        return unsupported("a fractal heap with I/O filters is not read");
    }
    check_sum(b, "fractal heap header")?;
    c.u8()?;
    let max_man = c.u32()? as u64;
    c.len()?;
    c.addr()?;
    c.len()?;
    c.addr()?;
    for _ in 0..8 {
        c.len()?;
    }
    let width = c.u16()? as u64;
    let start = c.len()?;
    let max_direct = c.len()?;
    let max_bits = c.u16()? as u64;
    c.u16()?;
    let root = c.addr()?;
    let cur_rows = c.u16()? as u64;
    let ok = width > 0
        && width <= 1 << 16
        && start.is_power_of_two()
        && max_direct.is_power_of_two()
        && max_direct >= start
        && (1..=64).contains(&max_bits);
    if !ok {
        return corrupt(format!("fractal heap at {addr}: table width {width}, blocks of {start}..{max_direct}"));
    }
    let max_drows = (log2(max_direct) - log2(start)) as u64 + 2;
    let off_size = max_bits.div_ceil(8) as usize;
    let len_size = (log2(max_direct).div_ceil(8) as usize).min(enc_size(max_man));
    Ok(Heap { width, start, max_drows, root, cur_rows, off_size, len_size, id_len })
}

fn row_size(h: &Heap, r: u64) -> Option<u64> {
    if r == 0 {
        Some(h.start)
    } else {
        h.start.checked_shl((r - 1) as u32).filter(|&s| s >> (r - 1) == h.start)
    }
}

/// The object a heap ID names (managed or tiny objects; huge ones are not read).
pub fn heap_get<'f>(f: &'f File, h: &Heap, id: &'f [u8]) -> R<&'f [u8]> {
    let Some(&first) = id.first() else { return corrupt("an empty heap ID") };
    if first >> 6 != 0 {
        return corrupt(format!("heap ID version {}", first >> 6));
    }
    match (first >> 4) & 3 {
        0 => {}
        2 => {
            let (len, at) = if h.id_len <= 18 {
                ((first & 0x0f) as usize + 1, 1)
            } else {
                ((((first & 0x0f) as usize) << 8 | *id.get(1).unwrap_or(&0) as usize) + 1, 2)
            };
            return match id.get(at..at + len) {
                Some(d) => Ok(d),
                None => corrupt("a tiny heap object longer than its ID"),
            };
        }
        1 => return unsupported("a huge fractal heap object is not read"),
        t => return corrupt(format!("heap ID of type {t}")),
    }
    let mut c = f.cur(id, "heap ID");
    c.skip(1)?;
    let off = c.uv(h.off_size)?;
    let len = c.uv(h.len_size)?;
    let (mut iaddr, mut nrows, mut base) = (h.root, h.cur_rows, 0u64);
    let o = f.o as u64;
    let Some(wstart) = h.width.checked_mul(h.start) else { return corrupt("fractal heap: rows overflow") };
    for _ in 0..64 {
        f.tick(1)?;
        if nrows == 0 {
            // The root is a direct block.
            return direct(f, h, iaddr, off.checked_sub(base), len, h.start);
        }
        let x = off.checked_sub(base).unwrap_or(u64::MAX);
        let r = if x < wstart { 0 } else { 1 + log2(x / wstart) as u64 };
        if r >= nrows {
            return corrupt(format!("heap offset {off} is outside the heap"));
        }
        let size = row_size(h, r).ok_or_else(|| crate::io::E::Fail(crate::io::Code::Corrupt, "heap rows".into()))?;
        let row_start = if r == 0 { 0 } else { h.width.checked_mul(size).unwrap_or(u64::MAX) };
        if row_start > x {
            return corrupt("fractal heap: rows overflow");
        }
        let col = (x - row_start) / size;
        let entry = r * h.width + col;
        let drows = nrows.min(h.max_drows);
        let n_entries = nrows * h.width;
        let bsize = 4 + 1 + o + h.off_size as u64 + n_entries * o + 4;
        let _ = drows;
        let b = f.get_hint(iaddr, bsize, 4096)?;
        check_sum(b, "fractal heap indirect block")?;
        let mut c = f.cur(b, "fractal heap indirect block");
        c.sig(b"FHIB")?;
        c.skip(1 + o as usize + h.off_size + (entry * o) as usize)?;
        let child = c.addr()?;
        if child == UNDEF {
            return corrupt(format!("heap offset {off} is in a block never allocated"));
        }
        let Some(boff) = base.checked_add(row_start).and_then(|b| b.checked_add(col.checked_mul(size)?)) else {
            return corrupt("fractal heap: block offsets overflow");
        };
        if r < h.max_drows {
            return direct(f, h, child, off.checked_sub(boff), len, size);
        }
        iaddr = child;
        base = boff;
        nrows = match log2(size).checked_sub(log2(wstart)) {
            Some(n) => n as u64 + 1,
            None => return corrupt("fractal heap: an indirect block smaller than its rows"),
        };
    }
    corrupt("fractal heap: indirect blocks nest too deep")
}

/// Ask (without waiting) for every direct block the root of the heap lists, so that they come in
/// the same round as the index nodes naming objects in them (a group's or attributes' heap is
/// read whole anyway).
pub fn heap_prefetch(f: &File, h: &Heap) {
    if h.root == UNDEF {
        return;
    }
    if h.cur_rows == 0 {
        let _ = f.get(h.root, h.start);
        return;
    }
    let o = f.o as u64;
    let n_entries = h.cur_rows * h.width;
    let bsize = 4 + 1 + o + h.off_size as u64 + n_entries * o + 4;
    let Ok(b) = f.get_hint(h.root, bsize, 4096) else { return };
    let mut c = f.cur(b, "fractal heap indirect block");
    if c.sig(b"FHIB").is_err() || c.skip(1 + o as usize + h.off_size).is_err() {
        return;
    }
    let mut fetched = 0u64;
    for r in 0..h.cur_rows.min(h.max_drows) {
        let Some(size) = row_size(h, r) else { return };
        for _ in 0..h.width {
            let Ok(a) = c.addr() else { return };
            fetched = fetched.saturating_add(size);
            if a != UNDEF && fetched <= 16 << 20 {
                let _ = f.get(a, size);
            }
        }
    }
}

fn direct<'f>(f: &'f File, _h: &Heap, addr: u64, rel: Option<u64>, len: u64, size: u64) -> R<&'f [u8]> {
    let Some(rel) = rel.filter(|&r| r.checked_add(len).is_some_and(|e| e <= size)) else {
        return corrupt("a heap object outside its block");
    };
    let sig = f.get_hint(addr, 4, size);
    let obj = f.get(addr.checked_add(rel).unwrap_or(UNDEF), len);
    if sig? != b"FHDB" {
        return corrupt(format!("fractal heap direct block at {addr}: no \"FHDB\""));
    }
    obj
}

/// A little-endian field of a record.
pub fn field(rec: &[u8], at: usize, n: usize) -> u64 {
    rec.get(at..at + n).map_or(UNDEF, le)
}

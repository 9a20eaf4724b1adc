//! The file as the host handed it: a sparse set of windows. Every read names the bytes it needs;
//! bytes no window holds are recorded as a need (the host fetches them and calls again), so a
//! parse either completes or ends with `E::Need` and the list of ranges to fetch.
use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

/// Why a parse stopped.
#[derive(Debug)]
pub enum E {
    /// Bytes are missing: they are in the file's need list.
    Need,
    /// The file (or what it asks for) cannot be answered.
    Fail(Code, String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    Corrupt,
    Unsupported,
    Codec,
    TooLarge,
    NotFound,
}

impl Code {
    pub fn name(self) -> &'static str {
        match self {
            Code::Corrupt => "CorruptShard",
            Code::Unsupported => "UnsupportedFormat",
            Code::Codec => "UnsupportedCodec",
            Code::TooLarge => "TooLarge",
            Code::NotFound => "NotFound",
        }
    }
}

pub type R<T> = Result<T, E>;

pub fn corrupt<T>(msg: impl Into<String>) -> R<T> {
    Err(E::Fail(Code::Corrupt, msg.into()))
}
pub fn unsupported<T>(msg: impl Into<String>) -> R<T> {
    Err(E::Fail(Code::Unsupported, msg.into()))
}
pub fn too_large<T>(msg: impl Into<String>) -> R<T> {
    Err(E::Fail(Code::TooLarge, msg.into()))
}

/// Prefix a failure's message with the object it concerns (`/grp/temp: …`).
pub fn context<T>(r: R<T>, what: &str) -> R<T> {
    r.map_err(|e| match e {
        E::Fail(c, m) => E::Fail(c, format!("{what}: {m}")),
        E::Need => E::Need,
    })
}

/// The undefined address (all bits set, whatever the address size).
pub const UNDEF: u64 = u64::MAX;

/// How many structures one call may parse (a bound on the work any file can cause).
const WORK_LIMIT: u64 = 2_000_000;
/// The largest single structure read (a heap, a node, a header chunk).
pub const MAX_READ: u64 = 64 << 20;

pub struct File<'a> {
    /// Disjoint, sorted, merged windows: (absolute offset, bytes).
    segs: Vec<(u64, Cow<'a, [u8]>)>,
    pub size: Option<u64>,
    needs: RefCell<Vec<(u64, u64)>>,
    work: Cell<u64>,
    /// Base address (addresses in the file are relative to it), sizes of offsets and lengths.
    pub base: u64,
    pub o: u8,
    pub l: u8,
}

impl<'a> File<'a> {
    pub fn new(mut windows: Vec<(u64, &'a [u8])>, size: Option<u64>) -> File<'a> {
        windows.retain(|w| !w.1.is_empty());
        windows.sort_by_key(|w| w.0);
        let mut segs: Vec<(u64, Cow<'a, [u8]>)> = Vec::new();
        for (off, bytes) in windows {
            let end = off.saturating_add(bytes.len() as u64);
            if let Some((poff, pbytes)) = segs.last_mut() {
                let pend = poff.saturating_add(pbytes.len() as u64);
                if off <= pend {
                    if end > pend {
                        let skip = (pend - off) as usize;
                        pbytes.to_mut().extend_from_slice(&bytes[skip..]);
                    }
                    continue;
                }
            }
            segs.push((off, Cow::Borrowed(bytes)));
        }
        File { segs, size, needs: RefCell::new(Vec::new()), work: Cell::new(0), base: 0, o: 8, l: 8 }
    }

    pub fn take_needs(&self) -> Vec<(u64, u64)> {
        let mut n = core::mem::take(&mut *self.needs.borrow_mut());
        n.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(n.len());
        for (off, len) in n {
            if let Some(last) = out.last_mut() {
                let end = last.0.saturating_add(last.1);
                if off <= end {
                    last.1 = last.1.max(off.saturating_add(len) - last.0);
                    continue;
                }
            }
            out.push((off, len));
        }
        out
    }

    /// Count `n` units of work; past the limit the parse stops (loops, absurd sizes).
    pub fn tick(&self, n: u64) -> R<()> {
        let w = self.work.get().saturating_add(n);
        self.work.set(w);
        if w > WORK_LIMIT {
            return too_large("the file's structures take more work to read than allowed");
        }
        Ok(())
    }

    /// The bytes at absolute `[off, off + len)`, or a need for them (`hint` bytes asked at least).
    pub fn get_abs(&self, off: u64, len: u64, hint: u64) -> R<&[u8]> {
        let end = match off.checked_add(len) {
            Some(e) => e,
            None => return corrupt(format!("a structure at {off} of {len} bytes overflows")),
        };
        if len > MAX_READ {
            return too_large(format!("a structure of {len} bytes at {off}"));
        }
        if let Some(size) = self.size {
            if end > size {
                return corrupt(format!("bytes {off}..{end} are past the end of the file ({size} bytes)"));
            }
        }
        // The segments are sorted and disjoint: only the last one starting at or before `off`
        // can hold it.
        let i = self.segs.partition_point(|s| s.0 <= off);
        let last = self.segs.get(i.wrapping_sub(1)).map(|(o, b)| (*o, &b[..]));
        if let Some(b) = abi::held(last, off, len) {
            return Ok(b);
        }
        let mut want = len.max(hint);
        if let Some(size) = self.size {
            want = want.min(size - off);
        }
        self.needs.borrow_mut().push((off, want.max(1)));
        Err(E::Need)
    }

    /// Absolute offset of file address `addr`.
    pub fn abs(&self, addr: u64) -> R<u64> {
        if addr == UNDEF {
            return corrupt("an undefined address is followed");
        }
        match self.base.checked_add(addr) {
            Some(a) if self.size.is_none_or(|s| a < s) => Ok(a),
            _ => corrupt(format!("address {addr} is past the end of the file")),
        }
    }

    /// The bytes at file address `addr` (relative to the base).
    pub fn get(&self, addr: u64, len: u64) -> R<&[u8]> {
        self.get_hint(addr, len, 0)
    }

    pub fn get_hint(&self, addr: u64, len: u64, hint: u64) -> R<&[u8]> {
        let a = self.abs(addr)?;
        self.get_abs(a, len, hint)
    }

    pub fn cur<'b>(&self, b: &'b [u8], what: &'static str) -> Cur<'b> {
        Cur { b, p: 0, o: self.o, l: self.l, what }
    }
}

/// Run `f` on every item: all of them are tried even when some lack bytes, so that one answer
/// asks for everything they need together. A failure (not a need) ends it at once.
pub fn all<T, U>(items: &[T], mut f: impl FnMut(&T) -> R<U>) -> R<Vec<U>> {
    let mut out = Vec::with_capacity(items.len());
    let mut need = false;
    for it in items {
        match f(it) {
            Ok(u) => out.push(u),
            Err(E::Need) => need = true,
            Err(e) => return Err(e),
        }
    }
    if need {
        Err(E::Need)
    } else {
        Ok(out)
    }
}

/// A bounds-checked reader over one structure's bytes.
pub struct Cur<'a> {
    pub b: &'a [u8],
    pub p: usize,
    pub o: u8,
    pub l: u8,
    pub what: &'static str,
}

impl<'a> Cur<'a> {
    pub fn new(b: &'a [u8], o: u8, l: u8, what: &'static str) -> Cur<'a> {
        Cur { b, p: 0, o, l, what }
    }
    fn short<T>(&self) -> R<T> {
        corrupt(format!("{} is truncated", self.what))
    }
    pub fn take(&mut self, n: usize) -> R<&'a [u8]> {
        match self.p.checked_add(n).filter(|&e| e <= self.b.len()) {
            Some(e) => {
                let s = &self.b[self.p..e];
                self.p = e;
                Ok(s)
            }
            None => self.short(),
        }
    }
    pub fn skip(&mut self, n: usize) -> R<()> {
        self.take(n).map(|_| ())
    }
    pub fn u8(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> R<u16> {
        Ok(self.uv(2)? as u16)
    }
    pub fn u32(&mut self) -> R<u32> {
        Ok(self.uv(4)? as u32)
    }
    /// A little-endian unsigned integer of `n` (≤ 8) bytes.
    pub fn uv(&mut self, n: usize) -> R<u64> {
        if n > 8 {
            return corrupt(format!("{}: a field of {n} bytes", self.what));
        }
        Ok(le(self.take(n)?))
    }
    /// An address: `UNDEF` when all its bits are set.
    pub fn addr(&mut self) -> R<u64> {
        let n = self.o as usize;
        let v = self.uv(n)?;
        Ok(if n < 8 && v == (1u64 << (8 * n)) - 1 || v == u64::MAX { UNDEF } else { v })
    }
    pub fn len(&mut self) -> R<u64> {
        self.uv(self.l as usize)
    }
    pub fn rest(&self) -> &'a [u8] {
        &self.b[self.p.min(self.b.len())..]
    }
    pub fn left(&self) -> usize {
        self.b.len().saturating_sub(self.p)
    }
    /// Check a signature.
    pub fn sig(&mut self, s: &[u8; 4]) -> R<()> {
        let got = self.take(4)?;
        if got != s {
            return corrupt(format!(
                "{}: expected signature \"{}\", found {:02x?}",
                self.what,
                core::str::from_utf8(s).unwrap_or("?"),
                got
            ));
        }
        Ok(())
    }
}

pub fn le(b: &[u8]) -> u64 {
    b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x))
}

/// Bytes needed to encode `v` (HDF5's `H5VM_limit_enc_size`): `log2(v) / 8 + 1`.
pub fn enc_size(v: u64) -> usize {
    (log2(v) / 8 + 1) as usize
}

pub fn log2(v: u64) -> u32 {
    if v == 0 {
        0
    } else {
        63 - v.leading_zeros()
    }
}

/// Verify a structure's trailing Jenkins lookup3 checksum: `b` is the structure with the 4
/// checksum bytes last.
pub fn check_sum(b: &[u8], what: &str) -> R<()> {
    if b.len() < 4 {
        return corrupt(format!("{what} is truncated"));
    }
    let (data, sum) = b.split_at(b.len() - 4);
    let want = le(sum) as u32;
    // (Jenkins' lookup3, as the core's `jenkins_lookup3` codec computes it.)
    if kernels::lookup3::hashlittle(data, 0) != want {
        return corrupt(format!("{what}: checksum mismatch"));
    }
    Ok(())
}

//! The NetCDF-3 header as Unidata's "NetCDF File Format Specification" lays it out: classic
//! (`CDF\x01`), 64-bit offset (`CDF\x02`) and CDF-5 (`CDF\x05`: 64-bit counts and sizes, and
//! the unsigned and 64-bit integer types). Big-endian, every item padded to 4 bytes.
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// Why a parse stopped.
#[derive(Debug)]
pub enum E {
    /// The header goes on past the bytes held: they are needed up to this offset.
    Need(u64),
    /// The file cannot be answered: the error code's name, and why.
    Fail(&'static str, String),
}

pub type R<T> = Result<T, E>;

pub fn corrupt<T>(msg: impl Into<String>) -> R<T> {
    Err(E::Fail("CorruptShard", msg.into()))
}
pub fn too_large<T>(msg: impl Into<String>) -> R<T> {
    Err(E::Fail("TooLarge", msg.into()))
}

/// Largest dimension (2^53: exact in JSON readers with doubles) and largest variable in bytes.
const MAX_DIM: u64 = 1 << 53;
const MAX_BYTES: u64 = 1 << 62;

const NC_DIMENSION: u32 = 0x0A;
const NC_VARIABLE: u32 = 0x0B;
const NC_ATTRIBUTE: u32 = 0x0C;
/// `numrecs` of a file being written as a stream: the records are counted from the file's size.
const STREAMING: u64 = 0xFFFF_FFFF;

pub struct Dim {
    pub name: String,
    /// 0: the record (unlimited) dimension.
    pub len: u64,
}

pub struct Attr<'a> {
    pub name: String,
    pub ty: u32,
    pub n: u64,
    pub data: &'a [u8],
}

pub struct Var<'a> {
    pub name: String,
    pub dims: Vec<usize>,
    pub attrs: Vec<Attr<'a>>,
    pub ty: u32,
    pub begin: u64,
}

pub struct Header<'a> {
    /// `None`: streaming, counted from the file's size.
    pub numrecs: Option<u64>,
    pub dims: Vec<Dim>,
    pub attrs: Vec<Attr<'a>>,
    pub vars: Vec<Var<'a>>,
}

/// Bytes of one value of NetCDF type `ty` (byte, char, short, int, float, double; CDF-5's
/// ubyte, ushort, uint, int64, uint64), or `None` for an unknown type.
pub fn type_size(ty: u32) -> Option<u64> {
    Some(match ty {
        1 | 2 | 7 => 1,
        3 | 8 => 2,
        4 | 5 | 9 => 4,
        6 | 10 | 11 => 8,
        _ => return None,
    })
}

pub fn pad4(n: u64) -> u64 {
    n.saturating_add(3) & !3
}

/// The header's bytes from offset 0, read in order.
struct Cur<'a> {
    b: &'a [u8],
    p: usize,
    /// 1, 2 or 5.
    version: u8,
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: u64) -> R<&'a [u8]> {
        let end = (self.p as u64).saturating_add(n);
        let got = usize::try_from(end).ok().and_then(|e| self.b.get(self.p..e));
        let Some(got) = got else { return Err(E::Need(end)) };
        self.p += got.len();
        Ok(got)
    }
    fn u32(&mut self) -> R<u32> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> R<u64> {
        let b = self.take(8)?;
        Ok(b.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
    }
    /// NON_NEG: 32 bits, 64 in CDF-5.
    fn count(&mut self) -> R<u64> {
        if self.version == 5 {
            self.u64()
        } else {
            Ok(u64::from(self.u32()?))
        }
    }
    /// OFFSET: 32 bits in the classic format, else 64.
    fn offset(&mut self) -> R<u64> {
        if self.version == 1 {
            Ok(u64::from(self.u32()?))
        } else {
            self.u64()
        }
    }
    fn name(&mut self) -> R<String> {
        let n = self.count()?;
        let b = self.take(pad4(n))?;
        let b = b.get(..n as usize).unwrap_or(b);
        Ok(String::from_utf8_lossy(b).into_owned())
    }
    /// A list's tag and count (`ABSENT`: both zero, none).
    fn list(&mut self, tag: u32, what: &str) -> R<u64> {
        let t = self.u32()?;
        let n = self.count()?;
        match (t, n) {
            (0, 0) => Ok(0),
            (t, n) if t == tag => Ok(n),
            _ => corrupt(format!("the {what} list has tag {t:#x} and {n} entries")),
        }
    }
}

/// Whether `head` starts like a NetCDF-3 file.
pub fn is_netcdf3(head: &[u8]) -> bool {
    matches!(head, [b'C', b'D', b'F', 1 | 2 | 5, ..])
}

/// The header at the start of `b` (the file's first bytes).
pub fn parse(b: &[u8]) -> R<Header<'_>> {
    let mut c = Cur { b, p: 0, version: 1 };
    let magic = c.take(4)?;
    if !is_netcdf3(magic) {
        return Err(E::Fail("UnsupportedFormat", String::from("not a NetCDF-3 file (no CDF signature)")));
    }
    c.version = magic[3];
    let numrecs = c.count()?;
    let streaming = if c.version == 5 { numrecs == u64::MAX } else { numrecs == STREAMING };
    let numrecs = if streaming { None } else { Some(numrecs) };
    if numrecs.is_some_and(|n| n > MAX_DIM) {
        return too_large(format!("{} records", numrecs.unwrap_or(0)));
    }
    let n = c.list(NC_DIMENSION, "dimension")?;
    let mut dims = Vec::new();
    for _ in 0..n {
        let name = c.name()?;
        let len = c.count()?;
        if len > MAX_DIM {
            return too_large(format!("dimension \"{name}\" of {len} elements"));
        }
        if len == 0 && dims.iter().any(|d: &Dim| d.len == 0) {
            return corrupt(format!("a second unlimited dimension (\"{name}\")"));
        }
        dims.push(Dim { name, len });
    }
    let attrs = attributes(&mut c)?;
    let n = c.list(NC_VARIABLE, "variable")?;
    let mut vars = Vec::new();
    for _ in 0..n {
        vars.push(variable(&mut c, &dims)?);
    }
    Ok(Header { numrecs, dims, attrs, vars })
}

fn attributes<'a>(c: &mut Cur<'a>) -> R<Vec<Attr<'a>>> {
    let n = c.list(NC_ATTRIBUTE, "attribute")?;
    let mut out = Vec::new();
    for _ in 0..n {
        let name = c.name()?;
        let ty = c.u32()?;
        let Some(es) = type_size(ty) else { return corrupt(format!("attribute \"{name}\" of unknown type {ty}")) };
        let n = c.count()?;
        let len = n.checked_mul(es).filter(|&l| l <= MAX_BYTES);
        let Some(len) = len else { return too_large(format!("attribute \"{name}\" of {n} values")) };
        let data = c.take(pad4(len))?;
        out.push(Attr { name, ty, n, data: data.get(..len as usize).unwrap_or(data) });
    }
    Ok(out)
}

fn variable<'a>(c: &mut Cur<'a>, dims: &[Dim]) -> R<Var<'a>> {
    let name = c.name()?;
    let rank = c.count()?;
    let mut ids = Vec::new();
    for _ in 0..rank {
        let id = c.count()?;
        match usize::try_from(id).ok().filter(|&i| i < dims.len()) {
            Some(i) => ids.push(i),
            None => return corrupt(format!("variable \"{name}\" names dimension {id} of {}", dims.len())),
        }
    }
    if ids.iter().skip(1).any(|&i| dims[i].len == 0) {
        return corrupt(format!("variable \"{name}\": the unlimited dimension is not its first"));
    }
    let attrs = attributes(c)?;
    let ty = c.u32()?;
    if type_size(ty).is_none() || (ty > 6 && c.version != 5) {
        return corrupt(format!("variable \"{name}\" of unknown type {ty}"));
    }
    // (`vsize` is redundant: computed from the shape instead, as readers must for variables
    // past 4 GiB, and SciPy writes 0 for a record variable without records.)
    let _vsize = c.count()?;
    let begin = c.offset()?;
    Ok(Var { name, dims: ids, attrs, ty, begin })
}

impl Header<'_> {
    pub fn is_record(&self, v: &Var) -> bool {
        v.dims.first().is_some_and(|&d| self.dims[d].len == 0)
    }

    /// Bytes of one record of `v` (a record variable), or of all of `v` (a fixed one).
    pub fn var_bytes(&self, v: &Var) -> R<u64> {
        let skip = usize::from(self.is_record(v));
        let es = type_size(v.ty).unwrap_or(1);
        let n = v.dims[skip..].iter().try_fold(es, |a, &d| a.checked_mul(self.dims[d].len));
        match n.filter(|&n| n <= MAX_BYTES) {
            Some(n) => Ok(n),
            None => too_large(format!("variable \"{}\" is past 2^62 bytes", v.name)),
        }
    }

    /// Bytes from one record to the next: the record variables' sizes, each padded to 4 bytes
    /// — but one record variable alone is not padded (the specification's special case, done
    /// as netCDF-C does it: when the padded sum is the last one's padded size).
    pub fn recsize(&self) -> R<u64> {
        let mut sum = 0u64;
        let mut last = None;
        for v in self.vars.iter().filter(|v| self.is_record(v)) {
            let n = self.var_bytes(v)?;
            sum = sum.checked_add(pad4(n)).filter(|&s| s <= MAX_BYTES).ok_or_else(|| E::Fail("TooLarge", String::from("records past 2^62 bytes")))?;
            last = Some(n);
        }
        Ok(match last {
            Some(n) if sum == pad4(n) => n,
            _ => sum,
        })
    }

    /// The number of records: the header's, or (streaming) as many as the file's `size` holds.
    pub fn records(&self, size: Option<u64>) -> R<u64> {
        if let Some(n) = self.numrecs {
            return Ok(n);
        }
        let first = self.vars.iter().filter(|v| self.is_record(v)).map(|v| v.begin).min();
        let (Some(first), recsize) = (first, self.recsize()?) else { return Ok(0) };
        let Some(size) = size else { return Err(E::Fail("CorruptShard", String::from("streaming records, and the file's size unknown"))) };
        Ok(size.saturating_sub(first).checked_div(recsize).unwrap_or(0))
    }

    /// The shape of `v`.
    pub fn shape(&self, v: &Var, records: u64) -> Vec<u64> {
        v.dims.iter().map(|&d| if self.dims[d].len == 0 { records } else { self.dims[d].len }).collect()
    }
}

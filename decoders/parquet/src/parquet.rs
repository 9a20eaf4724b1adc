//! The rows of a Parquet reference file (fsspec's `LazyReferenceMapper`: `refs.{k}.parq`, written
//! by kerchunk and VirtualiZarr through pandas with fastparquet or pyarrow): columns `path`,
//! `offset`, `size` and `raw`, one row per chunk. A reader of that much Parquet and no more: the
//! footer and page headers (Thrift compact protocol), flat schemas, optional or required columns,
//! PLAIN and dictionary encodings, data pages v1 and v2, uncompressed or zstd. Anything else is
//! `UnsupportedFormat` naming it; every offset and count is checked against the bytes there are.
use abi::Failure;

type Error = Failure;
type Result<T> = core::result::Result<T, Failure>;

fn le<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}

fn too_large(_file: &str, size: u64, limit: u64, what: &str) -> Error {
    Failure::too_large(format!("{size} bytes, more than the {limit} allowed ({what})"))
}

/// One reference: `raw` bytes, or `size` bytes at `offset` of `path` (0 and 0: all of it), or
/// nothing (`path` and `raw` null: an absent chunk).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Row {
    pub path: Option<String>,
    pub offset: i64,
    pub size: i64,
    pub raw: Option<Vec<u8>>,
}

// (The host names the file: these messages follow its URL.)
fn corrupt(_file: &str, why: impl core::fmt::Display) -> Error {
    Failure::corrupt(format!("bad Parquet reference file: {why}"))
}

fn unsupported(_file: &str, why: impl core::fmt::Display) -> Error {
    Failure::unsupported(format!("Parquet {why} is not read"))
}

/// The Thrift compact protocol over `b`. Errors carry no file: [`rows`] names it.
struct Thrift<'a> {
    b: &'a [u8],
    at: usize,
    depth: u32,
}

type Bad = &'static str;

impl<'a> Thrift<'a> {
    fn byte(&mut self) -> core::result::Result<u8, Bad> {
        let v = *self.b.get(self.at).ok_or("cut short")?;
        self.at += 1;
        Ok(v)
    }

    fn varint(&mut self) -> core::result::Result<u64, Bad> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint too long")
    }

    fn zigzag(&mut self) -> core::result::Result<i64, Bad> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn binary(&mut self) -> core::result::Result<&'a [u8], Bad> {
        let n = usize::try_from(self.varint()?).map_err(|_| "a length too large")?;
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len()).ok_or("a string past the end")?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// An integer field or element of compact type `ty`.
    fn int(&mut self, ty: u8) -> core::result::Result<i64, Bad> {
        match ty {
            3 => Ok(i64::from(self.byte()? as i8)),
            4..=6 => self.zigzag(),
            _ => Err("a field of another type than expected"),
        }
    }

    /// An integer field into `slot`: for the field readers of [`Thrift::fields`].
    fn set(&mut self, ty: u8, slot: &mut i64) -> core::result::Result<bool, Bad> {
        *slot = self.int(ty)?;
        Ok(true)
    }

    /// A list header: (size, element type).
    fn list(&mut self) -> core::result::Result<(usize, u8), Bad> {
        let h = self.byte()?;
        let n = match h >> 4 {
            15 => usize::try_from(self.varint()?).map_err(|_| "a list too long")?,
            n => usize::from(n),
        };
        // Every element takes a byte at least (an empty struct: its stop).
        if n > self.b.len() - self.at {
            return Err("a list longer than its bytes");
        }
        Ok((n, h & 0x0f))
    }

    fn skip(&mut self, ty: u8) -> core::result::Result<(), Bad> {
        match ty {
            1 | 2 => Ok(()),
            3 => self.byte().map(drop),
            4..=6 => self.varint().map(drop),
            7 => {
                self.at = self.at.checked_add(8).filter(|&e| e <= self.b.len()).ok_or("cut short")?;
                Ok(())
            }
            8 => self.binary().map(drop),
            9 | 10 => {
                let (n, t) = self.list()?;
                for _ in 0..n {
                    // A bool element is a byte of its own.
                    if t == 1 || t == 2 {
                        self.byte()?;
                    } else {
                        self.nested(|s| s.skip(t))?;
                    }
                }
                Ok(())
            }
            11 => {
                let n = self.varint()?;
                if n > 0 {
                    let kv = self.byte()?;
                    for _ in 0..n.min(self.b.len() as u64) {
                        self.skip(kv >> 4)?;
                        self.skip(kv & 0x0f)?;
                    }
                }
                Ok(())
            }
            12 => self.fields(|_, _, _| Ok(false)),
            _ => Err("an unknown Thrift type"),
        }
    }

    /// Run `f` one level deeper (a bound on nesting: hostile input recurses no further).
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> core::result::Result<T, Bad>) -> core::result::Result<T, Bad> {
        self.depth += 1;
        if self.depth > 32 {
            return Err("nested too deep");
        }
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// A struct's fields: `f(self, id, type)` reads the ones it knows (returning true), the rest
    /// are skipped.
    fn fields(
        &mut self,
        mut f: impl FnMut(&mut Self, i16, u8) -> core::result::Result<bool, Bad>,
    ) -> core::result::Result<(), Bad> {
        self.nested(|t| {
            let mut last = 0i16;
            loop {
                let h = t.byte()?;
                if h == 0 {
                    return Ok(());
                }
                let ty = h & 0x0f;
                let id = match h >> 4 {
                    0 => i16::try_from(t.zigzag()?).map_err(|_| "a field id out of range")?,
                    d => last.checked_add(i16::from(d)).ok_or("a field id out of range")?,
                };
                last = id;
                if !f(t, id, ty)? {
                    t.skip(ty)?;
                }
            }
        })
    }

    /// A list of structs, each read by `f`.
    fn structs(
        &mut self,
        mut f: impl FnMut(&mut Self) -> core::result::Result<(), Bad>,
    ) -> core::result::Result<(), Bad> {
        let (n, t) = self.list()?;
        if t != 12 {
            return Err("a list of another type than expected");
        }
        for _ in 0..n {
            f(self)?;
        }
        Ok(())
    }
}

/// What the footer says of one column in one row group.
#[derive(Default, Clone)]
struct Chunk {
    name: Vec<u8>,
    kind: i64,
    codec: i64,
    values: i64,
    data: i64,
    dict: Option<i64>,
    external: bool,
}

#[derive(Default)]
struct Meta {
    /// Leaf columns of the schema: (name, optional).
    columns: Vec<(Vec<u8>, bool)>,
    groups: Vec<(i64, Vec<Chunk>)>,
}

fn footer(b: &[u8]) -> core::result::Result<Meta, Bad> {
    let mut t = Thrift { b, at: 0, depth: 0 };
    let mut m = Meta::default();
    let mut root = true;
    t.fields(|t, id, ty| match (id, ty) {
        (2, 9) => t
            .structs(|t| {
                let (name, rep, children) = schema_element(t)?;
                // The first element is the root; every other must be a leaf of it (flat).
                if !core::mem::take(&mut root) {
                    if children != 0 || rep == 2 {
                        return Err("a nested or repeated column");
                    }
                    m.columns.push((name, rep == 1));
                }
                Ok(())
            })
            .map(|_| true),
        (4, 9) => t.structs(|t| row_group(t).map(|g| m.groups.push(g))).map(|_| true),
        _ => Ok(false),
    })?;
    Ok(m)
}

/// A SchemaElement: (name, repetition, number of children).
fn schema_element(t: &mut Thrift) -> core::result::Result<(Vec<u8>, i64, i64), Bad> {
    let (mut name, mut rep, mut children) = (Vec::new(), 0, 0);
    t.fields(|t, id, ty| match (id, ty) {
        (3, 5) => t.set(ty, &mut rep),
        (4, 8) => t.binary().map(|v| name = v.to_vec()).map(|_| true),
        (5, 5) => t.set(ty, &mut children),
        _ => Ok(false),
    })?;
    Ok((name, rep, children))
}

/// A RowGroup: (rows, its column chunks).
fn row_group(t: &mut Thrift) -> core::result::Result<(i64, Vec<Chunk>), Bad> {
    let (mut rows, mut chunks) = (0, Vec::new());
    t.fields(|t, id, ty| match (id, ty) {
        (1, 9) => t.structs(|t| column_chunk(t).map(|c| chunks.push(c))).map(|_| true),
        (3, 6) => t.set(ty, &mut rows),
        _ => Ok(false),
    })?;
    Ok((rows, chunks))
}

/// A ColumnChunk and its ColumnMetaData.
fn column_chunk(t: &mut Thrift) -> core::result::Result<Chunk, Bad> {
    let mut c = Chunk::default();
    t.fields(|t, id, ty| match (id, ty) {
        (1, 8) => t.binary().map(|_| c.external = true).map(|_| true),
        (3, 12) => t
            .fields(|t, id, ty| match (id, ty) {
                (1, 5) => t.set(ty, &mut c.kind),
                (3, 9) => {
                    // path_in_schema: one name, the columns being flat.
                    let (n, et) = t.list()?;
                    if et != 8 || n != 1 {
                        return Err("a nested column");
                    }
                    c.name = t.binary()?.to_vec();
                    Ok(true)
                }
                (4, 5) => t.set(ty, &mut c.codec),
                (5, 6) => t.set(ty, &mut c.values),
                (9, 6) => t.set(ty, &mut c.data),
                (11, 6) => t.int(ty).map(|v| c.dict = Some(v)).map(|_| true),
                _ => Ok(false),
            })
            .map(|_| true),
        _ => Ok(false),
    })?;
    Ok(c)
}

/// A page header: (type, uncompressed size, compressed size, values, encoding, v2 levels bytes
/// (definition, repetition), v2 compressed).
#[derive(Default)]
struct Page {
    kind: i64,
    size: i64,
    packed: i64,
    values: i64,
    encoding: i64,
    def_levels: i64,
    rep_levels: i64,
    level_encoding: i64,
    compressed: bool,
}

fn page_header(t: &mut Thrift) -> core::result::Result<Page, Bad> {
    let mut p = Page { compressed: true, level_encoding: 3, ..Page::default() };
    t.fields(|t, id, ty| match (id, ty) {
        (1, 5) => t.set(ty, &mut p.kind),
        (2, 5) => t.set(ty, &mut p.size),
        (3, 5) => t.set(ty, &mut p.packed),
        // data_page_header, dictionary_page_header
        (5, 12) | (7, 12) => t
            .fields(|t, id, ty| match (id, ty) {
                (1, 5) => t.set(ty, &mut p.values),
                (2, 5) => t.set(ty, &mut p.encoding),
                (3, 5) => t.set(ty, &mut p.level_encoding),
                _ => Ok(false),
            })
            .map(|_| true),
        (8, 12) => t
            .fields(|t, id, ty| match (id, ty) {
                (1, 5) => t.set(ty, &mut p.values),
                (4, 5) => t.set(ty, &mut p.encoding),
                (5, 5) => t.set(ty, &mut p.def_levels),
                (6, 5) => t.set(ty, &mut p.rep_levels),
                (7, 1) => Ok(true),
                (7, 2) => {
                    p.compressed = false;
                    Ok(true)
                }
                _ => Ok(false),
            })
            .map(|_| true),
        _ => Ok(false),
    })?;
    Ok(p)
}

/// `n` values of the RLE / bit-packed hybrid encoding of `width`-bit integers.
fn hybrid(mut b: &[u8], width: u32, n: usize, out: &mut Vec<u32>) -> core::result::Result<(), Bad> {
    if width > 32 {
        return Err("a bit width over 32");
    }
    let bytes = width.div_ceil(8) as usize;
    let target = out.len() + n;
    while out.len() < target {
        let mut t = Thrift { b, at: 0, depth: 0 };
        let h = t.varint()?;
        b = &b[t.at..];
        let want = target - out.len();
        if h & 1 == 0 {
            let run = usize::try_from(h >> 1).map_err(|_| "a run too long")?;
            let v = b.get(..bytes).ok_or("cut short")?;
            b = &b[bytes..];
            let mut x = 0u32;
            for (k, &byte) in v.iter().enumerate() {
                x |= u32::from(byte) << (8 * k);
            }
            if run == 0 {
                return Err("an empty run");
            }
            out.extend(core::iter::repeat(x).take(run.min(want)));
        } else {
            let groups = usize::try_from(h >> 1).map_err(|_| "a run too long")?;
            let len = groups.checked_mul(width as usize).ok_or("a run too long")?;
            let packed = b.get(..len).ok_or("cut short")?;
            b = &b[len..];
            let count = groups.saturating_mul(8).min(want);
            if groups == 0 {
                return Err("an empty run");
            }
            let mask = if width == 32 { u32::MAX } else { (1u32 << width) - 1 };
            for k in 0..count {
                let bit = k * width as usize;
                let mut x = 0u64;
                for j in 0..(width as usize + 7 + bit % 8) / 8 {
                    x |= u64::from(packed.get(bit / 8 + j).copied().unwrap_or(0)) << (8 * j);
                }
                out.push((x >> (bit % 8)) as u32 & mask);
            }
        }
    }
    Ok(())
}

/// A column's values: integers or byte strings, `None` where null.
enum Values {
    Ints(Vec<Option<i64>>),
    Bytes(Vec<Option<Vec<u8>>>),
}

/// `n` PLAIN values of physical type `kind` (1 INT32, 2 INT64, 6 BYTE_ARRAY).
fn plain(b: &[u8], kind: i64, n: usize) -> core::result::Result<Values, Bad> {
    match kind {
        1 => {
            let need = n.checked_mul(4).ok_or("too many values")?;
            if b.len() < need {
                return Err("values past the page");
            }
            Ok(Values::Ints((0..n).map(|k| le::<4>(b, 4 * k).map(|v| i64::from(i32::from_le_bytes(v)))).collect()))
        }
        2 => {
            let need = n.checked_mul(8).ok_or("too many values")?;
            if b.len() < need {
                return Err("values past the page");
            }
            Ok(Values::Ints((0..n).map(|k| le::<8>(b, 8 * k).map(i64::from_le_bytes)).collect()))
        }
        6 => {
            // Every value takes 4 bytes at least: the count is bounded by the page.
            if n > b.len() / 4 {
                return Err("values past the page");
            }
            let mut out = Vec::with_capacity(n);
            let mut at = 0usize;
            for _ in 0..n {
                let len = le::<4>(b, at).map(u32::from_le_bytes).ok_or("values past the page")? as usize;
                let v = (at + 4).checked_add(len).and_then(|end| b.get(at + 4..end)).ok_or("values past the page")?;
                out.push(Some(v.to_vec()));
                at += 4 + len;
            }
            Ok(Values::Bytes(out))
        }
        _ => Err("a column of another type than INT32, INT64 or BYTE_ARRAY"),
    }
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::Ints(v) => v.len(),
            Values::Bytes(v) => v.len(),
        }
    }
}

/// A data page's definition levels (0: null) and the values after them: v2 levels come apart
/// (`lv`), v1 ones first in the data, RLE with a length.
fn definitions<'d>(
    file: &str,
    p: &Page,
    lv: &[u8],
    data: &'d [u8],
    n: usize,
    bad: &dyn Fn(Bad) -> Error,
) -> Result<(Option<Vec<u32>>, &'d [u8])> {
    let mut d = Vec::new();
    if p.kind == 3 {
        hybrid(lv, 1, n, &mut d).map_err(bad)?;
        return Ok((Some(d), data));
    }
    if p.level_encoding != 3 {
        return Err(unsupported(file, "bit-packed definition levels"));
    }
    let l = le::<4>(data, 0).map(u32::from_le_bytes).ok_or_else(|| bad("levels past the page"))? as usize;
    let lvl = l.checked_add(4).and_then(|end| data.get(4..end)).ok_or_else(|| bad("levels past the page"))?;
    hybrid(lvl, 1, n, &mut d).map_err(bad)?;
    Ok((Some(d), &data[4 + l..]))
}

/// `present` values given as indices into dictionary `d` (a bit width, then the indices); the
/// bytes copied out of it are counted into `spent`, at most `limit`.
fn from_dictionary(
    file: &str,
    d: &Values,
    values: &[u8],
    present: usize,
    (spent, limit): (&mut u64, usize),
    bad: &dyn Fn(Bad) -> Error,
) -> Result<Values> {
    let width = u32::from(*values.first().ok_or_else(|| bad("no bit width"))?);
    let mut idx = Vec::new();
    if present > 0 {
        hybrid(&values[1..], width, present, &mut idx).map_err(bad)?;
    }
    let pick = |i: u32| -> Result<usize> {
        let i = i as usize;
        if i < d.len() {
            Ok(i)
        } else {
            Err(bad("a dictionary index out of range"))
        }
    };
    Ok(match d {
        Values::Ints(v) => Values::Ints(idx.into_iter().map(|i| pick(i).map(|i| v[i])).collect::<Result<_>>()?),
        Values::Bytes(v) => {
            // A long entry named by many rows: counted before it is copied.
            for &i in &idx {
                *spent += v[pick(i)?].as_ref().map_or(0, Vec::len) as u64;
            }
            if *spent > limit as u64 {
                return Err(too_large(file, *spent, limit as u64, "maxMetadataBytes, for a record's values"));
            }
            Values::Bytes(idx.into_iter().map(|i| pick(i).map(|i| v[i].clone())).collect::<Result<_>>()?)
        }
    })
}

/// The values of column chunk `c` in `file` (`optional`: with definition levels), at most `max`.
fn column(
    file: &str,
    b: &[u8],
    c: &Chunk,
    optional: bool,
    max: usize,
    limit: usize,
    spent: &mut u64,
) -> Result<Values> {
    let bad = |why: Bad| corrupt(file, format!("column {}: {why}", String::from_utf8_lossy(&c.name)));
    if c.external {
        return Err(unsupported(file, "a column in another file"));
    }
    if c.codec != 0 && c.codec != 6 {
        let name = ["uncompressed", "snappy", "gzip", "lzo", "brotli", "lz4", "zstd", "lz4_raw"];
        let what = name.get(c.codec as usize).copied().unwrap_or("an unknown codec");
        return Err(unsupported(file, format!("compression {what}")));
    }
    let total = usize::try_from(c.values).ok().filter(|&n| n <= max).ok_or_else(|| bad("more values than rows"))?;
    let mut dict: Option<Values> = None;
    // pyarrow writes a column of nulls alone (`raw` when no chunk is inline) as INT32.
    let mut out = match c.kind {
        1 | 2 => Values::Ints(Vec::new()),
        6 => Values::Bytes(Vec::new()),
        _ => return Err(unsupported(file, "a column type other than INT32, INT64 and BYTE_ARRAY")),
    };
    let len = Values::len;
    let start = c.dict.filter(|&d| d > 0 && d < c.data).unwrap_or(c.data);
    let mut at = usize::try_from(start).ok().filter(|&a| a < b.len()).ok_or_else(|| bad("a page outside the file"))?;
    while len(&out) < total {
        let mut t = Thrift { b, at, depth: 0 };
        let p = page_header(&mut t).map_err(bad)?;
        let packed = usize::try_from(p.packed).ok().ok_or_else(|| bad("a negative page size"))?;
        let body = t.at.checked_add(packed).and_then(|e| b.get(t.at..e)).ok_or_else(|| bad("a page past the end"))?;
        at = t.at + packed;
        let size = usize::try_from(p.size).ok().filter(|&s| s <= limit).ok_or_else(|| bad("a page too large"))?;
        let n = usize::try_from(p.values)
            .ok()
            .filter(|&n| n <= total - len(&out) || p.kind == 2)
            .ok_or_else(|| bad("more values than the column has"))?;
        // v2: the levels come first, never compressed.
        let levels = if p.kind == 3 {
            usize::try_from(p.def_levels.max(0) + p.rep_levels.max(0)).map_err(|_| bad("bad level lengths"))?
        } else {
            0
        };
        let (lv, rest) = body.split_at_checked(levels).ok_or_else(|| bad("levels past the page"))?;
        let inflated;
        let data: &[u8] = if c.codec == 6 && (p.kind != 3 || p.compressed) {
            inflated = crate::unzstd::unzstd(rest, size).map_err(|why| corrupt(file, why))?;
            &inflated
        } else {
            rest
        };
        match p.kind {
            2 => {
                if dict.is_some() {
                    return Err(bad("two dictionaries"));
                }
                if p.encoding != 0 && p.encoding != 2 {
                    return Err(unsupported(file, format!("dictionary encoding {}", p.encoding)));
                }
                let n = usize::try_from(p.values)
                    .ok()
                    .filter(|&n| n <= data.len())
                    .ok_or_else(|| bad("a dictionary too large"))?;
                dict = Some(plain(data, c.kind, n).map_err(bad)?);
            }
            0 | 3 => {
                if p.rep_levels > 0 {
                    return Err(unsupported(file, "a repeated column"));
                }
                let (defs, values) = match optional {
                    true => definitions(file, &p, lv, data, n, &bad)?,
                    false => (None, data),
                };
                let present = defs.as_ref().map_or(n, |d| d.iter().filter(|&&x| x == 1).count());
                let got = match p.encoding {
                    0 => plain(values, c.kind, present).map_err(bad)?,
                    2 | 8 => {
                        let d = dict.as_ref().ok_or_else(|| bad("dictionary indices without a dictionary"))?;
                        from_dictionary(file, d, values, present, (spent, limit), &bad)?
                    }
                    e => return Err(unsupported(file, format!("encoding {e}"))),
                };
                // Spread the present values over the rows, nulls where the level is 0.
                match (&mut out, got) {
                    (Values::Ints(o), Values::Ints(g)) => spread(o, g, defs.as_deref(), n),
                    (Values::Bytes(o), Values::Bytes(g)) => spread(o, g, defs.as_deref(), n),
                    _ => return Err(bad("values of another type")),
                }
            }
            _ => {} // an index page: skipped
        }
        if at >= b.len() && len(&out) < total {
            return Err(bad("fewer values than the column declares"));
        }
    }
    Ok(out)
}

fn spread<T>(out: &mut Vec<Option<T>>, got: Vec<Option<T>>, defs: Option<&[u32]>, n: usize) {
    let mut it = got.into_iter();
    match defs {
        None => out.extend(it.take(n)),
        Some(d) => {
            for &x in d.iter().take(n) {
                out.push(if x == 1 { it.next().flatten() } else { None });
            }
        }
    }
}

/// The rows of Parquet reference file `b` (at URL `file`), at most `max` of them, no page
/// inflated past `limit` bytes.
pub fn rows(file: &str, b: &[u8], max: usize, limit: usize) -> Result<Vec<Row>> {
    let n = b.len();
    if n < 12 || &b[..4] != b"PAR1" || &b[n - 4..] != b"PAR1" {
        return Err(corrupt(file, "no PAR1 magic at both ends"));
    }
    let len = le::<4>(b, n - 8).map(u32::from_le_bytes).unwrap_or(0) as usize;
    let meta = n
        .checked_sub(8 + len)
        .filter(|&s| s >= 4)
        .map(|s| &b[s..n - 8])
        .ok_or_else(|| corrupt(file, "a footer past the start"))?;
    let m = footer(meta).map_err(|why| corrupt(file, format!("footer: {why}")))?;
    let mut out: Vec<Row> = Vec::new();
    let mut spent = 0u64;
    for (rows, chunks) in &m.groups {
        let rows = usize::try_from(*rows)
            .ok()
            .filter(|&r| r <= max - out.len())
            .ok_or_else(|| corrupt(file, "more rows than a record holds"))?;
        let base = out.len();
        // Rows of nulls cost the file almost nothing and a row 64 bytes here.
        if out.try_reserve_exact(rows).is_err() {
            return Err(too_large(file, (rows * core::mem::size_of::<Row>()) as u64, limit as u64, "a record's rows"));
        }
        out.resize(base + rows, Row::default());
        for (name, optional) in &m.columns {
            let Some(c) = chunks.iter().find(|c| &c.name == name) else {
                return Err(corrupt(file, "a column without its chunk"));
            };
            let which = match name.as_slice() {
                b"path" | b"offset" | b"size" | b"raw" => name.as_slice(),
                _ => continue,
            };
            let vals = column(file, b, c, *optional, rows, limit, &mut spent)?;
            let short = || corrupt(file, format!("column {}: fewer values than rows", String::from_utf8_lossy(which)));
            match (which, vals) {
                (b"path", Values::Bytes(v)) => {
                    for (r, v) in out[base..].iter_mut().zip(v.into_iter().chain(core::iter::repeat(None))) {
                        r.path = v.map(|s| String::from_utf8_lossy(&s).into_owned());
                    }
                }
                (b"raw", Values::Bytes(v)) => {
                    for (r, v) in out[base..].iter_mut().zip(v.into_iter().chain(core::iter::repeat(None))) {
                        r.raw = v;
                    }
                }
                (b"offset" | b"size", Values::Ints(v)) => {
                    if v.len() < rows {
                        return Err(short());
                    }
                    for (r, v) in out[base..].iter_mut().zip(v) {
                        let v = v.unwrap_or(0);
                        if which == b"offset" {
                            r.offset = v
                        } else {
                            r.size = v
                        }
                    }
                }
                // Nulls alone, whatever their type.
                (b"path" | b"raw", Values::Ints(v)) if v.iter().all(Option::is_none) => {}
                _ => return Err(corrupt(file, format!("column {} of another type", String::from_utf8_lossy(which)))),
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hybrid_encoding_reads_both_kinds_of_run() {
        // The Parquet spec's example: 0..=7 bit-packed at width 3, then five 7s as a run.
        let mut out = Vec::new();
        hybrid(&[3, 0x88, 0xc6, 0xfa, 10, 7], 3, 13, &mut out).unwrap();
        assert_eq!(out, [0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7]);
        // Runs that claim more than there is, or nothing, are errors, not loops.
        // A bit-packed group of 3 bytes with 1 present; a run of 0; no header; 33 bits.
        assert_eq!(hybrid(&[3, 0x88], 3, 8, &mut Vec::new()), Err("cut short"));
        assert_eq!(hybrid(&[0, 1], 1, 4, &mut Vec::new()), Err("an empty run"));
        assert_eq!(hybrid(&[], 1, 1, &mut Vec::new()), Err("cut short"));
        assert_eq!(hybrid(&[2, 1], 33, 1, &mut Vec::new()), Err("a bit width over 32"));
    }

    #[test]
    fn thrift_structs_skip_what_they_do_not_know_and_bound_their_nesting() {
        // {1: i32 -3, 2: list<struct {}>[2], 4: binary "ab", 5: bool true}
        let b = [0x15, 0x05, 0x19, 0x2c, 0x00, 0x00, 0x28, 0x02, b'a', b'b', 0x11, 0x00];
        let mut t = Thrift { b: &b, at: 0, depth: 0 };
        let mut seen = Vec::new();
        t.fields(|t, id, ty| match id {
            1 => t.int(ty).map(|v| seen.push(v)).map(|_| true),
            _ => Ok(false),
        })
        .unwrap();
        assert_eq!((seen.as_slice(), t.at), (&[-3i64][..], b.len()));
        // 40 structs deep.
        let mut deep = vec![0x1c; 40];
        deep.extend([0; 41]);
        assert_eq!(Thrift { b: &deep, at: 0, depth: 0 }.fields(|_, _, _| Ok(false)), Err("nested too deep"));
        // A list claiming more elements than bytes.
        let mut t = Thrift { b: &[0x19, 0xf5, 0xff, 0xff, 0x03], at: 0, depth: 0 };
        assert_eq!(t.fields(|_, _, _| Ok(false)), Err("a list longer than its bytes"));
    }

    /// A Thrift compact struct, written field by field (ids ascending, a step of at most 15).
    #[derive(Default)]
    struct W(Vec<u8>, i16);

    impl W {
        fn field(&mut self, id: i16, ty: u8) -> &mut Self {
            self.0.push((((id - self.1) as u8) << 4) | ty);
            self.1 = id;
            self
        }
        fn varint(&mut self, mut v: u64) -> &mut Self {
            while v >= 0x80 {
                self.0.push(v as u8 | 0x80);
                v >>= 7;
            }
            self.0.push(v as u8);
            self
        }
        fn int(&mut self, id: i16, ty: u8, v: i64) -> &mut Self {
            self.field(id, ty).varint(((v << 1) ^ (v >> 63)) as u64)
        }
        fn bin(&mut self, id: i16, b: &[u8]) -> &mut Self {
            self.field(id, 8).varint(b.len() as u64);
            self.0.extend_from_slice(b);
            self
        }
        fn structs(&mut self, id: i16, items: &[Vec<u8>]) -> &mut Self {
            self.field(id, 9).0.push(((items.len() as u8) << 4) | 12);
            for i in items {
                self.0.extend_from_slice(i);
            }
            self
        }
        fn sub(&mut self, id: i16, inner: &[u8]) -> &mut Self {
            self.field(id, 12).0.extend_from_slice(inner);
            self
        }
        fn end(&mut self) -> Vec<u8> {
            self.0.push(0);
            core::mem::take(&mut self.0)
        }
    }

    /// A file of one required BYTE_ARRAY column `path`: a dictionary of one `entry`, then `n`
    /// rows naming it (RLE_DICTIONARY, one run).
    fn dictionary_file(entry: &[u8], n: i64) -> Vec<u8> {
        let mut f = b"PAR1".to_vec();
        let mut dict = (entry.len() as u32).to_le_bytes().to_vec();
        dict.extend_from_slice(entry);
        let dh = W::default().int(1, 5, 1).int(2, 5, 0).end();
        f.extend(W::default().int(1, 5, 2).int(2, 5, dict.len() as i64).int(3, 5, dict.len() as i64).sub(7, &dh).end());
        f.extend_from_slice(&dict);
        let data_at = f.len() as i64;
        let mut data = vec![0u8]; // bit width 0: every index 0
        data.extend(W::default().varint((n as u64) << 1).0.clone());
        let ph = W::default().int(1, 5, n).int(2, 5, 8).int(3, 5, 3).int(4, 5, 3).end();
        f.extend(W::default().int(1, 5, 0).int(2, 5, data.len() as i64).int(3, 5, data.len() as i64).sub(5, &ph).end());
        f.extend_from_slice(&data);
        let mut meta = W::default();
        meta.int(1, 5, 6).field(3, 9).0.extend([0x18, 4]);
        meta.0.extend_from_slice(b"path");
        meta.1 = 3;
        let meta = meta.int(4, 5, 0).int(5, 6, n).int(9, 6, data_at).int(11, 6, 4).end();
        let column = W::default().int(2, 6, 0).sub(3, &meta).end();
        let group = W::default().structs(1, &[column]).int(3, 6, n).end();
        let root = W::default().bin(4, b"schema").int(5, 5, 1).end();
        let leaf = W::default().int(1, 5, 6).int(3, 5, 0).bin(4, b"path").end();
        let footer = W::default().int(1, 5, 1).structs(2, &[root, leaf]).int(3, 6, n).structs(4, &[group]).end();
        f.extend_from_slice(&footer);
        f.extend_from_slice(&(footer.len() as u32).to_le_bytes());
        f.extend_from_slice(b"PAR1");
        f
    }

    #[test]
    fn dictionary_entries_are_counted_before_they_are_copied() {
        let rows_of = |f: &[u8], limit| rows("u", f, 1 << 20, limit);
        let ok = rows_of(&dictionary_file(b"x.h5", 10), 1 << 16).unwrap();
        assert_eq!(ok.len(), 10);
        assert!(ok.iter().all(|r| r.path.as_deref() == Some("x.h5") && r.raw.is_none()));
        // A 64 KiB entry named by 100,000 rows: 6.5 GB if copied.
        let e = rows_of(&dictionary_file(&[b'a'; 1 << 16], 100_000), 16 << 20).unwrap_err();
        assert_eq!(e.code, abi::TOO_LARGE, "{e:?}");
        // More rows than a record holds.
        assert_eq!(rows("u", &dictionary_file(b"x", 10), 9, 1 << 16).unwrap_err().code, abi::CORRUPT);
    }

    #[test]
    fn not_parquet_is_a_typed_error() {
        for b in [&b""[..], b"PAR1", b"PAR1\0\0\0\0\xff\xff\xff\x7fPAR1", b"PAR1\x00\x05\0\0\0\0PAR1"] {
            let e = rows("u", b, 10, 1 << 20).unwrap_err();
            assert_eq!(e.code, abi::CORRUPT, "{e:?}");
        }
    }
}

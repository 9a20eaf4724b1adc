//! A Parquet reference set (fsspec's `LazyReferenceMapper`): its `.zmetadata` (the documents
//! and `record_size`), and its record files `<field>/refs.<k>.parq`, read when a chunk needs one
//! (row `n` for chunk `n` of the field's grid in C order) and cached as rows.
use super::build::{bad, resolve_target, Builder};
use super::template::integer;
use super::index::{Index, Records, INLINE};
use super::References;
use crate::core::external::Decoders;
use crate::core::error::{too_large, Error, ErrorCode, Result};
use crate::core::json::{self, Keep, Value};
use crate::core::urls::split_url;
use crate::core::store::place::Place;
use crate::core::transport::{HttpClient, Objects};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

/// A record file's rows as cached: 32 bytes a row, its targets and inline bytes pooled.
#[derive(Default)]
pub(super) struct Record {
    urls: Vec<String>,
    raw: Vec<u8>,
    slots: Vec<Slot>,
}

/// One row: a target in `urls` (or [`NONE`]), inline bytes in `raw` (at, length; length
/// [`NONE`]: none), the range.
pub(super) struct Slot {
    url: u32,
    raw: (u32, u32),
    offset: i64,
    size: i64,
}

const NONE: u32 = u32::MAX;

/// One row of a record file: `raw` bytes, or `size` bytes at `offset` of `path` (0 and 0: all
/// of it), or nothing (an absent chunk).
struct Row {
    path: Option<String>,
    offset: i64,
    size: i64,
    raw: Option<Vec<u8>>,
}

/// The rows of record file `file` (`bytes`), at most `max`, read by the `parquet` decoder
/// module (`decoders/parquet`: its output format there), no page inflated past `limit`.
fn rows(decoders: Option<&dyn Decoders>, file: &str, bytes: &[u8], (max, limit): (usize, usize)) -> Result<Vec<Row>> {
    let Some(d) = decoders else {
        let why = format!("{file}: no parquet decoder is loaded (it reads Parquet reference files)");
        return Err(Error::new(ErrorCode::UnsupportedCodec, why));
    };
    let out = d.decode("parquet", bytes, &[max as f64, limit as f64]).map_err(|e| {
        let code = match e.code {
            ErrorCode::CorruptChunk => ErrorCode::CorruptShard,
            ErrorCode::UnsupportedCodec => ErrorCode::UnsupportedFormat,
            c => c,
        };
        Error::new(code, format!("{file}: {}", e.message.trim_start_matches("parquet: ")))
    })?;
    let bad = || Error::new(ErrorCode::CorruptShard, format!("{file}: the parquet decoder's output is cut short"));
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<&[u8]> {
        let b = out.get(at..at.checked_add(n).ok_or_else(bad)?).ok_or_else(bad)?;
        at += n;
        Ok(b)
    };
    let word = |b: &[u8]| b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x));
    let n = word(take(4)?) as usize;
    let mut rows = Vec::new();
    rows.try_reserve_exact(n.min(max)).map_err(|_| too_large(file, n as u64, max as u64, "rows of a record"))?;
    for _ in 0..n.min(max) {
        let flags = take(1)?[0];
        let offset = word(take(8)?) as i64;
        let size = word(take(8)?) as i64;
        let mut part = |present: bool| -> Result<Option<Vec<u8>>> {
            if !present {
                return Ok(None);
            }
            let len = word(take(4)?) as usize;
            Ok(Some(take(len)?.to_vec()))
        };
        let path = part(flags & 1 != 0)?.map(|p| String::from_utf8_lossy(&p).into_owned());
        let raw = part(flags & 2 != 0)?;
        rows.push(Row { path, offset, size, raw });
    }
    Ok(rows)
}

/// The most rows one record file may declare (fsspec writes 10,000 by default).
const MAX_RECORD: u64 = 1 << 20;
/// The memo key of a record file's rows.
const KEY_RECORD: u64 = 0x7265_6601;

impl References {
    /// The URL of a file inside a Parquet reference set (the set's query kept).
    fn inside(&self, name: &str) -> String {
        let (base, query) = split_url(&self.url);
        format!("{base}/{name}{query}")
    }

    /// A Parquet reference set's `.zmetadata`: `{"metadata": {key: document}, "record_size": n}`.
    pub(super) async fn load_parquet<S: Objects, C: HttpClient>(&self, store: &S, c: &C, limit: u64) -> Result<Option<Rc<Index>>> {
        let file = self.inside(".zmetadata");
        let Some(text) = store.read_document(c, &file, limit).await? else {
            let why = format!("{}: not found (no .zmetadata of a Parquet reference set)", self.url);
            return Err(Error::new(ErrorCode::NotFound, why));
        };
        // The documents are kept as written (their text), as consolidated metadata's are.
        let keep = |k: &str| match k {
            "metadata" => Keep::Raw,
            "record_size" => Keep::Parse,
            _ => Keep::Skip,
        };
        let top = json::parse_object_with(&text, keep).map_err(|e| bad(&file, &e))?;
        let record_size = top
            .as_ref()
            .and_then(|f| f.object.get("record_size"))
            .and_then(Value::as_u64)
            .filter(|&n| (1..=MAX_RECORD).contains(&n));
        let meta = top.as_ref().and_then(|f| f.raw("metadata")).filter(|m| m.is_object());
        let (Some(record_size), Some(meta)) = (record_size, meta) else {
            return Err(bad(&file, &format_args!("no metadata, or a record_size not in 1..={MAX_RECORD}")));
        };
        let members = json::parse_object_with(meta.as_str().as_bytes(), |_| Keep::Raw).map_err(|e| bad(&file, &e))?;
        let mut b = Builder::new(&file, None, limit);
        let mut grids = Vec::new();
        for (key, raw) in members.iter().flat_map(|m| m.raw_members()) {
            // A document, or (as fsspec also takes them) a string holding one.
            let unquoted = match raw.starts_with('"') {
                true => json::parse(raw.as_bytes()).ok().and_then(|v| v.as_str().map(String::from)),
                false => None,
            };
            let doc = unquoted.as_deref().unwrap_or(raw);
            b.inline(key, INLINE, doc)?;
            if let Some(field) = key.strip_suffix("/.zarray") {
                let v = json::parse(doc.as_bytes()).unwrap_or_default();
                let dims = |k: &str| {
                    v.get(k)
                        .and_then(Value::as_array)
                        .map(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
                };
                let (Some(Some(shape)), Some(Some(chunks))) = (dims("shape"), dims("chunks")) else {
                    return Err(bad(&file, &format_args!("key \"{key}\": no shape and chunks")));
                };
                if shape.len() != chunks.len() || chunks.contains(&0) {
                    return Err(bad(&file, &format_args!("key \"{key}\": shape and chunks disagree")));
                }
                let grid: Vec<u64> = shape.iter().zip(&chunks).map(|(s, c)| s.div_ceil(*c)).collect();
                // fsspec numbers a 0-d array's one chunk as a grid of one.
                grids.push((String::from(field), if grid.is_empty() { alloc::vec![1] } else { grid }));
            }
        }
        let mut index = b.finish()?;
        index.parquet = Some(Records { record_size, grids });
        Ok(Some(Rc::new(index)))
    }

    /// Where chunk key `name` of a Parquet reference set is: its row of its record file.
    pub(super) async fn record_place<S: Objects, C: HttpClient>(
        &self,
        store: &S,
        c: &C,
        records: &Records,
        name: &str,
    ) -> Result<Place> {
        let Some((field, chunk)) = name.rsplit_once('/') else { return Ok(Place::Missing) };
        let Some((_, grid)) = records.grids.iter().find(|(f, _)| f == field) else { return Ok(Place::Missing) };
        let coords: Option<Vec<u64>> = chunk.split('.').map(integer).collect();
        let Some(coords) = coords.filter(|c| c.len() == grid.len() && c.iter().zip(grid).all(|(i, n)| i < n)) else {
            return Ok(Place::Missing);
        };
        // The chunk's number in C order (below the grid's size, which fits: its product did not
        // have to, but each partial product is below it).
        let n = coords.iter().zip(grid).fold(0u64, |n, (i, g)| n.saturating_mul(*g).saturating_add(*i));
        let (record, row) = (n / records.record_size, n % records.record_size);
        let file = self.inside(&format!("{field}/refs.{record}.parq"));
        let limit = store.max_document();
        let rs = records.record_size as usize;
        let work = || async {
            let mut rec = Record::default();
            let Some(bytes) = store.read_document(c, &file, limit).await? else { return Ok(rec) };
            let rows = rows(self.decoders.as_deref(), &file, &bytes, (rs, limit as usize))?;
            drop(bytes);
            rec.slots.reserve_exact(rows.len());
            // Targets resolved and kept once per run of rows naming them (a record's rows mostly
            // name one file).
            let mut last: Option<String> = None;
            for r in rows {
                let url = match r.path {
                    None => NONE,
                    Some(p) => {
                        if last.as_deref() != Some(p.as_str()) {
                            let u = resolve_target(&self.url, self.resolve.as_deref(), &p)
                                .map_err(|e| e.at(&format!("{file}: target \"{p}\"")))?;
                            rec.urls.push(u);
                            last = Some(p);
                        }
                        rec.urls.len() as u32 - 1
                    }
                };
                let raw = match r.raw {
                    None => (0, NONE),
                    Some(b) => {
                        if rec.raw.len() + b.len() >= NONE as usize {
                            return Err(too_large(
                                &file,
                                (rec.raw.len() + b.len()) as u64,
                                NONE.into(),
                                "inline bytes of a record",
                            ));
                        }
                        rec.raw.extend_from_slice(&b);
                        ((rec.raw.len() - b.len()) as u32, b.len() as u32)
                    }
                };
                rec.slots.push(Slot { url, raw, offset: r.offset, size: r.size });
            }
            Ok(rec)
        };
        let size = |r: &Record| {
            r.slots.len() * core::mem::size_of::<Slot>()
                + r.raw.len()
                + r.urls.iter().map(|u| 24 + u.len()).sum::<usize>()
        };
        let rec = store.memo(c, &file, alloc::vec![KEY_RECORD], size, work).await?;
        let Some(r) = rec.slots.get(row as usize) else { return Ok(Place::Missing) };
        if r.raw.1 != NONE {
            let (at, len) = (r.raw.0 as usize, r.raw.1 as usize);
            return Ok(Place::Bytes(Rc::new(rec.raw[at..at + len].to_vec())));
        }
        let Some(url) = rec.urls.get(r.url as usize) else { return Ok(Place::Missing) };
        let (Ok(offset), Ok(len)) = (u64::try_from(r.offset), u64::try_from(r.size)) else {
            let why = format!("{file}: row {row} (key \"{name}\"): a negative offset or size");
            return Err(Error::new(ErrorCode::CorruptShard, why));
        };
        store.described_by(url, &file);
        Ok(match (offset, len) {
            (0, 0) => Place::Whole(url.clone()),
            (offset, len) => Place::Range { url: url.clone(), offset, len },
        })
    }
}


//! Arrays of every format: a read grid, a [`Layout`] that places and decodes chunks, and one
//! read path (chunks and regions) shared by all of them.
use super::codec::{c_strides, Decoded};
use super::dtype::{DataType, FillValue};
use super::error::{checked_bytes, err, Error, ErrorCode, Result};
use super::grid::Grid;
use super::http::ByteRange;
use super::http::HttpClient;
use super::locate::{ByteSpan, IndexFormat};
use super::merge::merge;
use super::selection::{copy_box, for_each_index, Region, Sel, Strided};
use super::source::Source;
use super::spec::{build, Built, Documents};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use futures_util::stream::{self, StreamExt};
use serde_json::{Map, Value};

/// How many chunk reads a region read keeps in flight.
const CONCURRENCY: usize = 32;

/// A chunk's object URL and its region in it (`None`: absent).
type Spot = (String, Option<ByteSpan>);

/// One request of a batch: `range` of `url`, serving chunks (input index, offset in the
/// answer, length; `None`: the whole answer).
type Job = (String, ByteRange, Vec<(usize, u64, Option<u64>)>);

/// The storage object holding one read chunk, and the index levels leading to it inside the
/// object (outermost first; none when the object is the chunk).
pub struct Located {
    /// Relative to the array's base URL.
    pub key: String,
    pub levels: Vec<(Rc<dyn IndexFormat>, u64)>,
}

/// A format's storage layout: where each read chunk lives and how its bytes decode.
pub trait Layout {
    fn locate(&self, coords: &[u64]) -> Result<Located>;
    /// Decode the stored bytes of read chunk `coords` into little-endian elements.
    fn decode(&self, coords: &[u64], bytes: Vec<u8>) -> Result<Decoded>;
    /// Whether decoding is real work (decompression, checksums), worth a worker: moving
    /// plain bytes to a worker and back costs more than arranging them here.
    fn costly_decode(&self) -> bool {
        true
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Zarr3,
    Zarr2,
    /// The pre-release Zarr v3 layout with the sharding storage transformer.
    Zarr3Draft,
    Precomputed,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Zarr3 => "zarr3",
            Format::Zarr2 => "zarr2",
            Format::Zarr3Draft => "zarr3-draft",
            Format::Precomputed => "precomputed",
        }
    }
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "zarr3" | "zarr" | "v3" => Format::Zarr3,
            "zarr2" | "v2" => Format::Zarr2,
            "zarr3-draft" => Format::Zarr3Draft,
            "precomputed" | "neuroglancer-precomputed" => Format::Precomputed,
            _ => return None,
        })
    }
}

/// What the API reports about an array, whatever its format.
#[derive(Clone, Debug)]
pub struct ArrayInfo {
    pub format: Format,
    pub shape: Vec<u64>,
    pub dtype: DataType,
    pub fill_value: FillValue,
    /// The storage object's chunk shape when chunks are sharded on a regular grid.
    pub shard_shape: Option<Vec<u64>>,
    pub attributes: Map<String, Value>,
    pub dimension_names: Option<Vec<Option<String>>>,
    /// Format-specific facts for the API (precomputed scales, structured fields, …), as JSON.
    pub extra: Map<String, Value>,
}

/// An array chunk or region: little-endian elements, `stride` in elements per axis.
/// For a chunk at the array's edge `shape` is clipped while `stride` may stay the stored
/// chunk's, so `bytes` may hold more elements than `shape` covers.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub bytes: Vec<u8>,
    pub shape: Vec<u64>,
    pub stride: Vec<u64>,
}

pub struct Array {
    /// Base URL (no trailing slash, no query); keys are appended to it.
    base: String,
    /// The array's own URL, as reported (the base, except in layouts keyed from a store root).
    url: String,
    /// The query string (a signed URL's token), kept on every request.
    query: String,
    pub info: ArrayInfo,
    /// The read-chunk grid: what `chunk` coordinates index.
    pub grid: Grid,
    layout: Box<dyn Layout>,
    source: Rc<Source>,
    docs: Documents,
}

impl Array {
    /// The array `docs` describe, its keys under `base` (plus `query`), read through `source`.
    pub fn new(base: String, query: String, docs: Documents, source: Rc<Source>) -> Result<Self> {
        let Built { info, grid, layout } = build(&docs)?;
        Ok(Array { url: base.clone(), base, query, info, grid, layout, source, docs })
    }

    /// Another scale of the same multi-scale volume (Neuroglancer precomputed), built from the
    /// metadata already read: no request; caches and counters are shared.
    pub fn with_scale(&self, scale: String) -> Result<Array> {
        if self.info.format != Format::Precomputed {
            return err(ErrorCode::InvalidSelection, format!("{}: only precomputed volumes have scales", self.url));
        }
        let docs = Documents { scale: Some(scale), ..self.docs.clone() };
        Ok(Array::new(self.base.clone(), self.query.clone(), docs, self.source.clone())?.at(self.url.clone()))
    }

    /// What the array was built from (see [`Documents`]).
    pub fn documents(&self) -> &Documents {
        &self.docs
    }

    /// Report `url` as the array's URL (keys stay relative to the base).
    pub fn at(mut self, url: String) -> Self {
        self.url = url;
        self
    }

    pub fn url(&self) -> &str {
        &self.url
    }
    pub fn dtype(&self) -> DataType {
        self.info.dtype
    }
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The URL of the storage object at `key`.
    pub fn key_url(&self, key: &str) -> String {
        format!("{}/{}{}", self.base, key, self.query)
    }

    fn check_coords(&self, coords: &[u64]) -> Result<()> {
        if !self.grid.contains(coords) {
            return err(
                ErrorCode::InvalidSelection,
                format!("{}: chunk {coords:?} is outside the chunk grid {:?}", self.url, self.grid.count()),
            );
        }
        Ok(())
    }

    /// The object URL of read chunk `coords` and the chunk's region in it (`None`: absent).
    async fn locate<C: HttpClient>(&self, c: &C, coords: &[u64]) -> Result<Spot> {
        let at = self.layout.locate(coords).map_err(|e| e.at(&self.url))?;
        let url = self.key_url(&at.key);
        let levels: Vec<(&dyn IndexFormat, u64)> = at.levels.iter().map(|(f, k)| (&**f, *k)).collect();
        let region = self.source.locate(c, &url, &levels).await?;
        Ok((url, region))
    }

    /// Read and decode the chunks at `list` (read-grid coordinates); see
    /// [`fetch_many`](Self::fetch_many).
    pub async fn read_many<C: HttpClient>(
        &self,
        c: &C,
        list: &[Vec<u64>],
        mut done: impl FnMut(usize, Result<Option<Decoded>>) -> Result<()>,
    ) -> Result<()> {
        self.fetch_many(c, list, |i, url, got| {
            let decoded = got.and_then(|b| b.map(|b| self.decode(&list[i], b).map_err(|e| e.at(url))).transpose());
            done(i, decoded)
        })
        .await
    }

    /// Whether decoding a chunk is real work (see [`Layout::costly_decode`]).
    pub fn costly_decode(&self) -> bool {
        self.layout.costly_decode()
    }

    /// Decode the stored bytes of read chunk `coords`.
    pub fn decode(&self, coords: &[u64], bytes: Vec<u8>) -> Result<Decoded> {
        self.source.timed(|| self.layout.decode(coords, bytes))
    }

    /// Fetch the stored bytes of the chunks at `list` (read-grid coordinates) with as few
    /// requests as the layout allows: locate them all (index reads are shared), merge
    /// neighbouring spans of each object, fetch the runs concurrently, and hand each chunk to
    /// `done` with its object's URL as its bytes arrive (`None`: absent). An error from `done`
    /// stops the read.
    pub async fn fetch_many<C: HttpClient>(
        &self,
        c: &C,
        list: &[Vec<u64>],
        mut done: impl FnMut(usize, &str, Result<Option<Vec<u8>>>) -> Result<()>,
    ) -> Result<()> {
        // 1. Where every chunk is.
        let mut located: Vec<(usize, Result<Spot>)> =
            stream::iter(list.iter().enumerate().map(|(i, coords)| async move { (i, self.locate(c, coords).await) }))
                .buffer_unordered(CONCURRENCY)
                .collect()
                .await;
        located.sort_by_key(|(i, _)| *i);
        // 2. One job per run of neighbouring spans of one object (whole objects alone).
        let mut by_url: BTreeMap<String, Vec<(usize, ByteSpan)>> = BTreeMap::new();
        for (i, r) in located {
            match r {
                Err(e) => done(i, &self.url, Err(e))?,
                Ok((url, None)) => done(i, &url, Ok(None))?,
                Ok((url, Some(region))) => by_url.entry(url).or_default().push((i, region)),
            }
        }
        let config = self.source.config();
        let mut jobs: Vec<Job> = Vec::new();
        for (url, wanted) in by_url {
            let (mut spans, whole): (Vec<_>, Vec<_>) = wanted.into_iter().partition(|(_, r)| r.len.is_some());
            // Chunks already held in a kept merged read need no request; only the rest merge.
            let mut held = Vec::new();
            spans.retain(|(i, r)| match self.source.kept(&url, r.offset, r.len.unwrap_or(0)) {
                Some(bytes) => {
                    held.push((*i, bytes));
                    false
                }
                None => true,
            });
            self.source.count_kept(held.len());
            for (i, bytes) in held {
                done(i, &url, Ok(Some(bytes)))?;
            }
            for (i, _) in whole {
                jobs.push((url.clone(), ByteRange::Full, alloc::vec![(i, 0, None)]));
            }
            // Chunks inside a read under way (an earlier batch's merged run) wait for it alone:
            // merged with others into a wider range, they would be sent again.
            spans.retain(|(i, r)| {
                let len = r.len.unwrap_or(0);
                if !self.source.reading(&url, r.offset, len) {
                    return true;
                }
                jobs.push((url.clone(), ByteRange::Range { offset: r.offset, len }, alloc::vec![(*i, 0, Some(len))]));
                false
            });
            let offsets: Vec<(u64, u64)> = spans.iter().map(|(_, r)| (r.offset, r.len.unwrap_or(0))).collect();
            let on_their_way = |a, b| self.source.reading_any(&url, a, b);
            for run in merge(&offsets, config.merge_gap, config.merge_max, &|a, b| !on_their_way(a, b)) {
                let members = run.members.iter().map(|&(k, at)| (spans[k].0, at, Some(offsets[k].1))).collect();
                jobs.push((url.clone(), ByteRange::Range { offset: run.offset, len: run.len }, members));
            }
        }
        // 3. Fetch, split, decode.
        let mut fetches = stream::iter(jobs.into_iter().map(|(url, range, members)| async move {
            let got = self.source.read(c, &url, range).await;
            (url, range, got, members)
        }))
        .buffer_unordered(CONCURRENCY);
        while let Some((url, range, got, members)) = fetches.next().await {
            let fetched = match got {
                Ok(Some(f)) => f,
                Ok(None) => {
                    // The object went missing between reading its index and its chunks.
                    members.iter().try_for_each(|m| done(m.0, &url, Ok(None)))?;
                    continue;
                }
                Err(e) => {
                    members.iter().try_for_each(|m| done(m.0, &url, Err(e.clone())))?;
                    continue;
                }
            };
            self.source.count_chunks(members.len());
            let single = members.len() == 1 && members[0].1 == 0;
            let bytes = Rc::new(fetched.bytes);
            if let ByteRange::Range { offset, len } = range {
                let wanted: u64 = members.iter().filter_map(|m| m.2).sum();
                if wanted < len {
                    // The gaps may hold chunks asked for a moment later (a viewer's next tiles).
                    self.source.keep_run(&url, offset, bytes.clone());
                }
            }
            let mut whole = Some(bytes);
            for (i, at, len) in members {
                let piece = match (single, len) {
                    // The answer is this chunk: hand the buffer over (no copy unless kept).
                    (true, _) | (_, None) => whole
                        .take()
                        .map(|b| Rc::try_unwrap(b).unwrap_or_else(|kept| (*kept).clone()))
                        .unwrap_or_default(),
                    (false, Some(n)) => match whole.as_ref().and_then(|b| b.get(at as usize..(at + n) as usize)) {
                        Some(p) => p.to_vec(),
                        None => {
                            done(i, &url, Err(Error::new(ErrorCode::CorruptShard, format!("{url}: short read"))))?;
                            continue;
                        }
                    },
                };
                done(i, &url, Ok(Some(piece)))?;
            }
        }
        Ok(())
    }

    fn fill_chunk(&self, coords: &[u64]) -> Result<Chunk> {
        let shape = self.grid.clipped(coords);
        let n = checked_bytes(&shape, 1)?;
        Ok(Chunk { bytes: self.info.fill_value.repeat(n), stride: c_strides(&shape), shape })
    }

    /// One chunk of the read-chunk grid.
    pub async fn chunk<C: HttpClient>(&self, c: &C, coords: &[u64]) -> Result<Chunk> {
        let mut out = None;
        self.chunks(c, &[coords.to_vec()], |_, r| out = Some(r)).await;
        out.unwrap_or_else(|| Err(Error::new(ErrorCode::CorruptShard, "chunk was never read")))
    }

    /// Several chunks wanted together, each handed to `each` with its own result as soon as
    /// its bytes arrive; neighbours in one object share requests.
    pub async fn chunks<C: HttpClient>(&self, c: &C, list: &[Vec<u64>], mut each: impl FnMut(usize, Result<Chunk>)) {
        self.fetch_chunks(c, list, |i, got| {
            each(
                i,
                got.and_then(|f| match f {
                    Stored::Fill(chunk) => Ok(chunk),
                    Stored::Encoded(bytes) => {
                        let d = self.decode(&list[i], bytes).map_err(|e| e.at(&self.url))?;
                        Ok(Chunk { bytes: d.bytes, shape: self.grid.clipped(&list[i]), stride: d.strides })
                    }
                }),
            )
        })
        .await
    }

    /// Like [`chunks`](Self::chunks), but hands over the stored bytes undecoded (for a decoding
    /// worker); absent chunks come as their fill.
    pub async fn fetch_chunks<C: HttpClient>(
        &self,
        c: &C,
        list: &[Vec<u64>],
        mut each: impl FnMut(usize, Result<Stored>),
    ) {
        let mut valid = Vec::new();
        for (i, coords) in list.iter().enumerate() {
            match self.check_coords(coords) {
                Ok(()) => valid.push(i),
                Err(e) => each(i, Err(e)),
            }
        }
        let wanted: Vec<Vec<u64>> = valid.iter().map(|&i| list[i].clone()).collect();
        let mut seen = alloc::vec![false; wanted.len()];
        let r = self
            .fetch_many(c, &wanted, |k, _, got| {
                seen[k] = true;
                let i = valid[k];
                each(
                    i,
                    match got {
                        Ok(Some(bytes)) => Ok(Stored::Encoded(bytes)),
                        Ok(None) => self.fill_chunk(&list[i]).map(Stored::Fill),
                        Err(e) => Err(e),
                    },
                );
                Ok(())
            })
            .await;
        let failure = r.err().unwrap_or_else(|| Error::new(ErrorCode::CorruptShard, "chunk was never read"));
        for (k, done) in seen.into_iter().enumerate() {
            if !done {
                each(valid[k], Err(failure.clone()));
            }
        }
    }

    /// The chunks a selection touches, each with the box `[lo, hi)` (array coordinates) of it
    /// that the selection covers.
    pub fn plan(&self, sel: &[Sel]) -> Result<Plan> {
        let region = Region::new(sel, &self.info.shape).map_err(|e| e.at(&self.url))?;
        let first = self.grid.find(&region.start);
        let count: Vec<u64> = (region.start.iter().zip(&region.stop))
            .zip(self.grid.axes.iter().zip(&first))
            .map(|((&a, &b), (axis, &f))| if a == b { 0 } else { axis.find(b - 1) - f + 1 })
            .collect();
        let mut chunks = Vec::new();
        for_each_index(&count, |i| {
            let coords: Vec<u64> = i.iter().zip(&first).map(|(i, f)| i + f).collect();
            let origin = self.grid.origin(&coords);
            let shape = self.grid.clipped(&coords);
            let lo = origin.iter().zip(&region.start).map(|(o, a)| *o.max(a)).collect();
            let hi = (origin.iter().zip(&shape)).zip(&region.stop).map(|((o, s), b)| (o + s).min(*b)).collect();
            chunks.push(Piece { coords, lo, hi });
        });
        Ok(Plan { region, chunks })
    }

    /// The box `[lo, hi)` (array coordinates) of decoded chunk `coords`, C-ordered.
    pub fn cut(&self, coords: &[u64], d: &Decoded, lo: &[u64], hi: &[u64]) -> Result<Vec<u8>> {
        let elem = self.info.dtype.size();
        let origin = self.grid.origin(coords);
        let ext: Vec<u64> = lo.iter().zip(hi).map(|(l, h)| h.saturating_sub(*l)).collect();
        let mut out = alloc::vec![0u8; checked_bytes(&ext, elem as u64)?];
        let src_at: u64 = lo.iter().zip(&origin).zip(&d.strides).map(|((l, o), s)| l.saturating_sub(*o) * s).sum();
        let to = Strided { at: 0, strides: &c_strides(&ext) };
        copy_box(&d.bytes, Strided { at: src_at, strides: &d.strides }, &mut out, to, &ext, elem)?;
        Ok(out)
    }

    /// A region: every chunk it touches is read (see [`read_many`](Self::read_many)) and
    /// copied into place.
    pub async fn region<C: HttpClient>(&self, c: &C, sel: &[Sel]) -> Result<Chunk> {
        let Plan { region, chunks } = self.plan(sel)?;
        let extent = region.extent();
        let elem = self.info.dtype.size();
        let n = checked_bytes(&extent, elem as u64)? / elem;
        let mut out = self.info.fill_value.repeat(n);
        let out_strides = c_strides(&extent);
        let list: Vec<Vec<u64>> = chunks.iter().map(|p| p.coords.clone()).collect();
        self.read_many(c, &list, |i, decoded| {
            let Some(d) = decoded? else { return Ok(()) };
            let Piece { coords, lo, hi } = &chunks[i];
            let origin = self.grid.origin(coords);
            let ext: Vec<u64> = lo.iter().zip(hi).map(|(l, h)| h - l).collect();
            let src_at: u64 = lo.iter().zip(&origin).zip(&d.strides).map(|((l, o), s)| (l - o) * s).sum();
            let dst_at: u64 = lo.iter().zip(&region.start).zip(&out_strides).map(|((l, a), s)| (l - a) * s).sum();
            copy_box(
                &d.bytes,
                Strided { at: src_at, strides: &d.strides },
                &mut out,
                Strided { at: dst_at, strides: &out_strides },
                &ext,
                elem,
            )
            .map_err(|e| e.at(&format!("{} chunk {coords:?}", self.url)))
        })
        .await?;
        let shape = region.out_shape();
        let stride = c_strides(&shape);
        Ok(Chunk { bytes: out, shape, stride })
    }
}

/// A chunk's stored bytes, or its fill when it is absent.
pub enum Stored {
    Encoded(Vec<u8>),
    Fill(Chunk),
}

/// One chunk of a [`Plan`]: its read-grid coordinates and the box `[lo, hi)` wanted from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    pub coords: Vec<u64>,
    pub lo: Vec<u64>,
    pub hi: Vec<u64>,
}

/// What a selection needs: its normalised region and the chunks it touches.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub region: Region,
    pub chunks: Vec<Piece>,
}

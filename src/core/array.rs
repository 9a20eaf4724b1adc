//! Arrays of every format: a read grid, a [`Layout`] that places and decodes chunks, and one
//! read path (chunks and regions) shared by all of them.
use super::codec::{c_strides, Decoded};
use super::dtype::{DataType, FillValue};
use super::error::{checked_bytes, err, ErrorCode, Result};
use super::grid::Grid;
use super::http::HttpClient;
use super::locate::IndexFormat;
use super::selection::{copy_box, for_each_index, Place, Region, Sel};
use super::source::Source;
use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use futures_util::stream::{self, StreamExt};
use serde_json::{Map, Value};

/// How many chunk reads a region read keeps in flight.
const CONCURRENCY: usize = 32;

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
pub struct Info {
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
    url: String,
    /// The query string (a signed URL's token), kept on every request.
    query: String,
    pub info: Info,
    /// The read-chunk grid: what `chunk` coordinates index.
    pub grid: Grid,
    layout: Box<dyn Layout>,
    source: Rc<Source>,
}

impl Array {
    pub fn new(
        url: String,
        query: String,
        info: Info,
        grid: Grid,
        layout: Box<dyn Layout>,
        source: Rc<Source>,
    ) -> Self {
        Array { url, query, info, grid, layout, source }
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
        format!("{}/{}{}", self.url, key, self.query)
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

    /// The decoded chunk at read-grid `coords`, `None` when it is absent (fill value).
    async fn read_decoded<C: HttpClient>(&self, c: &C, coords: &[u64]) -> Result<Option<Decoded>> {
        let at = self.layout.locate(coords).map_err(|e| e.at(&self.url))?;
        let url = self.key_url(&at.key);
        let levels: Vec<(&dyn IndexFormat, u64)> = at.levels.iter().map(|(f, k)| (&**f, *k)).collect();
        let Some(encoded) = self.source.read_chunk(c, &url, &levels).await? else { return Ok(None) };
        self.layout.decode(coords, encoded).map(Some).map_err(|e| e.at(&url))
    }

    /// One chunk of the read-chunk grid.
    pub async fn chunk<C: HttpClient>(&self, c: &C, coords: &[u64]) -> Result<Chunk> {
        self.check_coords(coords)?;
        let shape = self.grid.clipped(coords);
        match self.read_decoded(c, coords).await? {
            Some(d) => Ok(Chunk { bytes: d.bytes, shape, stride: d.strides }),
            None => {
                let n = checked_bytes(&shape, 1)?;
                Ok(Chunk { bytes: self.info.fill_value.repeat(n), stride: c_strides(&shape), shape })
            }
        }
    }

    /// A region: every chunk it touches is read concurrently and copied into place.
    pub async fn region<C: HttpClient>(&self, c: &C, sel: &[Sel]) -> Result<Chunk> {
        let region = Region::new(sel, &self.info.shape).map_err(|e| e.at(&self.url))?;
        let extent = region.extent();
        let elem = self.info.dtype.size();
        let n = checked_bytes(&extent, elem as u64)? / elem;
        let mut out = self.info.fill_value.repeat(n);
        let out_strides = c_strides(&extent);

        let first = self.grid.find(&region.start);
        let count: Vec<u64> = (region.start.iter().zip(&region.stop))
            .zip(self.grid.axes.iter().zip(&first))
            .map(|((&a, &b), (axis, &f))| if a == b { 0 } else { axis.find(b - 1) - f + 1 })
            .collect();
        let mut chunks = Vec::new();
        for_each_index(&count, |i| chunks.push(i.iter().zip(&first).map(|(i, f)| i + f).collect::<Vec<u64>>()));

        let mut reads = stream::iter(chunks.into_iter().map(|coords| async move {
            let d = self.read_decoded(c, &coords).await;
            (coords, d)
        }))
        .buffer_unordered(CONCURRENCY);
        while let Some((coords, decoded)) = reads.next().await {
            let Some(d) = decoded? else { continue };
            let origin = self.grid.origin(&coords);
            let shape = self.grid.clipped(&coords);
            let lo: Vec<u64> = origin.iter().zip(&region.start).map(|(o, a)| *o.max(a)).collect();
            let hi: Vec<u64> =
                (origin.iter().zip(&shape)).zip(&region.stop).map(|((o, s), b)| (o + s).min(*b)).collect();
            let ext: Vec<u64> = lo.iter().zip(&hi).map(|(l, h)| h - l).collect();
            let src_at: u64 = lo.iter().zip(&origin).zip(&d.strides).map(|((l, o), s)| (l - o) * s).sum();
            let dst_at: u64 = lo.iter().zip(&region.start).zip(&out_strides).map(|((l, a), s)| (l - a) * s).sum();
            copy_box(
                &d.bytes,
                Place { at: src_at, strides: &d.strides },
                &mut out,
                Place { at: dst_at, strides: &out_strides },
                &ext,
                elem,
            )
            .map_err(|e| e.at(&format!("{} chunk {coords:?}", self.url)))?;
        }
        let shape = region.out_shape();
        let stride = c_strides(&shape);
        Ok(Chunk { bytes: out, shape, stride })
    }
}

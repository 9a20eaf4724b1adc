//! Opening Zarr v3 nodes and reading chunks and regions of arrays.
use super::codec::{c_strides, CodecChain, Sharding};
use super::dtype::DataType;
use super::error::{checked_bytes, err, Error, ErrorCode, Result};
use super::http::{ByteRange, HttpClient};
use super::locate::IndexFormat;
use super::metadata::{ArrayMetadata, Node};
use super::selection::{copy_box, for_each_index, Place, Region, Sel};
use super::source::{Config, Source};
use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use futures_util::stream::{self, StreamExt};
use serde_json::{Map, Value};

/// How many chunk reads a region read keeps in flight.
const CONCURRENCY: usize = 32;

/// An array chunk or region: little-endian elements, `stride` in elements per axis.
/// For a chunk at the array's edge `shape` is clipped while `stride` stays the full
/// chunk's, so `bytes` may hold more elements than `shape` covers.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub bytes: Vec<u8>,
    pub shape: Vec<u64>,
    pub stride: Vec<u64>,
}

pub enum Opened {
    Array(Box<ZarrArray>),
    Group { url: String, attributes: Map<String, Value> },
}

/// `https://h/a.zarr?sig=1` → (`https://h/a.zarr`, `?sig=1`): keys go before the query.
fn split_url(url: &str) -> (String, String) {
    let (base, query) = match url.find(['?', '#']) {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    (String::from(base.trim_end_matches('/')), String::from(query))
}

pub async fn open<C: HttpClient>(c: &C, url: &str, config: Config) -> Result<Opened> {
    let (base, query) = split_url(url);
    let meta_url = format!("{base}/zarr.json{query}");
    let source = Rc::new(Source::new(config));
    let text = source.read(c, &meta_url, ByteRange::Full).await?.ok_or_else(|| {
        Error::new(ErrorCode::NotFound, format!("{meta_url}: not found (no Zarr v3 array or group here)"))
    })?;
    match Node::parse(&text.bytes).map_err(|e| e.at(&meta_url))? {
        Node::Group { attributes } => Ok(Opened::Group { url: base, attributes }),
        Node::Array(meta) => {
            Ok(Opened::Array(Box::new(ZarrArray::new(base, query, meta, source).map_err(|e| e.at(&meta_url))?)))
        }
    }
}

pub struct ZarrArray {
    url: String,
    query: String,
    pub meta: ArrayMetadata,
    /// Sharding levels, outermost first, each with the shard shape it applies to.
    levels: Vec<(Sharding, Vec<u64>)>,
    /// The innermost (read) chunk shape and codecs.
    chunk_shape: Vec<u64>,
    chunk_codecs: CodecChain,
    source: Rc<Source>,
}

impl ZarrArray {
    fn new(url: String, query: String, meta: ArrayMetadata, source: Rc<Source>) -> Result<ZarrArray> {
        let mut levels = Vec::new();
        let mut shape = meta.chunk_shape.clone();
        let mut chain = meta.codecs.clone();
        while let CodecChain::Sharded(s) = chain {
            let s = *s;
            chain = s.inner.clone();
            let inner = s.chunk_shape.clone();
            levels.push((s, shape));
            shape = inner;
        }
        checked_bytes(&shape, meta.data_type.size() as u64)?;
        Ok(ZarrArray { url, query, meta, levels, chunk_shape: shape, chunk_codecs: chain, source })
    }

    pub fn url(&self) -> &str {
        &self.url
    }
    pub fn dtype(&self) -> DataType {
        self.meta.data_type
    }
    /// The inner (read) chunk shape.
    pub fn chunk_shape(&self) -> &[u64] {
        &self.chunk_shape
    }
    /// The shard shape, when sharded.
    pub fn shard_shape(&self) -> Option<&[u64]> {
        (!self.levels.is_empty()).then_some(&self.meta.chunk_shape[..])
    }
    pub fn source(&self) -> &Source {
        &self.source
    }
    /// Chunks per axis of the read-chunk grid.
    pub fn grid(&self) -> Vec<u64> {
        self.meta.shape.iter().zip(&self.chunk_shape).map(|(s, c)| s.div_ceil(*c)).collect()
    }

    /// The key URL of the storage object holding chunk (or shard) `coords` of the metadata grid.
    pub fn key_url(&self, coords: &[u64]) -> String {
        format!("{}/{}{}", self.url, self.meta.key_encoding.key(coords), self.query)
    }

    fn check_coords(&self, coords: &[u64]) -> Result<()> {
        let grid = self.grid();
        if coords.len() != grid.len() || coords.iter().zip(&grid).any(|(c, g)| c >= g) {
            return err(
                ErrorCode::InvalidSelection,
                format!("{}: chunk {coords:?} is outside the chunk grid {grid:?}", self.url),
            );
        }
        Ok(())
    }

    /// The decoded chunk at read-grid `coords`, `None` when it is absent (fill value).
    async fn read_decoded<C: HttpClient>(&self, c: &C, coords: &[u64]) -> Result<Option<super::codec::Decoded>> {
        let origin: Vec<u64> = coords.iter().zip(&self.chunk_shape).map(|(c, s)| c * s).collect();
        let outer: Vec<u64> = origin.iter().zip(&self.meta.chunk_shape).map(|(o, s)| o / s).collect();
        let url = self.key_url(&outer);
        let mut path: Vec<(&dyn IndexFormat, u64)> = Vec::with_capacity(self.levels.len());
        for (sharding, shard_shape) in &self.levels {
            let local: Vec<u64> =
                origin.iter().zip(shard_shape).zip(&sharding.chunk_shape).map(|((o, s), c)| (o % s) / c).collect();
            path.push((sharding as &dyn IndexFormat, sharding.position(&local)));
        }
        let Some(encoded) = self.source.read_chunk(c, &url, &path).await? else { return Ok(None) };
        let elem = self.meta.data_type.size();
        self.chunk_codecs.decode(encoded, &self.chunk_shape, elem).map(Some).map_err(|e| e.at(&url))
    }

    fn clipped(&self, coords: &[u64]) -> Vec<u64> {
        coords.iter().zip(&self.chunk_shape).zip(&self.meta.shape).map(|((c, s), n)| (*s).min(n - c * s)).collect()
    }

    /// One chunk of the read-chunk grid.
    pub async fn chunk<C: HttpClient>(&self, c: &C, coords: &[u64]) -> Result<Chunk> {
        self.check_coords(coords)?;
        let shape = self.clipped(coords);
        match self.read_decoded(c, coords).await? {
            Some(d) => Ok(Chunk { bytes: d.bytes, shape, stride: d.strides }),
            None => {
                let n = checked_bytes(&shape, 1)?;
                Ok(Chunk { bytes: self.meta.fill_value.repeat(n), stride: c_strides(&shape), shape })
            }
        }
    }

    /// A region: every chunk it touches is read concurrently and copied into place.
    pub async fn region<C: HttpClient>(&self, c: &C, sel: &[Sel]) -> Result<Chunk> {
        let region = Region::new(sel, &self.meta.shape).map_err(|e| e.at(&self.url))?;
        let extent = region.extent();
        let elem = self.meta.data_type.size();
        let n = checked_bytes(&extent, elem as u64)? / elem;
        let mut out = self.meta.fill_value.repeat(n);
        let out_strides = c_strides(&extent);

        let first: Vec<u64> = region.start.iter().zip(&self.chunk_shape).map(|(a, s)| a / s).collect();
        let count: Vec<u64> = (region.start.iter().zip(&region.stop))
            .zip(&self.chunk_shape)
            .map(|((a, b), s)| if a == b { 0 } else { (b - 1) / s - a / s + 1 })
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
            let origin: Vec<u64> = coords.iter().zip(&self.chunk_shape).map(|(c, s)| c * s).collect();
            let shape = self.clipped(&coords);
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
            .map_err(|e| e.at(&self.key_url(&coords)))?;
        }
        let shape = region.out_shape();
        let stride = c_strides(&shape);
        Ok(Chunk { bytes: out, shape, stride })
    }
}

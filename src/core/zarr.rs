//! The storage layout every Zarr flavour shares: a grid of storage objects named by a key
//! scheme, zero or more levels of sharding inside each, and a plain codec chain for the
//! innermost (read) chunk. Zarr v3, Zarr v2 and the draft sharding transformer only differ in
//! how their metadata spells these.
use super::array::{Layout, Located};
use super::codec::{CodecChain, Decoded, Sharding};
use super::dtype::DataType;
use super::error::Result;
use super::grid::Grid;
use super::locate::IndexFormat;
use super::metadata::KeyEncoding;
use alloc::rc::Rc;
use alloc::vec::Vec;

pub struct ZarrLayout {
    /// The grid of storage objects (shards when sharded).
    outer: Grid,
    keys: KeyEncoding,
    /// Sharding levels, outermost first; level k's inner chunks are level k+1's shards.
    levels: Vec<Rc<Sharding>>,
    /// The innermost chunks: what is read and decoded.
    read: Grid,
    codecs: CodecChain,
    dtype: DataType,
}

impl ZarrLayout {
    /// `codecs` applies to the chunks of `outer`; sharding codecs inside it are unwrapped into levels.
    pub fn new(outer: Grid, keys: KeyEncoding, codecs: CodecChain, dtype: DataType) -> Result<ZarrLayout> {
        let mut levels = Vec::new();
        let mut read = outer.clone();
        let mut chain = codecs;
        while let CodecChain::Sharded(s) = chain {
            read =
                Grid { axes: read.axes.iter().zip(&s.chunk_shape).map(|(a, &c)| a.split(c)).collect::<Result<_>>()? };
            chain = s.inner.clone();
            levels.push(Rc::new(*s));
        }
        if read.chunk_shape().is_some() {
            super::error::checked_bytes(&read.full(&alloc::vec![0; read.ndim()]), dtype.size() as u64)?;
        }
        Ok(ZarrLayout { outer, keys, levels, read, codecs: chain, dtype })
    }

    /// The read-chunk grid.
    pub fn read_grid(&self) -> &Grid {
        &self.read
    }

    /// The shard shape, when sharded on a regular grid.
    pub fn shard_shape(&self) -> Option<Vec<u64>> {
        if self.levels.is_empty() {
            None
        } else {
            self.outer.chunk_shape()
        }
    }
}

impl Layout for ZarrLayout {
    fn locate(&self, coords: &[u64]) -> Result<Located> {
        let origin = self.read.origin(coords);
        let outer = self.outer.find(&origin);
        let key = self.keys.key(&outer);
        let mut rel: Vec<u64> = origin.iter().zip(self.outer.origin(&outer)).map(|(a, b)| a - b).collect();
        let mut levels: Vec<(Rc<dyn IndexFormat>, u64)> = Vec::with_capacity(self.levels.len());
        for (depth, s) in self.levels.iter().enumerate() {
            // Shards of a rectilinear grid differ in shape, and so do their indexes.
            let s = match depth {
                0 if self.outer.chunk_shape().is_none() => Rc::new(s.for_shard(&self.outer.full(&outer))?),
                _ => s.clone(),
            };
            let local: Vec<u64> = rel.iter().zip(&s.chunk_shape).map(|(r, c)| r / c).collect();
            rel = rel.iter().zip(&s.chunk_shape).map(|(r, c)| r % c).collect();
            let position = s.position(&local);
            levels.push((s, position));
        }
        Ok(Located { key, levels })
    }

    fn decode(&self, coords: &[u64], bytes: Vec<u8>) -> Result<Decoded> {
        self.codecs.decode(bytes, &self.read.full(coords), self.dtype)
    }

    fn costly_decode(&self) -> bool {
        matches!(&self.codecs, CodecChain::Plain { bytes_codecs, .. } if !bytes_codecs.is_empty())
    }
}

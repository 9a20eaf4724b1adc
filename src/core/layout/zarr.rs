//! The storage layout every Zarr flavour shares: a grid of storage objects named by a key
//! scheme, zero or more levels of sharding inside each, and a plain codec chain for the
//! innermost (read) chunk. Zarr v3, Zarr v2 and the draft sharding transformer only differ in
//! how their metadata spells these.
use super::{Layout, Located};
use crate::core::codec::{Chain, Decoded, Decoders};
use crate::core::error::{checked_bytes, Result};
use crate::core::metadata::{DataType, Grid, KeyEncoding, Named};
use crate::core::shard::zarr::{Inner, Sharding};
use crate::core::shard::IndexFormat;
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
    chain: Chain,
}

impl ZarrLayout {
    /// `codecs` apply to the chunks of `outer`; a `sharding_indexed` among them is unwrapped
    /// into levels.
    pub fn new(outer: Grid, keys: KeyEncoding, codecs: &[Named], dtype: DataType) -> Result<ZarrLayout> {
        let mut levels = Vec::new();
        let mut read = outer.clone();
        // Codecs are checked against the first chunk; shards of other shapes re-derive their index.
        let first = outer.full(&alloc::vec![0; outer.ndim()]);
        let mut innermost: Vec<Named> = codecs.to_vec();
        let mut next = Sharding::of(codecs, &first)?;
        while let Some(s) = next {
            read =
                Grid { axes: read.axes.iter().zip(&s.chunk_shape).map(|(a, &c)| a.split(c)).collect::<Result<_>>()? };
            next = match &s.inner {
                Inner::Sharded(nested) => Some((**nested).clone()),
                Inner::Codecs(c) => {
                    innermost = c.clone();
                    None
                }
            };
            levels.push(Rc::new(s));
        }
        let chain = Chain::parse(&innermost, read.ndim(), dtype)?;
        if read.chunk_shape().is_some() {
            checked_bytes(&read.full(&alloc::vec![0; read.ndim()]), dtype.size() as u64)?;
        }
        Ok(ZarrLayout { outer, keys, levels, read, chain })
    }
}

impl Layout for ZarrLayout {
    fn grid(&self) -> &Grid {
        &self.read
    }

    fn shard_shape(&self) -> Option<Vec<u64>> {
        if self.levels.is_empty() {
            None
        } else {
            self.outer.chunk_shape()
        }
    }

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

    fn chunks_in_object(&self, coords: &[u64]) -> Option<u64> {
        if self.levels.is_empty() {
            return None; // the object is the chunk
        }
        let outer = self.outer.find(&self.read.origin(coords));
        let (lo, extent) = (self.outer.origin(&outer), self.outer.clipped(&outer));
        // Inner chunk boundaries fall on shard boundaries: count the chunks in the shard's span.
        self.read.axes.iter().zip(lo.iter().zip(&extent)).try_fold(1u64, |n, (axis, (&a, &e))| {
            let last = a.checked_add(e)?.checked_sub(1)?;
            n.checked_mul(axis.find(last) - axis.find(a) + 1)
        })
    }

    fn decode(&self, coords: &[u64], bytes: Vec<u8>, decoders: Option<&dyn Decoders>) -> Result<Decoded> {
        self.chain.decode(bytes, &self.read.full(coords), decoders)
    }

    fn decoders(&self) -> Vec<&'static str> {
        self.chain.decoders()
    }

    fn costly_decode(&self) -> bool {
        self.chain.costly()
    }
}

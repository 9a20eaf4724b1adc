//! Chunk grids: per axis either a regular chunk size or explicit chunk boundaries
//! (rectilinear grids, and the read grid of shards laid on a rectilinear grid).
use super::json::{named, shape_of};
use crate::core::error::{err, invalid, ErrorCode, Result, MAX_ALLOC};
use crate::core::json::Value;
use alloc::format;
use alloc::vec::Vec;

/// One axis of a chunk grid over `extent` elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Axis {
    Regular {
        chunk: u64,
        extent: u64,
    },
    /// Chunk `i` covers `[starts[i], starts[i + 1])`; the last boundary may lie past the extent.
    Explicit {
        starts: Vec<u64>,
        extent: u64,
    },
}

impl Axis {
    /// Explicit chunk sizes; they must cover `extent`. Chunks starting at or past the extent
    /// are dropped (writers may list more than needed).
    pub fn explicit(sizes: &[u64], extent: u64) -> Result<Axis> {
        let mut starts = Vec::new();
        let mut at = 0u64;
        for &s in sizes {
            if at >= extent && !starts.is_empty() {
                break;
            }
            if s == 0 {
                return err(ErrorCode::InvalidMetadata, "chunk sizes must be positive");
            }
            if starts.try_reserve(2).is_err() || starts.len() as u64 > MAX_ALLOC / 64 {
                return err(ErrorCode::TooLarge, "too many chunks along one axis");
            }
            starts.push(at);
            at = at.checked_add(s).ok_or_else(|| invalid("chunk sizes overflow"))?;
        }
        if at < extent {
            return err(ErrorCode::InvalidMetadata, format!("chunk sizes cover {at} elements, the axis has {extent}"));
        }
        starts.push(at);
        Ok(Axis::Explicit { starts, extent })
    }

    pub fn extent(&self) -> u64 {
        match self {
            Axis::Regular { extent, .. } | Axis::Explicit { extent, .. } => *extent,
        }
    }

    /// Number of chunks.
    pub fn count(&self) -> u64 {
        match self {
            Axis::Regular { chunk, extent } => extent.div_ceil(*chunk),
            Axis::Explicit { starts, extent } => {
                if *extent == 0 {
                    0
                } else {
                    starts.len() as u64 - 1
                }
            }
        }
    }

    /// First element of chunk `i` (`i < count()`).
    pub fn start(&self, i: u64) -> u64 {
        match self {
            Axis::Regular { chunk, .. } => i * chunk,
            Axis::Explicit { starts, .. } => starts.get(i as usize).copied().unwrap_or(u64::MAX),
        }
    }

    /// Size of chunk `i` as stored (not clipped to the extent).
    pub fn size(&self, i: u64) -> u64 {
        match self {
            Axis::Regular { chunk, .. } => *chunk,
            Axis::Explicit { starts, .. } => match (starts.get(i as usize), starts.get(i as usize + 1)) {
                (Some(a), Some(b)) => b - a,
                _ => 0,
            },
        }
    }

    /// Size of chunk `i` clipped to the extent.
    pub fn clipped(&self, i: u64) -> u64 {
        let a = self.start(i);
        self.size(i).min(self.extent().saturating_sub(a))
    }

    /// The chunk holding element `pos` (`pos < extent`).
    pub fn find(&self, pos: u64) -> u64 {
        match self {
            Axis::Regular { chunk, .. } => pos / chunk,
            Axis::Explicit { starts, .. } => match starts.binary_search(&pos) {
                Ok(i) => i as u64,
                Err(i) => i.saturating_sub(1) as u64,
            },
        }
    }

    /// The regular chunk size, if this axis has one.
    pub fn regular(&self) -> Option<u64> {
        match self {
            Axis::Regular { chunk, .. } => Some(*chunk),
            Axis::Explicit { .. } => None,
        }
    }

    /// Every chunk size, in order (for the API's view of an irregular grid).
    pub fn sizes(&self) -> Vec<u64> {
        (0..self.count()).map(|i| self.size(i)).collect()
    }

    /// Split every chunk of this axis into pieces of `inner` (which must divide each chunk).
    pub fn split(&self, inner: u64) -> Result<Axis> {
        match self {
            Axis::Regular { chunk, extent } if chunk % inner == 0 => {
                Ok(Axis::Regular { chunk: inner, extent: *extent })
            }
            Axis::Explicit { starts, extent } if starts.windows(2).all(|w| (w[1] - w[0]) % inner == 0) => {
                let mut sizes = Vec::new();
                for w in starts.windows(2) {
                    let n = (w[1] - w[0]) / inner;
                    if n > MAX_ALLOC / 64 || sizes.try_reserve(n as usize).is_err() {
                        return err(ErrorCode::TooLarge, "too many inner chunks along one axis");
                    }
                    sizes.extend(core::iter::repeat_n(inner, n as usize));
                }
                Axis::explicit(&sizes, *extent)
            }
            _ => err(ErrorCode::InvalidMetadata, format!("inner chunk size {inner} does not divide the outer chunks")),
        }
    }
}

/// A chunk grid over an array's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    pub axes: Vec<Axis>,
}

impl Grid {
    pub fn regular(chunk: &[u64], shape: &[u64]) -> Grid {
        Grid { axes: chunk.iter().zip(shape).map(|(&c, &e)| Axis::Regular { chunk: c, extent: e }).collect() }
    }

    pub fn ndim(&self) -> usize {
        self.axes.len()
    }
    pub fn shape(&self) -> Vec<u64> {
        self.axes.iter().map(Axis::extent).collect()
    }
    pub fn count(&self) -> Vec<u64> {
        self.axes.iter().map(Axis::count).collect()
    }
    /// The regular chunk shape, or `None` when some axis is irregular.
    pub fn chunk_shape(&self) -> Option<Vec<u64>> {
        self.axes.iter().map(Axis::regular).collect()
    }
    pub fn origin(&self, coords: &[u64]) -> Vec<u64> {
        self.axes.iter().zip(coords).map(|(a, &i)| a.start(i)).collect()
    }
    /// Shape of chunk `coords` as stored.
    pub fn full(&self, coords: &[u64]) -> Vec<u64> {
        self.axes.iter().zip(coords).map(|(a, &i)| a.size(i)).collect()
    }
    /// Shape of chunk `coords` clipped to the array.
    pub fn clipped(&self, coords: &[u64]) -> Vec<u64> {
        self.axes.iter().zip(coords).map(|(a, &i)| a.clipped(i)).collect()
    }
    /// Whether `coords` names a chunk of this grid.
    pub fn contains(&self, coords: &[u64]) -> bool {
        coords.len() == self.axes.len() && self.axes.iter().zip(coords).all(|(a, &i)| i < a.count())
    }
    /// The chunk holding element `pos`.
    pub fn find(&self, pos: &[u64]) -> Vec<u64> {
        self.axes.iter().zip(pos).map(|(a, &p)| a.find(p)).collect()
    }
}

/// `regular`, or `rectilinear` (zarr-extensions `chunk_shapes`, or MDIO's `chunkShape`): per
/// axis a chunk size, or a list of sizes and `[size, repeat]` runs.
pub fn parse(v: &Value, shape: &[u64]) -> Result<Grid> {
    let (name, conf) = named(v, "chunk_grid")?;
    let axes = match name {
        "regular" => {
            let chunk = shape_of(conf.and_then(|c| c.get("chunk_shape")), "chunk_shape", false)?;
            if chunk.len() != shape.len() {
                return Err(invalid("chunk_shape and shape have different lengths"));
            }
            return Ok(Grid::regular(&chunk, shape));
        }
        "rectilinear" => {
            let c = conf.ok_or_else(|| invalid("rectilinear grid needs a configuration"))?;
            match c.get("kind").and_then(Value::as_str) {
                None | Some("inline") => {}
                Some(k) => return err(ErrorCode::UnsupportedFormat, format!("unsupported rectilinear kind \"{k}\"")),
            }
            match c.get("chunk_shapes").or_else(|| c.get("chunkShape")).and_then(Value::as_array) {
                Some(a) => a,
                None => return Err(invalid("rectilinear grid needs chunk_shapes")),
            }
        }
        other => return err(ErrorCode::UnsupportedFormat, format!("unsupported chunk_grid \"{other}\"")),
    };
    if axes.len() != shape.len() {
        return Err(invalid("rectilinear chunk_shapes and shape have different lengths"));
    }
    let bad = || invalid("rectilinear chunk sizes must be positive integers or [size, count]");
    let mut out = Vec::new();
    for (spec, &extent) in axes.iter().zip(shape) {
        if let Some(chunk) = spec.as_u64() {
            if chunk == 0 {
                return Err(bad());
            }
            out.push(Axis::Regular { chunk, extent });
            continue;
        }
        let mut sizes = Vec::new();
        let mut covered = 0u64;
        for item in spec.as_array().ok_or_else(bad)? {
            let (size, count) = match item {
                Value::Array(p) if p.len() == 2 => (p[0].as_u64().ok_or_else(bad)?, p[1].as_u64().ok_or_else(bad)?),
                v => (v.as_u64().ok_or_else(bad)?, 1),
            };
            if size == 0 {
                return Err(bad());
            }
            // Runs past the extent add nothing but could be huge: stop expanding there.
            let needed = extent.saturating_sub(covered).div_ceil(size).max(1).min(count);
            if sizes.len() as u64 + needed > (1 << 24) {
                return err(ErrorCode::TooLarge, "too many chunks along one axis");
            }
            sizes.extend(core::iter::repeat_n(size, needed as usize));
            covered = covered.saturating_add(size.saturating_mul(count));
        }
        out.push(Axis::explicit(&sizes, extent)?);
    }
    Ok(Grid { axes: out })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_axis() {
        let a = Axis::explicit(&[10, 10, 10, 5, 5], 33).unwrap();
        assert_eq!(a.count(), 4);
        assert_eq!((a.start(3), a.size(3), a.clipped(3)), (30, 5, 3));
        assert_eq!([a.find(0), a.find(9), a.find(10), a.find(32)], [0, 0, 1, 3]);
        let invalid = |r: Result<Axis>, why: &str| {
            let e = r.unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidMetadata, "{e}");
            assert!(e.message.contains(why), "{why}: {e}");
        };
        invalid(Axis::explicit(&[10], 11), "chunk sizes cover 10 elements, the axis has 11");
        invalid(Axis::explicit(&[0, 10], 5), "chunk sizes must be positive");
        let s = Axis::explicit(&[4, 8], 12).unwrap().split(4).unwrap();
        assert_eq!(s.sizes(), [4, 4, 4]);
        invalid(Axis::explicit(&[4, 6], 10).unwrap().split(4), "inner chunk size 4 does not divide the outer chunks");
    }

    #[test]
    fn regular_axis() {
        let a = Axis::Regular { chunk: 16, extent: 100 };
        assert_eq!((a.count(), a.clipped(6), a.find(99)), (7, 4, 6));
        assert_eq!(Axis::Regular { chunk: 16, extent: 0 }.count(), 0);
    }
}

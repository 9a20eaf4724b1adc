//! Selections and read plans: which chunks a read touches, and which box of each.
use crate::core::error::{checked_bytes, err, too_large, ErrorCode, Result};
use crate::core::metadata::Grid;
use crate::core::nd::for_each_index;
use alloc::format;
use alloc::vec::Vec;

/// Chunks one read may touch at most (a whole-axis selection of a huge array is refused
/// before any work, not planned chunk by chunk).
pub const MAX_PIECES: u64 = 1 << 20;

/// One axis of a selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sel {
    /// The whole axis.
    All,
    /// One index; the axis is dropped from the result.
    Index(u64),
    /// Half-open `[start, stop)`.
    Range(u64, u64),
}

impl Sel {
    fn shown(self) -> alloc::string::String {
        match self {
            Sel::All => "all".into(),
            Sel::Index(i) => format!("index {i}"),
            Sel::Range(a, b) => format!("{a}..{b}"),
        }
    }
}

/// A selection normalised against a shape: per axis `[start, stop)` and whether it is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: Vec<u64>,
    pub stop: Vec<u64>,
    pub keep: Vec<bool>,
}

impl Region {
    pub fn new(sel: &[Sel], shape: &[u64]) -> Result<Region> {
        if sel.len() != shape.len() {
            return err(
                ErrorCode::InvalidSelection,
                format!("selection has {} axes, the array {}", sel.len(), shape.len()),
            );
        }
        let mut r = Region { start: Vec::new(), stop: Vec::new(), keep: Vec::new() };
        for (axis, (&s, &n)) in sel.iter().zip(shape).enumerate() {
            let (a, b, keep) = match s {
                Sel::All => (0, n, true),
                Sel::Index(i) if i < n => (i, i + 1, false),
                Sel::Range(a, b) if a <= b && b <= n => (a, b, true),
                _ => {
                    return err(
                        ErrorCode::InvalidSelection,
                        format!("selection {} is out of bounds for axis {axis} of length {n}", s.shown()),
                    )
                }
            };
            r.start.push(a);
            r.stop.push(b);
            r.keep.push(keep);
        }
        Ok(r)
    }

    pub fn extent(&self) -> Vec<u64> {
        self.start.iter().zip(&self.stop).map(|(a, b)| b - a).collect()
    }

    pub fn out_shape(&self) -> Vec<u64> {
        self.extent().into_iter().zip(&self.keep).filter(|(_, k)| **k).map(|(e, _)| e).collect()
    }
}

/// What a read asks for.
#[derive(Clone, Copy, Debug)]
pub enum Want<'a> {
    /// Read chunks by their grid coordinates, each on its own.
    Chunks(&'a [Vec<u64>]),
    /// A region, assembled from every chunk it touches.
    Region(&'a [Sel]),
}

/// One chunk of a [`Plan`]: its read-grid coordinates, its origin, and the box `[lo, hi)`
/// (array coordinates) wanted from it (for a chunk read on its own: the whole chunk).
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    pub coords: Vec<u64>,
    pub origin: Vec<u64>,
    pub lo: Vec<u64>,
    pub hi: Vec<u64>,
}

/// What a read needs: its chunks, and for a region its normalised selection.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub region: Option<Region>,
    pub pieces: Vec<Piece>,
}

impl Plan {
    /// Chunks read on their own. Coordinates outside the grid stay in the plan (the read
    /// answers them with an error of their own).
    pub fn chunks(grid: &Grid, list: &[Vec<u64>]) -> Result<Plan> {
        if list.len() as u64 > MAX_PIECES {
            return err(ErrorCode::TooLarge, format!("{} chunks in one read; at most {MAX_PIECES}", list.len()));
        }
        let pieces = list
            .iter()
            .map(|coords| {
                let ok = grid.contains(coords);
                let origin = if ok { grid.origin(coords) } else { Vec::new() };
                let hi =
                    if ok { origin.iter().zip(grid.clipped(coords)).map(|(o, s)| o + s).collect() } else { Vec::new() };
                Piece { coords: coords.clone(), lo: origin.clone(), origin, hi }
            })
            .collect();
        Ok(Plan { region: None, pieces })
    }

    /// The chunks the selection touches, each with the box of it that the selection covers.
    /// Its output (`elem` bytes per element, at most `max` bytes) and its chunk count are
    /// checked first.
    pub fn region(grid: &Grid, sel: &[Sel], elem: usize, max: usize) -> Result<Plan> {
        let region = Region::new(sel, &grid.shape())?;
        let n = region.extent().iter().try_fold(elem as u64, |a, &d| a.checked_mul(d)).unwrap_or(u64::MAX);
        if n > max as u64 {
            return Err(too_large("the selection's output", n, max as u64, "maxDecodedBytes"));
        }
        checked_bytes(&region.extent(), elem as u64)?;
        let first = grid.find(&region.start);
        let count: Vec<u64> = (region.start.iter().zip(&region.stop))
            .zip(grid.axes.iter().zip(&first))
            .map(|((&a, &b), (axis, &f))| if a == b { 0 } else { axis.find(b - 1) - f + 1 })
            .collect();
        let n = count.iter().try_fold(1u64, |n, &c| n.checked_mul(c)).unwrap_or(u64::MAX);
        if n > MAX_PIECES {
            return err(
                ErrorCode::TooLarge,
                format!("the selection touches {n} chunks; at most {MAX_PIECES} per read"),
            );
        }
        let mut pieces = Vec::new();
        for_each_index(&count, |i| {
            let coords: Vec<u64> = i.iter().zip(&first).map(|(i, f)| i + f).collect();
            let origin = grid.origin(&coords);
            let shape = grid.clipped(&coords);
            let lo = origin.iter().zip(&region.start).map(|(o, a)| *o.max(a)).collect();
            let hi = (origin.iter().zip(&shape)).zip(&region.stop).map(|((o, s), b)| (o + s).min(*b)).collect();
            pieces.push(Piece { coords, origin, lo, hi });
        });
        Ok(Plan { region: Some(region), pieces })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions() {
        let r = Region::new(&[Sel::Index(1), Sel::Range(1, 3), Sel::All], &[2, 4, 2]).unwrap();
        assert_eq!(r.out_shape(), [2, 2]);
        for (sel, shown) in [(Sel::Index(2), "index 2"), (Sel::Range(2, 1), "2..1")] {
            let e = Region::new(&[sel], &[2]).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidSelection, "{e}");
            assert_eq!(e.message, alloc::format!("selection {shown} is out of bounds for axis 0 of length 2"));
        }
    }

    #[test]
    fn huge_selections_are_refused_before_planning() {
        let grid = Grid::regular(&[1], &[1 << 62]);
        assert_eq!(Plan::region(&grid, &[Sel::All], 1, 1 << 29).unwrap_err().code, ErrorCode::TooLarge);
        assert_eq!(Plan::region(&grid, &[Sel::Range(0, 1 << 21)], 1, 1 << 29).unwrap_err().code, ErrorCode::TooLarge);
        assert_eq!(Plan::region(&grid, &[Sel::Range(0, 100)], 1, 99).unwrap_err().code, ErrorCode::TooLarge);
        let p = Plan::region(&Grid::regular(&[4], &[10]), &[Sel::Range(3, 9)], 1, 100).unwrap();
        assert_eq!(p.pieces.iter().map(|p| (p.lo[0], p.hi[0])).collect::<Vec<_>>(), [(3, 4), (4, 8), (8, 9)]);
    }
}

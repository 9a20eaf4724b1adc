//! Region selections and strided copies between chunks and outputs.
use super::error::{err, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

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
                        format!("selection {s:?} is out of bounds for axis {axis} of length {n}"),
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

/// Calls `f` with every index of `shape` in C order (once, with `[]`, for a 0-d shape).
pub fn for_each_index(shape: &[u64], mut f: impl FnMut(&[u64])) {
    if shape.contains(&0) {
        return;
    }
    let mut idx = alloc::vec![0u64; shape.len()];
    loop {
        f(&idx);
        let mut axis = shape.len();
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            idx[axis] += 1;
            if idx[axis] < shape[axis] {
                break;
            }
            idx[axis] = 0;
        }
    }
}

/// Where a box starts in a buffer (in elements) and the buffer's element strides.
#[derive(Clone, Copy, Debug)]
pub struct Strided<'a> {
    pub at: u64,
    pub strides: &'a [u64],
}

/// Copy the box `extent` of `elem`-byte elements from `src` at `from` into `dst` at `to`.
pub fn copy_box(src: &[u8], from: Strided, dst: &mut [u8], to: Strided, extent: &[u64], elem: usize) -> Result<()> {
    let (src_at, src_strides, dst_at, dst_strides) = (from.at, from.strides, to.at, to.strides);
    let n = extent.len();
    let (outer, last) = if n == 0 { (&[][..], 1) } else { (&extent[..n - 1], extent[n - 1]) };
    let (ss, ds) = if n == 0 { (1, 1) } else { (src_strides[n - 1], dst_strides[n - 1]) };
    let mut result = Ok(());
    for_each_index(outer, |idx| {
        if result.is_err() {
            return;
        }
        let s0 = src_at + idx.iter().zip(src_strides).map(|(i, s)| i * s).sum::<u64>();
        let d0 = dst_at + idx.iter().zip(dst_strides).map(|(i, s)| i * s).sum::<u64>();
        let (s0, d0) = (s0 as usize * elem, d0 as usize * elem);
        if ss == 1 && ds == 1 {
            let len = last as usize * elem;
            match (src.get(s0..s0 + len), dst.get_mut(d0..d0 + len)) {
                (Some(s), Some(d)) => d.copy_from_slice(s),
                _ => result = err(ErrorCode::CorruptChunk, "chunk is smaller than its shape"),
            }
        } else {
            for i in 0..last as usize {
                let s = s0 + i * ss as usize * elem;
                let d = d0 + i * ds as usize * elem;
                match (src.get(s..s + elem), dst.get_mut(d..d + elem)) {
                    (Some(s), Some(d)) => d.copy_from_slice(s),
                    _ => {
                        result = err(ErrorCode::CorruptChunk, "chunk is smaller than its shape");
                        return;
                    }
                }
            }
        }
    });
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_and_copy() {
        let r = Region::new(&[Sel::Index(1), Sel::Range(1, 3), Sel::All], &[2, 4, 2]).unwrap();
        assert_eq!(r.out_shape(), [2, 2]);
        assert!(Region::new(&[Sel::Index(2)], &[2]).is_err());
        assert!(Region::new(&[Sel::Range(2, 1)], &[2]).is_err());
        // Copy a transposed 2x3 source into a 2x3 C-order destination.
        let src = [0u8, 3, 1, 4, 2, 5];
        let mut dst = [9u8; 6];
        copy_box(&src, Strided { at: 0, strides: &[1, 2] }, &mut dst, Strided { at: 0, strides: &[3, 1] }, &[2, 3], 1)
            .unwrap();
        assert_eq!(dst, [0, 1, 2, 3, 4, 5]);
    }
}

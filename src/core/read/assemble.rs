//! Region assembly: the output of a region read, filled with the fill value, and each
//! chunk's box copied into place — from a decoded chunk, or as a box already cut elsewhere
//! (by a decoding worker).
use super::chunk::Chunk;
use super::plan::Plan;
use crate::core::codec::Decoded;
use crate::core::error::{checked_bytes, err, ErrorCode, Result};
use crate::core::metadata::dtype::HANDLE;
use crate::core::metadata::{DataType, FillValue};
use crate::core::nd::{c_strides, copy_box, Strided};
use alloc::format;
use alloc::vec::Vec;

pub struct Assembly {
    /// Made (the fill value, `n` elements) when the first chunk arrives, not before: a large
    /// region's memory is written while its first request is on its way, not before it leaves.
    /// (Empty until then.)
    out: Vec<u8>,
    fill: FillValue,
    n: usize,
    start: Vec<u64>,
    out_strides: Vec<u64>,
    /// The result's shape (integer-selected axes dropped).
    shape: Vec<u64>,
    elem: usize,
    /// Per piece of the plan: its origin and box `[lo, hi)`.
    boxes: Vec<(Vec<u64>, Vec<u64>, Vec<u64>)>,
    /// Variable-length elements: the contents their handles point into (the fill's first).
    heap: Option<Vec<u8>>,
}

impl Assembly {
    /// The output of a region plan, every element the fill value (its size was checked by
    /// the plan; the allocation itself, at the first chunk, is fallible).
    pub fn new(plan: &Plan, fill: &FillValue, dtype: DataType) -> Result<Assembly> {
        let Some(region) = &plan.region else {
            return err(ErrorCode::InvalidSelection, "only a region read is assembled");
        };
        let extent = region.extent();
        let elem = fill.bytes.len();
        let n = checked_bytes(&extent, elem as u64)? / elem.max(1);
        Ok(Assembly {
            out: Vec::new(),
            fill: fill.clone(),
            n,
            start: region.start.clone(),
            out_strides: c_strides(&extent),
            shape: region.out_shape(),
            elem,
            boxes: plan.pieces.iter().map(|p| (p.origin.clone(), p.lo.clone(), p.hi.clone())).collect(),
            heap: dtype.is_variable().then(|| fill.heap.clone()),
        })
    }

    /// Make the output, at the first chunk.
    fn make(&mut self) -> Result<()> {
        if self.out.is_empty() && self.n > 0 {
            self.out = self.fill.try_repeat(self.n)?;
        }
        Ok(())
    }

    fn piece(&self, i: usize) -> Result<&(Vec<u64>, Vec<u64>, Vec<u64>)> {
        self.boxes.get(i).ok_or_else(|| crate::core::Error::new(ErrorCode::InvalidSelection, format!("no piece {i}")))
    }

    fn dst(&self, lo: &[u64]) -> u64 {
        lo.iter().zip(&self.start).zip(&self.out_strides).map(|((l, a), s)| (l - a) * s).sum()
    }

    /// Copy piece `i`'s box out of its decoded chunk.
    pub fn put(&mut self, i: usize, d: &Decoded) -> Result<()> {
        let (origin, lo, hi) = self.piece(i)?.clone();
        let ext: Vec<u64> = lo.iter().zip(&hi).map(|(l, h)| h - l).collect();
        let src_at: u64 = lo.iter().zip(&origin).zip(&d.strides).map(|((l, o), s)| (l - o) * s).sum();
        self.make()?;
        let to = Strided { at: self.dst(&lo), strides: &self.out_strides };
        let from = Strided { at: src_at, strides: &d.strides };
        let Some(heap) = &mut self.heap else {
            return copy_box(&d.bytes, from, &mut self.out, to, &ext, self.elem);
        };
        // Handles point into the chunk's own heap: append it, and move them by where it lands.
        let base = heap.len();
        if base.checked_add(d.heap.len()).is_none_or(|end| end > u32::MAX as usize) {
            return err(ErrorCode::TooLarge, "the region's variable-length contents exceed 4 GiB");
        }
        heap.try_reserve(d.heap.len()).map_err(|_| crate::core::Error::new(ErrorCode::TooLarge, "cannot allocate"))?;
        heap.extend_from_slice(&d.heap);
        let mut moved = d.bytes.clone();
        for h in moved.chunks_exact_mut(HANDLE) {
            let at = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize + base;
            h[..4].copy_from_slice(&(at as u32).to_le_bytes());
        }
        copy_box(&moved, from, &mut self.out, to, &ext, self.elem)
    }

    /// Paste piece `i`'s box, cut and C-ordered elsewhere (see [`cut`]); fixed-size elements
    /// only (variable-length arrays decode where they are read).
    pub fn paste(&mut self, i: usize, bytes: &[u8]) -> Result<()> {
        if self.heap.is_some() {
            return err(ErrorCode::InvalidSelection, "variable-length elements are not pasted");
        }
        let (_, lo, hi) = self.piece(i)?.clone();
        let ext: Vec<u64> = lo.iter().zip(&hi).map(|(l, h)| h - l).collect();
        self.make()?;
        let to = Strided { at: self.dst(&lo), strides: &self.out_strides };
        copy_box(bytes, Strided { at: 0, strides: &c_strides(&ext) }, &mut self.out, to, &ext, self.elem)
    }

    /// The region (the fill value where no chunk was put: absent ones).
    pub fn finish(mut self) -> Result<Chunk> {
        self.make()?;
        let stride = c_strides(&self.shape);
        Ok(Chunk { bytes: self.out, shape: self.shape, stride, heap: self.heap.unwrap_or_default() })
    }
}

/// The box `[lo, hi)` (array coordinates) of a decoded chunk whose first element is at
/// `origin`, C-ordered: what a decoding worker sends back for [`Assembly::paste`].
pub fn cut(d: &Decoded, origin: &[u64], lo: &[u64], hi: &[u64], elem: usize) -> Result<Vec<u8>> {
    let ext: Vec<u64> = lo.iter().zip(hi).map(|(l, h)| h.saturating_sub(*l)).collect();
    let mut out = crate::core::error::zeroed(checked_bytes(&ext, elem as u64)?)?;
    let src_at: u64 = lo.iter().zip(origin).zip(&d.strides).map(|((l, o), s)| l.saturating_sub(*o) * s).sum();
    let to = Strided { at: 0, strides: &c_strides(&ext) };
    copy_box(&d.bytes, Strided { at: src_at, strides: &d.strides }, &mut out, to, &ext, elem)?;
    Ok(out)
}

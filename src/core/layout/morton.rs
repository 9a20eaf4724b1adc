//! Compressed Morton code: the chunk id of a grid position in a sharded volume.
use crate::core::error::{err, ErrorCode, Result};
use alloc::format;

/// Bits per axis (x, y, z): enough for every chunk index of the grid, no more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Morton {
    bits: [u32; 3],
}

impl Morton {
    /// For a grid of `grid` chunks along x, y, z.
    pub fn new(grid: [u64; 3]) -> Result<Morton> {
        let bits = grid.map(|g| 64 - g.saturating_sub(1).leading_zeros());
        if bits.iter().sum::<u32>() > 64 {
            return err(ErrorCode::InvalidMetadata, format!("a chunk grid of {} has more than 2^64 chunks", crate::core::error::List(&grid)));
        }
        Ok(Morton { bits })
    }

    /// Interleave the bits of `pos`: bit `b` of x, then of y, then of z, for b = 0, 1, ...,
    /// skipping an axis once its bits are used up.
    pub fn encode(&self, pos: [u64; 3]) -> u64 {
        let mut out = 0u64;
        let mut at = 0;
        let top = self.bits.iter().copied().max().unwrap_or(0);
        for b in 0..top {
            for (&p, &bits) in pos.iter().zip(&self.bits) {
                if b < bits {
                    out |= ((p >> b) & 1) << at;
                    at += 1;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunk ids that tensorstore 0.1.86 wrote (identity hash, preshift 0): a subset of
    /// `tests/fixtures/expected/precomputed/chunk_ids.json`, where `generate_precomputed.py` read
    /// each id from a minishard index and found its grid position from the chunk's contents
    /// (case `ident_u16`, grid [5, 4, 3]; x has one bit more than y and z). The full table is
    /// checked in `tests/precomputed.rs`.
    const WRITTEN: [([u64; 3], u64); 17] = [
        ([0, 0, 0], 0),
        ([1, 0, 0], 1),
        ([0, 1, 0], 2),
        ([0, 0, 1], 4),
        ([1, 1, 1], 7),
        ([2, 0, 0], 8),
        ([3, 1, 1], 15),
        ([0, 2, 0], 16),
        ([3, 2, 1], 29),
        ([0, 0, 2], 32),
        ([3, 2, 2], 57),
        ([4, 0, 0], 64),
        ([4, 1, 0], 66),
        ([4, 0, 1], 68),
        ([4, 2, 1], 84),
        ([4, 0, 2], 96),
        ([4, 2, 2], 112),
    ];

    #[test]
    fn ids_tensorstore_wrote() {
        let m = Morton::new([5, 4, 3]).unwrap();
        assert!(!WRITTEN.is_empty());
        for (pos, id) in WRITTEN {
            assert_eq!(m.encode(pos), id, "{pos:?}");
        }
    }

    #[test]
    fn edge_grids() {
        assert_eq!(Morton::new([1, 1, 1]).unwrap().encode([0, 0, 0]), 0);
        let m = Morton::new([1 << 30, 1 << 30, 1 << 4]).unwrap();
        assert_eq!(m.encode([(1 << 30) - 1, 0, 0]).count_ones(), 30);
        assert_eq!(m.encode([0, 0, 15]), 1 << 2 | 1 << 5 | 1 << 8 | 1 << 11);
        assert_eq!(m.encode([0, 1 << 29, 0]), 1 << 63);
        assert_eq!(Morton::new([1 << 30, 1 << 30, 1 << 10]).unwrap_err().code, ErrorCode::InvalidMetadata);
        assert_eq!(Morton::new([u64::MAX, 2, 1]).unwrap_err().code, ErrorCode::InvalidMetadata);
    }
}

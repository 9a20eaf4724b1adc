//! Neuroglancer `compressed_segmentation`: per-block lookup tables of uint32/uint64 labels
//! with 0–32-bit packed indices, one block grid per channel.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, corrupt_in, zeroed, Result};
use alloc::format;
use alloc::vec::Vec;

/// The codec, with the block size along x, y, z.
#[derive(Debug)]
pub struct CompressedSegmentation {
    pub block: [u64; 3],
}

impl Codec for CompressedSegmentation {
    fn name(&self) -> &str {
        "compressed_segmentation"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::image_bound(n)
    }
    /// `ctx.shape` is the chunk's `[x, y, z, channel]`; the output is `[channel][z][y][x]`.
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let (voxels, channels) = super::image_geometry(ctx.shape)?;
        let [nx, ny, nz] = [ctx.shape[0], ctx.shape[1], ctx.shape[2]];
        let bytes = decode(&data.bytes, ctx.dtype.size(), self.block, [nx, ny, nz], channels)?;
        Ok(Decoded::elements(bytes, alloc::vec![1, nx, nx * ny, voxels]))
    }
}

struct Words<'a>(&'a [u8]);

impl Words<'_> {
    fn len(&self) -> u64 {
        (self.0.len() / 4) as u64
    }
    fn at(&self, i: u64) -> Result<u32> {
        let i = usize::try_from(i).map_err(|_| corrupt_in("compressed_segmentation", "offset out of range"))?;
        match self.0.get(i.saturating_mul(4)..i.saturating_mul(4).saturating_add(4)) {
            Some(w) => Ok(u32::from_le_bytes([w[0], w[1], w[2], w[3]])),
            None => {
                Err(corrupt_in("compressed_segmentation", format!("word {i} lies past the end ({} words)", self.len())))
            }
        }
    }
}

/// Decode `channels` channels of a chunk of `shape` (x, y, z) with labels of `label` bytes
/// (4 or 8) into `[channel][z][y][x]` little-endian elements.
pub fn decode(input: &[u8], label: usize, block: [u64; 3], shape: [u64; 3], channels: u64) -> Result<Vec<u8>> {
    if !input.len().is_multiple_of(4) {
        return Err(corrupt_in(
            "compressed_segmentation",
            format!("{} bytes is not a whole number of 32-bit words", input.len()),
        ));
    }
    let [nx, ny, nz] = shape;
    let mut out = zeroed(checked_bytes(&[channels, nz, ny, nx], label as u64)?)?;
    let all = Words(input);
    let voxels = nx * ny * nz; // bounded by checked_bytes above
    for c in 0..channels {
        let start = all.at(c)?;
        if u64::from(start) > all.len() {
            return Err(corrupt_in(
                "compressed_segmentation",
                format!("channel {c} starts at word {start}, past the end ({} words)", all.len()),
            ));
        }
        let chan = Words(&input[start as usize * 4..]);
        let at = (c * voxels) as usize * label;
        decode_channel(&chan, label, block, shape, &mut out[at..at + voxels as usize * label])?;
    }
    Ok(out)
}

fn decode_channel(w: &Words, label: usize, block: [u64; 3], shape: [u64; 3], out: &mut [u8]) -> Result<()> {
    let [bx, by, bz] = block;
    let [nx, ny, nz] = shape;
    let grid = [nx.div_ceil(bx), ny.div_ceil(by), nz.div_ceil(bz)];
    let headers = grid.iter().try_fold(2u64, |a, &g| a.checked_mul(g));
    if headers.is_none_or(|h| h > w.len()) {
        return Err(corrupt_in(
            "compressed_segmentation",
            format!("{} blocks need more headers than the {} words present", crate::core::error::List(&grid), w.len()),
        ));
    }
    let volume = bx
        .checked_mul(by)
        .and_then(|v| v.checked_mul(bz))
        .ok_or_else(|| corrupt_in("compressed_segmentation", "block size overflows"))?;
    let table_bytes = |off: u64| w.0.len() as u64 - off * 4;
    for gz in 0..grid[2] {
        for gy in 0..grid[1] {
            for gx in 0..grid[0] {
                let h = 2 * (gx + grid[0] * (gy + grid[1] * gz));
                let (lo, values) = (w.at(h)?, u64::from(w.at(h + 1)?));
                let (table, bits) = (u64::from(lo & 0xff_ffff), lo >> 24);
                let here = |m: &str| corrupt_in("compressed_segmentation", format!("block ({gx}, {gy}, {gz}): {m}"));
                if !matches!(bits, 0 | 1 | 2 | 4 | 8 | 16 | 32) {
                    return Err(here(&format!("{bits} bits per value")));
                }
                if table > w.len() || values > w.len() {
                    return Err(here("offset past the end"));
                }
                let need = u64::from(bits).checked_mul(volume).map(|b| b.div_ceil(32));
                if need.is_none_or(|n| n > w.len() - values) {
                    return Err(here("encoded values run past the end"));
                }
                let table_len = table_bytes(table) / label as u64;
                let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
                let origin = [gx * bx, gy * by, gz * bz];
                let ext = [bx.min(nx - origin[0]), by.min(ny - origin[1]), bz.min(nz - origin[2])];
                for z in 0..ext[2] {
                    for y in 0..ext[1] {
                        let row = ((origin[2] + z) * ny + origin[1] + y) * nx + origin[0];
                        for x in 0..ext[0] {
                            let index = if bits == 0 {
                                0
                            } else {
                                let bit = (x + bx * (y + by * z)) * u64::from(bits);
                                (w.at(values + bit / 32)? >> (bit % 32)) & mask
                            };
                            if u64::from(index) >= table_len {
                                return Err(here(&format!("index {index} outside its {table_len}-entry table")));
                            }
                            let src = (table * 4 + u64::from(index) * label as u64) as usize;
                            let dst = (row + x) as usize * label;
                            out[dst..dst + label].copy_from_slice(&w.0[src..src + label]);
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::ErrorCode;
    use alloc::vec;

    fn words(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// One channel, a 3x2x1 chunk in 2x2x1 blocks: block 0 two labels (1 bit), block 1 one label
    /// (0 bits, a clipped 1x2x1 block).
    fn sample() -> Vec<u32> {
        vec![
            1, // channel 0 starts at word 1
            // headers (offsets relative to the channel start)
            5 | 1 << 24,
            4, // block 0: table at 5, 1 bit, values at 4
            7,
            7,      // block 1: table at 7, 0 bits
            0b0110, // block 0 values: (0,0)=0 (1,0)=1 (0,1)=1 (1,1)=0
            10,
            20, // block 0 table
            30, // block 1 table
        ]
    }

    #[test]
    fn decodes_uint32() {
        let out = decode(&words(&sample()), 4, [2, 2, 1], [3, 2, 1], 1).unwrap();
        let got: Vec<u32> = out.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got, [10, 20, 30, 20, 10, 30]);
    }

    #[test]
    fn uint64_labels() {
        // One 1x1x1 block, 0 bits, table holds one uint64 label.
        let w = words(&[1, 2, 2, 0xdead_beef, 0x1234_5678]);
        assert_eq!(decode(&w, 8, [1, 1, 1], [1, 1, 1], 1).unwrap(), 0x1234_5678_dead_beefu64.to_le_bytes());
        assert_eq!(decode(&w, 8, [1, 1, 1], [1, 1, 1], 2).unwrap_err().code, ErrorCode::CorruptChunk);
    }

    #[test]
    fn corrupt_input_is_an_error() {
        let good = sample();
        let code = |w: &[u32], shape| decode(&words(w), 4, [2, 2, 1], shape, 1).unwrap_err().code;
        for (i, v) in [(0, 99), (1, 5 | 3 << 24), (1, 99), (2, 99), (3, 8)] {
            let mut w = good.clone();
            w[i] = v;
            assert_eq!(code(&w, [3, 2, 1]), ErrorCode::CorruptChunk, "word {i} = {v}");
        }
        assert_eq!(code(&good[..3], [3, 2, 1]), ErrorCode::CorruptChunk, "headers cut short");
        assert_eq!(code(&good, [30, 2, 1]), ErrorCode::CorruptChunk, "more blocks than headers");
        assert_eq!(decode(&[1, 2, 3], 4, [2, 2, 1], [3, 2, 1], 1).unwrap_err().code, ErrorCode::CorruptChunk);
        let e = decode(&words(&good), 4, [u64::MAX, 2, 1], [3, 2, 1], 1).unwrap_err();
        assert_eq!(e.code, ErrorCode::CorruptChunk, "{e}");
        assert!(e.message.contains("block size overflows"), "{e}");
        assert_eq!(decode(&[], 4, [2, 2, 1], [0, 0, 0], 1).unwrap_err().code, ErrorCode::CorruptChunk);
    }
}

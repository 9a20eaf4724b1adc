//! Neuroglancer precomputed `compresso` chunks (seung-lab's compresso, format versions 0 and
//! 1): segment boundaries as a bit field in windows of `xstep·ystep·zstep` voxels (run-length
//! coded), one label per connected component of the non-boundary voxels (4-connected per z
//! slice, or 6-connected), and instructions for the boundary voxels. A decoder module (few
//! arrays are segmentations): `decode(stream, [width, sx, sy, sz])` → the `[z][y][x]` labels,
//! `width` bytes each, little-endian.
//!
//! Ported from the published format (`compresso.hpp` and its `cc3d.hpp`): the components are
//! numbered in the order of their first voxel (x fastest), per slice for connectivity 4 — what
//! cc3d's two-pass labelling gives — so no union-find order needs reproducing.
#![forbid(unsafe_code)]
use abi::{count, Failure};

abi::export_decoder!(decode);

/// The module's entry: `args` are the label width in bytes and the chunk's x, y, z sizes.
pub fn decode(data: &[u8], args: &[f64]) -> Result<Vec<u8>, Failure> {
    let width = count(args, 0, "width")? as usize;
    let shape = [count(args, 1, "sx")?, count(args, 2, "sy")?, count(args, 3, "sz")?];
    // The host checked the chunk's size against its limits; the labels (8 bytes a voxel) are
    // the largest allocation here.
    if shape.iter().try_fold(8u64, |n, &s| n.checked_mul(s)).is_none_or(|n| n > 1 << 31) {
        return Err(Failure::too_large("a chunk of more than 2^28 voxels"));
    }
    labels(data, width, shape)
}

/// `n` copies of `v`, or a failure when they cannot be allocated.
fn zeros<T: Clone>(n: usize, v: T) -> Result<Vec<T>, Failure> {
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| Failure::too_large(format!("cannot allocate {n} values")))?;
    out.resize(n, v);
    Ok(out)
}

const HEADER: usize = 36;

/// A little-endian unsigned integer of `width` bytes at `at`.
fn word(b: &[u8], at: usize, width: usize) -> Result<u64, Failure> {
    let s = b
        .get(at..at.checked_add(width).ok_or_else(|| Failure::corrupt("offset overflows"))?)
        .ok_or_else(|| Failure::corrupt("truncated stream"))?;
    Ok(s.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
}

struct Header {
    version: u8,
    width: usize,
    sx: usize,
    sy: usize,
    sz: usize,
    steps: [usize; 3],
    id_size: usize,
    value_size: usize,
    location_size: usize,
    connectivity: u8,
}

impl Header {
    fn parse(b: &[u8]) -> Result<Header, Failure> {
        if b.len() < HEADER || &b[..4] != b"cpso" {
            return Err(Failure::corrupt("not a compresso stream"));
        }
        let n = |at, w| word(b, at, w);
        let h = Header {
            version: b[4],
            width: b[5] as usize,
            sx: n(6, 2)? as usize,
            sy: n(8, 2)? as usize,
            sz: n(10, 2)? as usize,
            steps: [b[12] as usize, b[13] as usize, b[14] as usize],
            id_size: usize::try_from(n(15, 8)?).map_err(|_| Failure::corrupt("id_size overflows"))?,
            value_size: n(23, 4)? as usize,
            location_size: usize::try_from(n(27, 8)?)
                .map_err(|_| Failure::corrupt("location_size overflows"))?,
            connectivity: b[35],
        };
        if h.version > 1 {
            return Err(Failure::corrupt(format!("format version {} (0 and 1 are read)", h.version)));
        }
        if ![1, 2, 4, 8].contains(&h.width) || ![4, 6].contains(&h.connectivity) {
            return Err(Failure::corrupt("invalid data width or connectivity"));
        }
        let window = h.steps.iter().product::<usize>();
        if window == 0 || window > 64 {
            return Err(Failure::corrupt("invalid window steps"));
        }
        Ok(h)
    }

    /// Bytes of one window value: the smallest unsigned type holding `xstep·ystep·zstep` bits.
    fn window_width(&self) -> usize {
        match self.steps.iter().product::<usize>() {
            0..=8 => 1,
            9..=16 => 2,
            17..=32 => 4,
            _ => 8,
        }
    }

    /// Bytes of a z-index entry (format version 1): the smallest type holding `2·sx·sy`.
    fn index_width(&self) -> usize {
        let worst = 2 * self.sx * self.sy;
        if worst < u8::MAX as usize {
            1
        } else if worst < u16::MAX as usize {
            2
        } else if worst < u32::MAX as usize {
            4
        } else {
            8
        }
    }
}

/// Components of the non-boundary voxels (`false`), numbered from 1 in the order of their
/// first voxel; boundary voxels get 0. Connected in x and y (4-connectivity: each z slice on
/// its own), or also in z (6-connectivity).
fn components(boundary: &[bool], sx: usize, sy: usize, six: bool) -> Result<Vec<u32>, Failure> {
    let n = boundary.len();
    let mut parent: Vec<u32> = zeros(n, 0)?;
    parent.iter_mut().enumerate().for_each(|(k, p)| *p = k as u32);
    fn root(p: &mut [u32], mut i: u32) -> u32 {
        while p[i as usize] != i {
            let up = p[p[i as usize] as usize];
            p[i as usize] = up;
            i = up;
        }
        i
    }
    let sxy = sx * sy;
    for i in 0..n {
        if boundary[i] {
            continue;
        }
        let (x, y, z) = (i % sx, (i / sx) % sy, i / sxy);
        let join = |j: usize, p: &mut Vec<u32>| {
            if !boundary[j] {
                let (a, b) = (root(p, i as u32), root(p, j as u32));
                // The smaller index stays the root: the earliest voxel of the component.
                let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                p[hi as usize] = lo;
            }
        };
        if x > 0 {
            join(i - 1, &mut parent);
        }
        if y > 0 {
            join(i - sx, &mut parent);
        }
        if six && z > 0 {
            join(i - sxy, &mut parent);
        }
    }
    // Number components by first voxel: per slice (counting on) for 4-connectivity, once for 6.
    let mut label = zeros(n, 0u32)?;
    let mut next = 0u32;
    for i in 0..n {
        if boundary[i] {
            continue;
        }
        let r = root(&mut parent, i as u32) as usize;
        if r == i {
            next = next.checked_add(1).ok_or_else(|| Failure::corrupt("too many components"))?;
            label[i] = next;
        } else {
            label[i] = label[r];
        }
    }
    Ok(label)
}

/// Decode a stream of labels `width` bytes wide into `[z][y][x]` little-endian values.
fn labels(b: &[u8], width: usize, shape: [u64; 3]) -> Result<Vec<u8>, Failure> {
    let h = Header::parse(b)?;
    let [sx, sy, sz] = [h.sx, h.sy, h.sz];
    if [sx as u64, sy as u64, sz as u64] != shape {
        return Err(Failure::corrupt(format!("a {sx}x{sy}x{sz} stream for a {}x{}x{} chunk", shape[0], shape[1], shape[2])));
    }
    if h.width != width {
        return Err(Failure::corrupt(format!("{}-byte labels for a {width}-byte data type", h.width)));
    }
    let voxels = sx * sy * sz;
    let mut out = zeros(voxels.checked_mul(width).ok_or_else(|| Failure::too_large("a chunk too large"))?, 0u8)?;
    if voxels == 0 {
        return Ok(out);
    }
    let ww = h.window_width();
    let iw = h.index_width();
    let [xs, ys, zs] = h.steps;
    let (nx, ny, nz) = (sx.div_ceil(xs), sy.div_ceil(ys), sz.div_ceil(zs));
    let nblocks = nx * ny * nz;
    // The sections, each bounded by the stream's own length.
    let len = |count: usize, w: usize| {
        count
            .checked_mul(w)
            .filter(|&n| n <= b.len())
            .ok_or_else(|| Failure::corrupt("a section overflows the stream"))
    };
    let ids_at = HEADER;
    let values_at = ids_at + len(h.id_size, width)?;
    let locations_at =
        values_at.checked_add(len(h.value_size, ww)?).ok_or_else(|| Failure::corrupt("overflow"))?;
    let windows_at =
        locations_at.checked_add(len(h.location_size, width)?).ok_or_else(|| Failure::corrupt("overflow"))?;
    let index_len = if h.version == 1 { 2 * sz * iw } else { 0 };
    let windows_end = b
        .len()
        .checked_sub(index_len)
        .filter(|&e| e >= windows_at)
        .ok_or_else(|| Failure::corrupt("truncated stream"))?;
    let n_windows = (windows_end - windows_at) / ww;

    let values: Vec<u64> = (0..h.value_size).map(|k| word(b, values_at + k * ww, ww)).collect::<Result<_, Failure>>()?;
    // Run-length decoded windows: odd words skip (value >> 1) blocks of zero.
    let mut windows = zeros(nblocks, 0u64)?;
    let mut at = 0usize;
    for k in 0..n_windows {
        let w = word(b, windows_at + k * ww, ww)?;
        if w & 1 == 1 {
            at = at.saturating_add((w >> 1) as usize);
        } else {
            *windows.get_mut(at).ok_or_else(|| Failure::corrupt("windows run past the volume"))? = w >> 1;
            at += 1;
        }
    }
    let mut boundary = zeros(voxels, false)?;
    if !values.is_empty() {
        for z in 0..sz {
            for y in 0..sy {
                for x in 0..sx {
                    let block = x / xs + nx * (y / ys) + nx * ny * (z / zs);
                    let offset = x % xs + xs * (y % ys) + xs * ys * (z % zs);
                    let v = values
                        .get(windows[block] as usize)
                        .ok_or_else(|| Failure::corrupt("a window names no value"))?;
                    boundary[x + sx * (y + sy * z)] = (v >> offset) & 1 == 1;
                }
            }
        }
    }
    let six = h.connectivity == 6;
    let comp = components(&boundary, sx, sy, six)?;
    // Numbered in order of first voxel over the whole chunk: with 4-connectivity each slice's
    // components count on from the previous slices', as the encoder numbered them.
    let id = |k: u32| -> Result<u64, Failure> {
        match k as usize {
            0 => Ok(0),
            k if k > h.id_size => Err(Failure::corrupt("a component has no label")),
            k => word(b, ids_at + (k - 1) * width, width),
        }
    };
    let mut labels: Vec<u64> = comp.iter().map(|&c| id(c)).collect::<Result<_, Failure>>()?;
    // Boundary voxels: from a non-boundary neighbour, or by the stored instructions.
    let loc = |k: usize| -> Result<u64, Failure> {
        if k >= h.location_size {
            return Err(Failure::corrupt("instructions run out"));
        }
        word(b, locations_at + k * width, width)
    };
    let mut index = 0usize;
    let sxy = sx * sy;
    for z in 0..sz {
        for y in 0..sy {
            for x in 0..sx {
                let i = x + sx * y + sxy * z;
                if !boundary[i] {
                    continue;
                }
                labels[i] = if x > 0 && !boundary[i - 1] {
                    labels[i - 1]
                } else if y > 0 && !boundary[i - sx] {
                    labels[i - sx]
                } else if six && z > 0 && !boundary[i - sxy] {
                    labels[i - sxy]
                } else {
                    let code = loc(index)?;
                    index += 1;
                    let from = |j: Option<usize>| {
                        j.and_then(|j| labels.get(j).copied())
                            .ok_or_else(|| Failure::corrupt("an instruction points out of the chunk"))
                    };
                    match code {
                        0 if x > 0 => from(Some(i - 1))?,
                        1 if x + 1 < sx => from(Some(i + 1))?,
                        2 if y > 0 => from(Some(i - sx))?,
                        3 if y + 1 < sy => from(Some(i + sx))?,
                        4 if z > 0 => from(Some(i - sxy))?,
                        5 => from(i.checked_add(sxy))?,
                        6 => {
                            let v = loc(index)?;
                            index += 1;
                            v
                        }
                        0..=4 => return Err(Failure::corrupt("an instruction points out of the chunk")),
                        c => c - 7,
                    }
                };
            }
        }
    }
    for (o, l) in out.chunks_exact_mut(width).zip(&labels) {
        o.copy_from_slice(&l.to_le_bytes()[..width]);
    }
    Ok(out)
}


//! N-dimensional index arithmetic shared by codecs and the read path: C-order strides, index
//! iteration and strided box copies. Imports `error` only.
use super::error::{err, ErrorCode, Result};
use alloc::vec::Vec;

/// C-order (row-major) element strides of `shape`.
pub fn c_strides(shape: &[u64]) -> Vec<u64> {
    let mut s = alloc::vec![1u64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1].saturating_mul(shape[i + 1]);
    }
    s
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

/// The positions `0..n` in the order `less` sorts them, stable: the core's one sort (each
/// monomorphised `sort_by` costs 5–9 KB of wasm; this one is compiled once). A merge of the
/// input's ascending runs: what arrives sorted (coalesced spans, most reference files, zip
/// directories) costs one pass.
pub fn order(n: usize, less: &dyn Fn(usize, usize) -> bool) -> Vec<usize> {
    let mut a: Vec<usize> = (0..n).collect();
    // Where each run starts (a run does not descend), then `n`.
    let mut runs: Vec<usize> = alloc::vec![0];
    runs.extend((1..n).filter(|&i| less(i, i - 1)));
    runs.push(n);
    if runs.len() <= 2 {
        return a;
    }
    let mut b: Vec<usize> = alloc::vec![0; n];
    while runs.len() > 2 {
        let mut merged = alloc::vec![0];
        let k = runs.len() - 1;
        let mut r = 0;
        while r < k {
            let (lo, mid) = (runs[r], runs[r + 1]);
            let hi = if r + 2 <= k { runs[r + 2] } else { mid };
            let (mut i, mut j, mut o) = (lo, mid, lo);
            while i < mid && j < hi {
                // Ties take the left run first: stable.
                if less(a[j], a[i]) {
                    b[o] = a[j];
                    j += 1;
                } else {
                    b[o] = a[i];
                    i += 1;
                }
                o += 1;
            }
            b[o..o + mid - i].copy_from_slice(&a[i..mid]);
            o += mid - i;
            b[o..o + hi - j].copy_from_slice(&a[j..hi]);
            merged.push(hi);
            r += 2;
        }
        core::mem::swap(&mut a, &mut b);
        runs = merged;
    }
    a
}

/// `items` in the order [`order`] gives for `less` on their positions.
pub fn sorted<T>(items: Vec<T>, less: &dyn Fn(usize, usize) -> bool) -> Vec<T> {
    let by = order(items.len(), less);
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    by.into_iter().filter_map(|i| slots[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_copy() {
        // Copy a transposed 2x3 source into a 2x3 C-order destination.
        let src = [0u8, 3, 1, 4, 2, 5];
        let mut dst = [9u8; 6];
        let (from, to) = (Strided { at: 0, strides: &[1, 2] }, Strided { at: 0, strides: &[3, 1] });
        copy_box(&src, from, &mut dst, to, &[2, 3], 1).unwrap();
        assert_eq!(dst, [0, 1, 2, 3, 4, 5]);
        assert_eq!(c_strides(&[2, 3, 4]), [12, 4, 1]);
        let mut seen = alloc::vec::Vec::new();
        for_each_index(&[2, 2], |i| seen.push(i.to_vec()));
        assert_eq!(seen, [[0, 0], [0, 1], [1, 0], [1, 1]]);
    }

    #[test]
    fn order_is_a_stable_sort() {
        let keys = [5u8, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5];
        let by = order(keys.len(), &|a, b| keys[a] < keys[b]);
        assert_eq!(by, [1, 3, 6, 9, 2, 0, 4, 8, 10, 7, 5]);
        for n in 0..40 {
            let v: Vec<u64> = (0..n).map(|i| (i * 7919 + 13) % 17).collect();
            let got: Vec<u64> = sorted(v.clone(), &|a, b| v[a] < v[b]);
            let mut want = v.clone();
            want.sort();
            assert_eq!(got, want, "{n}");
        }
        // Runs of every kind (sorted, reversed, sawtooth, equal keys): the positions std's
        // stable sort gives.
        let mut seed = 1u64;
        for n in [0usize, 1, 2, 3, 10, 257, 1000] {
            for kind in 0..5 {
                let keys: Vec<u64> = (0..n as u64)
                    .map(|i| match kind {
                        0 => i,
                        1 => n as u64 - i,
                        2 => i % 7,
                        3 => 4,
                        _ => {
                            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                            (seed >> 33) % 50
                        }
                    })
                    .collect();
                let mut want: Vec<usize> = (0..n).collect();
                want.sort_by_key(|&i| keys[i]);
                assert_eq!(order(n, &|a, b| keys[a] < keys[b]), want, "n {n}, kind {kind}");
            }
        }
    }
}

/// Where the item wanted is among `n` sorted items, `cmp(i)` comparing the i-th with it; a
/// failure of `cmp` (an item that does not read) ends the search.
pub fn search<E>(n: usize, cmp: &dyn Fn(usize) -> core::result::Result<core::cmp::Ordering, E>) -> core::result::Result<Option<usize>, E> {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match cmp(mid)? {
            core::cmp::Ordering::Less => lo = mid + 1,
            core::cmp::Ordering::Greater => hi = mid,
            core::cmp::Ordering::Equal => return Ok(Some(mid)),
        }
    }
    Ok(None)
}

/// Where `key` is among `n` sorted keys, `at(i)` the i-th.
pub fn find_sorted<'k>(n: usize, at: &dyn Fn(usize) -> &'k str, key: &str) -> Option<usize> {
    search::<core::convert::Infallible>(n, &|i| Ok(at(i).cmp(key))).unwrap_or_else(|never| match never {})
}

//! Byte unshuffle (c-blosc's `unshuffle`): a block of `n` whole elements is stored as byte 0 of
//! every element, then byte 1 of every element, ...; the `len % typesize` trailing bytes that do
//! not make a whole element are stored as they are. (Also numcodecs' `Shuffle` filter: the same
//! layout over a whole chunk.)

/// Undo the byte shuffle of one block: `src` and `dst` have the block's length.
#[inline(never)]
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let len = src.len().min(dst.len());
    let n = len / typesize.max(1);
    if typesize <= 1 || n == 0 {
        dst[..len].copy_from_slice(&src[..len]);
        return;
    }
    let whole = n * typesize;
    let (body, tail) = dst[..len].split_at_mut(whole);
    tail.copy_from_slice(&src[whole..len]);
    match typesize {
        2 => fixed::<2>(&src[..whole], body, n),
        4 => fixed::<4>(&src[..whole], body, n),
        8 => fixed::<8>(&src[..whole], body, n),
        _ => {
            for (j, column) in src[..whole].chunks_exact(n).enumerate() {
                for (d, &b) in body[j..].iter_mut().step_by(typesize).zip(column) {
                    *d = b;
                }
            }
        }
    }
}

/// The common element sizes, written element by element (`n` >= 1, `body.len() == n * T`).
fn fixed<const T: usize>(src: &[u8], body: &mut [u8], n: usize) {
    let mut columns: [&[u8]; T] = [&[]; T];
    for (c, column) in columns.iter_mut().zip(src.chunks_exact(n)) {
        *c = column;
    }
    for (i, element) in body.chunks_exact_mut(T).enumerate() {
        for (d, column) in element.iter_mut().zip(columns) {
            if let Some(&b) = column.get(i) {
                *d = b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unshuffles_whole_elements_and_keeps_the_tail() {
        // Three u16 elements 0x0201, 0x0403, 0x0605 shuffled: low bytes, then high bytes.
        let src = [1, 3, 5, 2, 4, 6];
        let mut dst = [0u8; 6];
        unshuffle(2, &src, &mut dst);
        assert_eq!(dst, [1, 2, 3, 4, 5, 6]);
        // typesize 3, two elements and two tail bytes stored as is.
        let src = [10, 20, 11, 21, 12, 22, 98, 99];
        let mut dst = [0u8; 8];
        unshuffle(3, &src, &mut dst);
        assert_eq!(dst, [10, 11, 12, 20, 21, 22, 98, 99]);
        // Fewer bytes than one element: copied.
        let mut dst = [0u8; 3];
        unshuffle(4, &[7, 8, 9], &mut dst);
        assert_eq!(dst, [7, 8, 9]);
    }

    #[test]
    fn fixed_sizes_match_the_generic_path() {
        for ts in [2usize, 4, 8] {
            let n = 37;
            let src: alloc::vec::Vec<u8> = (0..n * ts + ts - 1).map(|i| (i * 7 + 3) as u8).collect();
            let mut fast = alloc::vec![0u8; src.len()];
            unshuffle(ts, &src, &mut fast);
            for i in 0..n {
                for j in 0..ts {
                    assert_eq!(fast[i * ts + j], src[j * n + i], "ts {ts} element {i} byte {j}");
                }
            }
            assert_eq!(fast[n * ts..], src[n * ts..]);
        }
    }
}

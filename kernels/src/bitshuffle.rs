//! Bit unshuffle as c-blosc 1.x applies it (bitshuffle's `bshuf_trans_bit_elem` layout).
//!
//! A block of `n` whole elements, `n` a multiple of 8, is stored as `8 * typesize` bit-rows of
//! `n / 8` bytes: row `8 * j + k` holds bit `k` of byte `j` of every element, element `i` at bit
//! `i % 8` of byte `i / 8`. The `len % typesize` trailing bytes are stored as they are. A block
//! whose element count is not a multiple of 8 is not bit-shuffled at all (c-blosc 1.x; blosc2
//! frames differ and are not handled here).

/// Undo the bit shuffle of one block: `src` (clobbered, used as scratch) and `dst` have the
/// block's length.
#[inline(never)]
pub fn bitunshuffle(typesize: usize, src: &mut [u8], dst: &mut [u8]) {
    let len = src.len().min(dst.len());
    let ts = typesize.max(1);
    let n = len / ts;
    if !n.is_multiple_of(8) || n == 0 {
        dst[..len].copy_from_slice(&src[..len]);
        return;
    }
    let whole = n * ts;
    let row = n / 8;
    // Bits to bytes: byte j of element i goes to dst[j * n + i] (the byte-shuffled layout).
    // Rows 8j..8j+8 are `n` consecutive bytes of `src`, as is byte j of all elements in `dst`.
    for (rows, out) in src[..whole].chunks_exact(n).zip(dst[..whole].chunks_exact_mut(n)) {
        let r: [&[u8]; 8] = core::array::from_fn(|k| rows.get(k * row..(k + 1) * row).unwrap_or(&[]));
        let [r0, r1, r2, r3, r4, r5, r6, r7] = r;
        let it = r0.iter().zip(r1).zip(r2).zip(r3).zip(r4).zip(r5).zip(r6).zip(r7);
        for (o, (((((((&a, &b), &c), &d), &e), &f), &g), &h)) in out.chunks_exact_mut(8).zip(it) {
            o.copy_from_slice(&transpose8(u64::from_le_bytes([a, b, c, d, e, f, g, h])).to_le_bytes());
        }
    }
    if ts > 1 {
        // Bytes to elements, through `src` (its trailing bytes stay in place).
        crate::shuffle::unshuffle(ts, &dst[..whole], &mut src[..whole]);
        dst[..whole].copy_from_slice(&src[..whole]);
    }
    dst[whole..len].copy_from_slice(&src[whole..len]);
}

/// Transpose an 8x8 bit matrix held as bit `8 * row + col`.
fn transpose8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    fn bit(v: &[u8], i: usize) -> u8 {
        (v[i / 8] >> (i % 8)) & 1
    }

    #[test]
    fn transpose8_is_a_transpose() {
        for seed in 0..64u64 {
            let x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (seed << 17);
            let y = transpose8(x);
            for r in 0..8 {
                for c in 0..8 {
                    assert_eq!((x >> (8 * r + c)) & 1, (y >> (8 * c + r)) & 1);
                }
            }
        }
    }

    #[test]
    fn eight_bytes_hand_checked() {
        // typesize 1, 8 elements: element i = 1 << i, so bit-row k has only element k set.
        let mut src: Vec<u8> = (0..8).map(|k| 1u8 << k).collect();
        let mut dst = [0u8; 8];
        bitunshuffle(1, &mut src, &mut dst);
        assert_eq!(dst, [1, 2, 4, 8, 16, 32, 64, 128]);
        // All rows 0xFF except row 0: every element is 0xFE.
        let mut src = [0xFFu8; 8];
        src[0] = 0;
        bitunshuffle(1, &mut src, &mut dst);
        assert_eq!(dst, [0xFE; 8]);
    }

    #[test]
    fn matches_the_definition() {
        // typesize 3, 16 elements (two bytes per bit-row) and 2 trailing bytes.
        let ts = 3;
        let n = 16;
        let src: Vec<u8> = (0..n * ts + 2).map(|i| (i * 37 + 11) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        bitunshuffle(ts, &mut src.clone(), &mut dst);
        for i in 0..n {
            for j in 0..ts {
                for k in 0..8 {
                    let stored = bit(&src[(8 * j + k) * (n / 8)..], i);
                    assert_eq!((dst[i * ts + j] >> k) & 1, stored, "element {i} byte {j} bit {k}");
                }
            }
        }
        assert_eq!(dst[n * ts..], src[n * ts..]);
    }

    #[test]
    fn not_a_multiple_of_eight_is_copied() {
        let src: Vec<u8> = (0..20).collect();
        let mut dst = vec![0u8; 20];
        bitunshuffle(2, &mut src.clone(), &mut dst); // 10 elements
        assert_eq!(dst, src);
    }
}

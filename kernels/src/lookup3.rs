//! Bob Jenkins' `hashlittle` (lookup3.c): HDF5's metadata checksum and numcodecs'
//! `jenkins_lookup3`, for the core's codec and the hdf5 decoder module alike.

/// `hashlittle(data, initval)`.
#[inline]
pub fn hashlittle(data: &[u8], initval: u32) -> u32 {
    let len = data.len();
    // lookup3 adds the length as a 32-bit value (wrapping for longer keys).
    let mut a = 0xdead_beef_u32.wrapping_add(len as u32).wrapping_add(initval);
    let (mut b, mut c) = (a, a);
    if len == 0 {
        return c;
    }
    // Bytes `i..i + 4` of `k`, little-endian, zero-padded past its end. (Not a fold of four
    // bytes: at this crate's opt-level that unrolled to 733 bytes of the core's module.)
    let word = |k: &[u8], i: usize| -> u32 {
        let mut w = [0; 4];
        let src = k.get(i..).unwrap_or_default();
        let n = src.len().min(4);
        w[..n].copy_from_slice(&src[..n]);
        u32::from_le_bytes(w)
    };
    let mut k = data;
    while k.len() > 12 {
        a = a.wrapping_add(word(k, 0));
        b = b.wrapping_add(word(k, 4));
        c = c.wrapping_add(word(k, 8));
        // mix(a, b, c)
        a = a.wrapping_sub(c) ^ c.rotate_left(4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ a.rotate_left(6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ b.rotate_left(8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c) ^ c.rotate_left(16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ a.rotate_left(19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ b.rotate_left(4);
        b = b.wrapping_add(a);
        k = k.get(12..).unwrap_or_default();
    }
    // The last 1..=12 bytes, zero-padded.
    a = a.wrapping_add(word(k, 0));
    b = b.wrapping_add(word(k, 4));
    c = c.wrapping_add(word(k, 8));
    // final(a, b, c)
    c = (c ^ b).wrapping_sub(b.rotate_left(14));
    a = (a ^ c).wrapping_sub(c.rotate_left(11));
    b = (b ^ a).wrapping_sub(a.rotate_left(25));
    c = (c ^ b).wrapping_sub(b.rotate_left(16));
    a = (a ^ c).wrapping_sub(c.rotate_left(4));
    b = (b ^ a).wrapping_sub(a.rotate_left(14));
    (c ^ b).wrapping_sub(b.rotate_left(24))
}

#[cfg(test)]
mod tests {
    use super::hashlittle;

    #[test]
    fn known_vectors() {
        // numcodecs' tests/test_jenkins.py (from lookup3.c's driver and jenkins-cffi).
        assert_eq!(hashlittle(b"", 0), 0xdead_beef);
        assert_eq!(hashlittle(b"", 0xdead_beef), 0xbd5b_7dde);
        assert_eq!(hashlittle(b"Four score and seven years ago", 0), 0x1777_0551);
        assert_eq!(hashlittle(b"Four score and seven years ago", 1), 0xcd62_8161);
        assert_eq!(hashlittle(b"jenkins", 0), 202_276_345);
        // Exactly 12 and 13 bytes: the last block taken whole, then one more byte.
        assert_ne!(hashlittle(b"abcdefghijkl", 0), hashlittle(b"abcdefghijklm", 0));
    }
}

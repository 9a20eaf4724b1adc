//! The hash functions of `neuroglancer_uint64_sharded_v1`.
use crate::core::metadata::precomputed::Hash;

impl Hash {
    /// Hash of a (pre-shifted) chunk id.
    pub fn apply(self, x: u64) -> u64 {
        match self {
            Hash::Identity => x,
            Hash::MurmurHash3X86_128 => {
                let [h1, h2, _, _] = murmur3_x86_128(&x.to_le_bytes(), 0);
                u64::from(h1) | (u64::from(h2) << 32)
            }
        }
    }
}

fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

const C: [u32; 4] = [0x239b_961b, 0xab0e_9789, 0x38b3_4ae5, 0xa1e3_8b93];
const ROT: [u32; 4] = [15, 16, 17, 18];

/// Mix one 32-bit lane `i` of a block into `k` (the lane's own constants).
fn mix_k(i: usize, k: u32) -> u32 {
    k.wrapping_mul(C[i]).rotate_left(ROT[i]).wrapping_mul(C[(i + 1) % 4])
}

/// MurmurHash3_x86_128: the four 32-bit words (h1, h2, h3, h4).
pub fn murmur3_x86_128(data: &[u8], seed: u32) -> [u32; 4] {
    const HROT: [u32; 4] = [19, 17, 15, 13];
    const ADD: [u32; 4] = [0x561c_cd1b, 0x0bca_a747, 0x96cd_1c35, 0x32ac_3b17];
    let mut h = [seed; 4];
    let mut blocks = data.chunks_exact(16);
    for b in &mut blocks {
        for i in 0..4 {
            let k = u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
            h[i] ^= mix_k(i, k);
            h[i] = h[i].rotate_left(HROT[i]).wrapping_add(h[(i + 1) % 4]).wrapping_mul(5).wrapping_add(ADD[i]);
        }
    }
    let tail = blocks.remainder();
    for (i, lane) in tail.chunks(4).enumerate() {
        let mut k = 0u32;
        for (j, &byte) in lane.iter().enumerate() {
            k |= u32::from(byte) << (8 * j);
        }
        h[i] ^= mix_k(i, k);
    }
    let len = data.len() as u32;
    for x in &mut h {
        *x ^= len;
    }
    let spread = |h: &mut [u32; 4]| {
        h[0] = h[0].wrapping_add(h[1]).wrapping_add(h[2]).wrapping_add(h[3]);
        for i in 1..4 {
            h[i] = h[i].wrapping_add(h[0]);
        }
    };
    spread(&mut h);
    for x in &mut h {
        *x = fmix32(*x);
    }
    spread(&mut h);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values from the `mmh3` PyPI package (5.3.1), independent of this code:
    /// python3 -c 'import mmh3,struct
    /// for x in [0,1,2,3,4,5,255,256,12345,2**32,2**53+1,2**63,2**64-1]:
    ///     print(x, int.from_bytes(mmh3.hash_bytes(struct.pack("<Q",x),0,False)[:8],"little"))'
    const IDS: [(u64, u64); 13] = [
        (0, 5148371408780832321),
        (1, 16770674756601302682),
        (2, 15433726874232110938),
        (3, 7735335120806339793),
        (4, 7471061676682099388),
        (5, 12384190628465033119),
        (255, 5633939043138664346),
        (256, 5288629331391248090),
        (12345, 2103515819662501136),
        (4294967296, 13524640716595723620),
        (9007199254740993, 16131450183714694040),
        (9223372036854775808, 11063714688786943912),
        (18446744073709551615, 6291360166951214362),
    ];

    /// python3 -c 'import mmh3
    /// for s in [b"", b"a", b"abc", b"0123456789abcdef", b"0123456789abcdefghijklmnopq"]:
    ///     print(s, mmh3.hash_bytes(s, 7, False).hex())'
    const BYTES: [(&[u8], &str); 5] = [
        (b"", "5ed8450d888984fb888984fb888984fb"),
        (b"a", "74ec724570d64f9870d64f9870d64f98"),
        (b"abc", "141a91a08cab69b48cab69b48cab69b4"),
        (b"0123456789abcdef", "f787e0c46bc27684882c69646efccc7d"),
        (b"0123456789abcdefghijklmnopq", "a419b7b3a680185279c6274e06c03436"),
    ];

    #[test]
    fn murmur_matches_mmh3() {
        for (x, want) in IDS {
            assert_eq!(Hash::MurmurHash3X86_128.apply(x), want, "{x}");
        }
        for (s, want) in BYTES {
            let h = murmur3_x86_128(s, 7);
            let mut hex = alloc::string::String::new();
            for w in h {
                for b in w.to_le_bytes() {
                    hex.push_str(&alloc::format!("{b:02x}"));
                }
            }
            assert_eq!(hex, want, "{s:?}");
        }
        // tensorstore's own test (murmurhash3_test.cc): id 0 gives words e028ae41, 4772b084.
        assert_eq!(Hash::MurmurHash3X86_128.apply(0), 0x4772_b084_e028_ae41);
        assert_eq!(Hash::Identity.apply(12345), 12345);
    }
}

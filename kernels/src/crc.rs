//! CRC-32 (gzip's trailer, zip entries, numcodecs `crc32`) and CRC-32C (Zarr's `crc32c`, shard
//! indexes), slicing by 16 bytes.
//!
//! The tables (16 KiB per polynomial) are computed on first use into zeroed statics instead of
//! being compiled in: as data they were 24 KB of the module that gzip cannot shrink. Atomics
//! make that safe without `unsafe`; relaxed loads are plain loads in wasm and on x86, and two
//! threads racing to fill a table write the same values.
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// One reflected CRC-32 polynomial and its tables.
pub struct Crc32 {
    poly: u32,
    ready: AtomicBool,
    table: [[AtomicU32; 256]; 16],
}

/// CRC-32 (ISO-HDLC: gzip, zip, zlib's `crc32`).
pub static CRC32: Crc32 = Crc32::new(0xedb8_8320);
/// CRC-32C (Castagnoli).
pub static CRC32C: Crc32 = Crc32::new(0x82f6_3b78);

/// CRC-32 of `data`.
#[inline(never)]
pub fn crc32(data: &[u8]) -> u32 {
    CRC32.checksum(data)
}

/// CRC-32C of `data`.
#[inline(never)]
pub fn crc32c(data: &[u8]) -> u32 {
    CRC32C.checksum(data)
}

impl Crc32 {
    const fn new(poly: u32) -> Crc32 {
        Crc32 { poly, ready: AtomicBool::new(false), table: [const { [const { AtomicU32::new(0) }; 256] }; 16] }
    }

    fn tables(&self) -> &[[AtomicU32; 256]; 16] {
        if !self.ready.load(Ordering::Acquire) {
            for i in 0..256u32 {
                let mut c = i;
                for _ in 0..8 {
                    c = if c & 1 != 0 { (c >> 1) ^ self.poly } else { c >> 1 };
                }
                self.table[0][i as usize].store(c, Ordering::Relaxed);
            }
            for k in 1..16 {
                for i in 0..256 {
                    let prev = self.table[k - 1][i].load(Ordering::Relaxed);
                    let next = (prev >> 8) ^ self.table[0][(prev & 0xff) as usize].load(Ordering::Relaxed);
                    self.table[k][i].store(next, Ordering::Relaxed);
                }
            }
            self.ready.store(true, Ordering::Release);
        }
        &self.table
    }

    pub fn checksum(&self, data: &[u8]) -> u32 {
        let t = self.tables();
        let at = |k: usize, i: u32| t[k][(i & 0xff) as usize].load(Ordering::Relaxed);
        let mut crc = !0u32;
        let mut blocks = data.chunks_exact(16);
        for b in &mut blocks {
            let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            let (w0, w1, w2, w3) = (word(0) ^ crc, word(4), word(8), word(12));
            crc = at(15, w0) ^ at(14, w0 >> 8) ^ at(13, w0 >> 16) ^ at(12, w0 >> 24);
            crc ^= at(11, w1) ^ at(10, w1 >> 8) ^ at(9, w1 >> 16) ^ at(8, w1 >> 24);
            crc ^= at(7, w2) ^ at(6, w2 >> 8) ^ at(5, w2 >> 16) ^ at(4, w2 >> 24);
            crc ^= at(3, w3) ^ at(2, w3 >> 8) ^ at(1, w3 >> 16) ^ at(0, w3 >> 24);
        }
        for &byte in blocks.remainder() {
            crc = at(0, crc ^ u32::from(byte)) ^ (crc >> 8);
        }
        !crc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn check_values_and_the_crates_agree() {
        // The catalogue's check values (CRC of "123456789").
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(crc32(b""), 0);
        let mut x = 0x2545_f491u32;
        let data: Vec<u8> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        for n in [0, 1, 3, 15, 16, 17, 31, 32, 33, 100, 1023, 4999, 5000] {
            assert_eq!(crc32(&data[..n]), crc32fast::hash(&data[..n]), "crc32 of {n} bytes");
            assert_eq!(crc32c(&data[..n]), ::crc32c::crc32c(&data[..n]), "crc32c of {n} bytes");
        }
    }
}

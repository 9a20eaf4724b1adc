//! numcodecs' 32-bit checksums (v2 filters or compressors, v3 `numcodecs.<id>`): 4 bytes,
//! little-endian, verified and stripped. `crc32` and `adler32` sit before the data unless
//! `location: "end"`, `crc32c` after it unless `location: "start"`; `fletcher32` (HDF5's, on
//! big-endian 16-bit words) and `jenkins_lookup3` (HDF5's `hashlittle`) always after it.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{err, invalid, ErrorCode, Result};
use crate::core::json::{Map, Value};
use alloc::format;
use alloc::vec::Vec;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sum {
    Crc32,
    Adler32,
    Crc32c,
    Fletcher32,
    /// Seed, and bytes hashed before the data.
    JenkinsLookup3 {
        initval: u32,
        prefix: Vec<u8>,
    },
}

#[derive(Debug)]
pub struct Checksum32 {
    sum: Sum,
    at_end: bool,
}

impl Checksum32 {
    /// `name` without its `numcodecs.` prefix; `None` if it is not one of these checksums.
    pub fn parse(name: &str, conf: &Map) -> Result<Option<Checksum32>> {
        let sum = match name {
            "crc32" => Sum::Crc32,
            "adler32" => Sum::Adler32,
            "crc32c" => Sum::Crc32c,
            "fletcher32" => Sum::Fletcher32,
            "jenkins_lookup3" => {
                let initval = match conf.get("initval") {
                    None | Some(Value::Null) => 0,
                    Some(v) => v.as_u64().and_then(|v| u32::try_from(v).ok()).ok_or_else(|| {
                        invalid(format!("jenkins_lookup3 initval {v} is not a 32-bit unsigned integer"))
                    })?,
                };
                let prefix = match conf.get("prefix") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(a)) => a
                        .iter()
                        .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                        .collect::<Option<Vec<u8>>>()
                        .ok_or_else(|| invalid("jenkins_lookup3 prefix must be a list of bytes"))?,
                    Some(_) => return Err(invalid("jenkins_lookup3 prefix must be a list of bytes")),
                };
                Sum::JenkinsLookup3 { initval, prefix }
            }
            _ => return Ok(None),
        };
        let at_end = match (&sum, conf.get("location").and_then(Value::as_str)) {
            (Sum::Fletcher32 | Sum::JenkinsLookup3 { .. }, _) => true,
            (Sum::Crc32c, None) => true,
            (_, None | Some("start")) => false,
            (_, Some("end")) => true,
            (_, Some(other)) => return Err(invalid(format!("checksum location \"{other}\""))),
        };
        Ok(Some(Checksum32 { sum, at_end }))
    }
}

pub fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes keep the sums below 2^32 between reductions (zlib's NMAX).
    for block in data.chunks(5552) {
        for &x in block {
            a += u32::from(x);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// HDF5's Fletcher-32 (`H5_checksum_fletcher32`): sums of big-endian 16-bit words, an odd last
/// byte as the high half of a word.
pub fn fletcher32(data: &[u8]) -> u32 {
    let (mut s1, mut s2) = (0u32, 0u32);
    let fold = |x: u32| (x & 0xffff) + (x >> 16);
    let words = data.len() / 2 * 2;
    // Blocks of 360 words keep both sums below 2^32 between folds; folds as HDF5 places them,
    // so that a sum of 0 mod 65535 comes out as HDF5's 0 or 0xffff.
    for block in data[..words].chunks(720) {
        for w in block.chunks_exact(2) {
            s1 = s1.wrapping_add((u32::from(w[0]) << 8) | u32::from(w[1]));
            s2 = s2.wrapping_add(s1);
        }
        s1 = fold(s1);
        s2 = fold(s2);
    }
    if let Some(&last) = data.get(words) {
        s1 = s1.wrapping_add(u32::from(last) << 8);
        s2 = s2.wrapping_add(s1);
        s1 = fold(s1);
        s2 = fold(s2);
    }
    (fold(s2) << 16) | fold(s1)
}

/// Bob Jenkins' `hashlittle` from lookup3.c, as HDF5 and numcodecs compute it.
pub fn jenkins_lookup3(data: &[u8], initval: u32) -> u32 {
    shardfetch_kernels::lookup3::hashlittle(data, initval)
}

impl Codec for Checksum32 {
    fn name(&self) -> &str {
        match self.sum {
            Sum::Crc32 => "crc32",
            Sum::Adler32 => "adler32",
            Sum::Crc32c => "crc32c",
            Sum::Fletcher32 => "fletcher32",
            Sum::JenkinsLookup3 { .. } => "jenkins_lookup3",
        }
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        n.saturating_add(4)
    }
    fn decode(&self, mut data: Decoded, _ctx: &Ctx) -> Result<Decoded> {
        let b = &data.bytes;
        if b.len() < 4 {
            return err(ErrorCode::CorruptChunk, format!("{}: shorter than its checksum", self.name()));
        }
        let (sum, payload) = if self.at_end { (b.len() - 4, 0..b.len() - 4) } else { (0, 4..b.len()) };
        let stored = u32::from_le_bytes([b[sum], b[sum + 1], b[sum + 2], b[sum + 3]]);
        let p = &b[payload.clone()];
        let actual = match &self.sum {
            Sum::Crc32 => crate::core::crc::crc32(p),
            Sum::Adler32 => adler32(p),
            Sum::Crc32c => crate::core::crc::crc32c(p),
            Sum::Fletcher32 => fletcher32(p),
            Sum::JenkinsLookup3 { initval, prefix } if prefix.is_empty() => jenkins_lookup3(p, *initval),
            Sum::JenkinsLookup3 { initval, prefix } => {
                let mut all = Vec::new();
                if all.try_reserve_exact(prefix.len().saturating_add(p.len())).is_err() {
                    return err(ErrorCode::TooLarge, "jenkins_lookup3: out of memory for the prefixed chunk");
                }
                all.extend_from_slice(prefix);
                all.extend_from_slice(p);
                jenkins_lookup3(&all, *initval)
            }
        };
        if stored != actual {
            return err(
                ErrorCode::ChecksumMismatch,
                format!("{} mismatch: stored {stored:#010x}, computed {actual:#010x}", self.name()),
            );
        }
        data.bytes.truncate(payload.end);
        data.bytes.drain(..payload.start);
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jenkins_lookup3_known_vectors() {
        // numcodecs' tests/test_jenkins.py (from lookup3.c's driver and jenkins-cffi).
        assert_eq!(jenkins_lookup3(b"", 0), 0xdead_beef);
        assert_eq!(jenkins_lookup3(b"", 0xdead_beef), 0xbd5b_7dde);
        assert_eq!(jenkins_lookup3(b"Four score and seven years ago", 0), 0x1777_0551);
        assert_eq!(jenkins_lookup3(b"Four score and seven years ago", 1), 0xcd62_8161);
        assert_eq!(jenkins_lookup3(b"jenkins", 0), 202_276_345);
    }

    #[test]
    fn fletcher32_known_vector() {
        // numcodecs' tests/test_fletcher32.py `test_known`: ten <i8 values and their checksum.
        let vals: [i64; 10] = [1911, -2427, 1897, -2412, 2440, 873, -621, -829, 551, -2118];
        let mut data: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(fletcher32(&data).to_le_bytes(), *b"\xfd%\x86d");
        data.push(7);
        let _ = fletcher32(&data); // odd length: the last byte as a high half-word
    }

    #[test]
    fn adler32_known_vector() {
        // RFC 1950's example: "Wikipedia" = 0x11E60398.
        assert_eq!(adler32(b"Wikipedia"), 0x11e6_0398);
        assert_eq!(adler32(&alloc::vec![0xffu8; 100_000]), {
            let (mut a, mut b) = (1u64, 0u64);
            for _ in 0..100_000 {
                a = (a + 255) % 65_521;
                b = (b + a) % 65_521;
            }
            ((b << 16) | a) as u32
        });
    }

    /// Each checksum strips itself from a good chunk, and reports a damaged one as
    /// `ChecksumMismatch` (not retried, not `CorruptChunk`); a chunk too short to hold it is
    /// `CorruptChunk`.
    #[test]
    fn a_damaged_chunk_is_a_checksum_mismatch() {
        use crate::core::metadata::DataType;
        let ctx = Ctx { shape: &[8], dtype: DataType::UInt8, limit: 1 << 20, decoders: None };
        let payload = b"shardfetch".to_vec();
        for name in ["crc32", "adler32", "crc32c", "fletcher32", "jenkins_lookup3"] {
            let c = Checksum32::parse(name, &Map::new()).unwrap().unwrap();
            let sum = match &c.sum {
                Sum::Crc32 => crate::core::crc::crc32(&payload),
                Sum::Adler32 => adler32(&payload),
                Sum::Crc32c => crate::core::crc::crc32c(&payload),
                Sum::Fletcher32 => fletcher32(&payload),
                Sum::JenkinsLookup3 { initval, .. } => jenkins_lookup3(&payload, *initval),
            }
            .to_le_bytes();
            let framed: Vec<u8> =
                if c.at_end { [&payload[..], &sum].concat() } else { [&sum[..], &payload[..]].concat() };
            assert_eq!(c.decode(Decoded::bytes(framed.clone()), &ctx).unwrap().bytes, payload, "{name}");
            let mut bad = framed;
            bad[6] ^= 1;
            assert_eq!(c.decode(Decoded::bytes(bad), &ctx).unwrap_err().code, ErrorCode::ChecksumMismatch, "{name}");
            assert_eq!(c.decode(Decoded::bytes(b"abc".to_vec()), &ctx).unwrap_err().code, ErrorCode::CorruptChunk);
        }
    }
}

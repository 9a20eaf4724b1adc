//! numcodecs `PCodec` (pco's standalone format): `decode(stream, [type, n])` → `n` numbers of
//! `type` as little-endian bytes; `type` is one of [`TYPES`] by position (1 = uint8 …).
#![forbid(unsafe_code)]
use abi::{count, Failure};

abi::export_decoder!(decode);

/// The element types, numbered from 1 in this order.
pub const TYPES: [&str; 11] =
    ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float16", "float32", "float64"];

/// `n` numbers of type `$t` decoded from `src`, as little-endian bytes.
macro_rules! decode_as {
    ($t:ty, $src:expr, $n:expr) => {{
        let mut nums: Vec<$t> = Vec::new();
        nums.try_reserve_exact($n).map_err(|_| Failure::too_large(format!("cannot allocate {} numbers", $n)))?;
        nums.resize($n, <$t>::default());
        let p = pco::standalone::simple_decompress_into::<$t>($src, &mut nums).map_err(|e| Failure::corrupt(e.to_string()))?;
        if p.n_processed != $n {
            return Err(Failure::corrupt(format!("decoded {} numbers, expected {}", p.n_processed, $n)));
        }
        let mut out = Vec::new();
        out.try_reserve_exact($n * core::mem::size_of::<$t>()).map_err(|_| Failure::too_large("cannot allocate the decoded chunk"))?;
        for v in nums {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }};
}

pub fn decode(src: &[u8], args: &[f64]) -> Result<Vec<u8>, Failure> {
    let (ty, n) = (count(args, 0, "type")?, count(args, 1, "numbers")?);
    let n = usize::try_from(n).map_err(|_| Failure::too_large("too many numbers"))?;
    Ok(match ty {
        1 => decode_as!(u8, src, n),
        2 => decode_as!(u16, src, n),
        3 => decode_as!(u32, src, n),
        4 => decode_as!(u64, src, n),
        5 => decode_as!(i8, src, n),
        6 => decode_as!(i16, src, n),
        7 => decode_as!(i32, src, n),
        8 => decode_as!(i64, src, n),
        9 => decode_as!(half::f16, src, n),
        10 => decode_as!(f32, src, n),
        11 => decode_as!(f64, src, n),
        other => return Err(Failure::unsupported(format!("element type {other}"))),
    })
}

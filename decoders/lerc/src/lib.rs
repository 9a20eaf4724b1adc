//! TIFF's LERC tiles (compression 34887, as GDAL writes them, after any deflate or zstd the host
//! undid): `decode(lerc, [values, size, float])` → the blob's values, little endian, checked to
//! be exactly `values` (pixels × samples, the samples a blob's depth) of `size` bytes, floats
//! when `float` is 1. Pixels the blob's mask marks invalid are 0 (NaN for floats), as GDAL reads
//! them.
#![forbid(unsafe_code)]
use abi::{count, Failure};
use lerc::{DataType, Sample};

abi::export_decoder!(decode);

pub fn decode(data: &[u8], args: &[f64]) -> Result<Vec<u8>, Failure> {
    let (values, size, float) = (count(args, 0, "values")?, count(args, 1, "size")?, count(args, 2, "float")? == 1);
    let corrupt = |e: lerc::LercError| Failure::corrupt(e.to_string());
    let info = lerc::decode_info(data).map_err(corrupt)?;
    let n = [info.width, info.height, info.depth, info.bands].iter().try_fold(1u64, |a, &d| a.checked_mul(u64::from(d)));
    if n != Some(values) {
        let (w, h, d, b) = (info.width, info.height, info.depth, info.bands);
        return Err(Failure::corrupt(format!("a {w}x{h} blob of depth {d}, {b} band(s) does not hold {values} values")));
    }
    let n = usize::try_from(values).map_err(|_| Failure::too_large("tile too large"))?;
    let (got_size, got_float) = match info.data_type {
        DataType::Char | DataType::Byte => (1, false),
        DataType::Short | DataType::UShort => (2, false),
        DataType::Int | DataType::UInt => (4, false),
        DataType::Float => (4, true),
        DataType::Double => (8, true),
    };
    if (got_size, got_float) != (size, float) {
        return Err(Failure::corrupt(format!("a blob of {:?} values, not the image's samples", info.data_type)));
    }
    match info.data_type {
        DataType::Char => typed::<i8>(data, n, 0),
        DataType::Byte => typed::<u8>(data, n, 0),
        DataType::Short => typed::<i16>(data, n, 0),
        DataType::UShort => typed::<u16>(data, n, 0),
        DataType::Int => typed::<i32>(data, n, 0),
        DataType::UInt => typed::<u32>(data, n, 0),
        DataType::Float => typed::<f32>(data, n, f32::NAN),
        DataType::Double => typed::<f64>(data, n, f64::NAN),
    }
}

/// Decode into `n` values of `T`, the invalid ones `invalid`; little-endian bytes.
fn typed<T: Sample + Copy + Default + Bytes>(data: &[u8], n: usize, invalid: T) -> Result<Vec<u8>, Failure> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Failure::too_large("cannot allocate the tile"))?;
    v.resize(n, T::default());
    lerc::decode_into_with_nodata(data, &mut v, invalid).map_err(|e| Failure::corrupt(e.to_string()))?;
    let mut out = Vec::new();
    out.try_reserve_exact(n * core::mem::size_of::<T>()).map_err(|_| Failure::too_large("cannot allocate the tile"))?;
    for x in v {
        x.put(&mut out);
    }
    Ok(out)
}

trait Bytes {
    fn put(self, out: &mut Vec<u8>);
}
macro_rules! bytes {
    ($($t:ty),*) => {$(impl Bytes for $t { fn put(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()) } })*};
}
bytes!(i8, u8, i16, u16, i32, u32, f32, f64);

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn values_little_endian_and_checked_against_the_image() {
        let px: Vec<u16> = (0..12).map(|i| 1000 + i * 7).collect();
        let blob = lerc::encode_slice(4, 3, &px, lerc::Precision::Lossless).unwrap();
        let out = decode(&blob, &[12.0, 2.0, 0.0]).unwrap();
        assert_eq!(out, px.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
        // Another count, another sample type, a float flag, a cut blob, no blob: corrupt.
        for args in [[11.0, 2.0, 0.0], [12.0, 4.0, 0.0], [12.0, 2.0, 1.0]] {
            assert_eq!(decode(&blob, &args).unwrap_err().code, abi::CORRUPT, "{args:?}");
        }
        assert_eq!(decode(&blob[..blob.len() / 2], &[12.0, 2.0, 0.0]).unwrap_err().code, abi::CORRUPT);
        assert_eq!(decode(b"not a lerc blob", &[12.0, 2.0, 0.0]).unwrap_err().code, abi::CORRUPT);
    }
}

//! IEEE 754 half precision (float16) to f64: the core's float16 values and fill values, and the
//! raster module's float16 samples.

/// The value of the half-precision number with bits `h` (subnormals, infinities and NaN too).
pub fn to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as f64;
    match exp {
        0 => sign * frac * pow2(-24),
        0x1f if frac == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        e => sign * (1.0 + frac / 1024.0) * pow2(e - 15),
    }
}

/// 2^e for the exponents of normal f64s.
pub fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

#[cfg(test)]
mod tests {
    #[test]
    fn halves() {
        let v = [0x3c00u16, 0xc000, 0x0001, 0x7bff, 0x7c00, 0xfc00, 0x8000].map(super::to_f64);
        assert_eq!(v, [1.0, -2.0, 2f64.powi(-24), 65504.0, f64::INFINITY, f64::NEG_INFINITY, -0.0]);
        assert!(super::to_f64(0x7e00).is_nan());
    }
}

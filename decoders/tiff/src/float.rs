//! Floats as JSON numbers for the descriptions (GeoTIFF transforms, scales, nodata).
/// A finite float as the shortest decimal of at most 17 significant digits that reads back as
/// it (exact digits from its bits, then shortened while a parse gives it back): the same text for the same
/// value on every platform, integers without a fraction (`-9999`, not `-9999.0`). `false`, writing nothing, for NaN, infinities, and magnitudes
/// below 2^-67 (not met in metadata; the caller writes them otherwise).
pub fn write_f64(out: &mut alloc::string::String, x: f64) -> bool {
    let Some((digits, point)) = exact_digits(x.abs()) else { return false };
    for n in 1..=digits.len() {
        let (d, p) = rounded(&digits, n, point);
        let text = decimal(x < 0.0, &d, p);
        if text.parse::<f64>().is_ok_and(|y| y == x) || n == digits.len() {
            out.push_str(&text);
            return true;
        }
    }
    false
}

/// The first 18 significant decimal digits of `x` (≥ 0) and the power of ten of the first one
/// (`123.4` → `[1,2,3,4,0…]`, 2); the 18th rounds.
fn exact_digits(x: f64) -> Option<(alloc::vec::Vec<u8>, i32)> {
    if !x.is_finite() {
        return None;
    }
    if x == 0.0 {
        return Some((alloc::vec![0], 0));
    }
    let bits = x.to_bits();
    let (exp, frac) = ((bits >> 52) as i32, bits & ((1 << 52) - 1));
    let (m, e) = if exp == 0 { (frac, -1074) } else { (frac | (1 << 52), exp - 1075) };
    let mut digits: alloc::vec::Vec<u8> = alloc::vec::Vec::new();
    let mut point: i32;
    if e >= 0 {
        // m · 2^e exactly, in limbs of nine decimal digits (least significant first).
        const BASE: u64 = 1_000_000_000;
        let mut limbs: alloc::vec::Vec<u64> = alloc::vec![m % BASE, m / BASE];
        for _ in 0..e {
            let mut carry = 0;
            for l in limbs.iter_mut() {
                let v = *l * 2 + carry;
                (*l, carry) = (v % BASE, v / BASE);
            }
            if carry > 0 {
                limbs.push(carry);
            }
        }
        let mut rev = alloc::vec::Vec::new();
        for mut l in limbs {
            for _ in 0..9 {
                rev.push((l % 10) as u8);
                l /= 10;
            }
        }
        while rev.last() == Some(&0) {
            rev.pop();
        }
        point = rev.len() as i32 - 1;
        digits.extend(rev.iter().rev().take(18));
    } else {
        let k = (-e) as u32;
        if k > 120 {
            return None;
        }
        let int = u128::from(m) >> k;
        let mut f = u128::from(m) & ((1u128 << k) - 1);
        let mut rev = alloc::vec::Vec::new();
        let mut v = int;
        while v > 0 {
            rev.push((v % 10) as u8);
            v /= 10;
        }
        point = rev.len() as i32 - 1;
        digits.extend(rev.iter().rev());
        if digits.is_empty() {
            point = -1;
        }
        while digits.len() < 18 && f > 0 {
            f *= 10;
            let d = (f >> k) as u8;
            f &= (1u128 << k) - 1;
            if digits.is_empty() && d == 0 {
                point -= 1;
                continue;
            }
            digits.push(d);
        }
    }
    Some((digits, point))
}

/// `digits` rounded (half up) to `n` significant digits, and the first one's power of ten.
fn rounded(digits: &[u8], n: usize, point: i32) -> (alloc::vec::Vec<u8>, i32) {
    let mut d: alloc::vec::Vec<u8> = digits.iter().take(n).copied().collect();
    if digits.get(n).is_some_and(|&r| r >= 5) {
        let mut i = d.len();
        loop {
            if i == 0 {
                d.insert(0, 1);
                d.pop();
                return (d, point + 1);
            }
            i -= 1;
            if d[i] == 9 {
                d[i] = 0;
            } else {
                d[i] += 1;
                break;
            }
        }
    }
    (d, point)
}

/// Digits and the first one's power of ten as JSON number text.
fn decimal(negative: bool, d: &[u8], point: i32) -> alloc::string::String {
    let mut digits: alloc::vec::Vec<u8> = d.to_vec();
    while digits.len() > 1 && digits.last() == Some(&0) {
        digits.pop();
    }
    let mut s = alloc::string::String::new();
    if negative {
        s.push('-');
    }
    let ch = |x: u8| char::from(b'0' + x);
    if (-6..=20).contains(&point) {
        if point < 0 {
            s.push_str("0.");
            (1..-point).for_each(|_| s.push('0'));
            digits.iter().for_each(|&x| s.push(ch(x)));
        } else {
            for k in 0..=point as usize {
                s.push(ch(digits.get(k).copied().unwrap_or(0)));
            }
            if digits.len() > point as usize + 1 {
                s.push('.');
                digits[point as usize + 1..].iter().for_each(|&x| s.push(ch(x)));
            }
        }
    } else {
        s.push(ch(digits[0]));
        if digits.len() > 1 {
            s.push('.');
            digits[1..].iter().for_each(|&x| s.push(ch(x)));
        }
        s.push('e');
        if point < 0 {
            s.push('-');
        }
        let mut e = alloc::vec::Vec::new();
        let mut p = point.unsigned_abs();
        while p > 0 || e.is_empty() {
            e.push((p % 10) as u8);
            p /= 10;
        }
        e.iter().rev().for_each(|&x| s.push(ch(x)));
    }
    s
}

/// GDAL_NODATA's text as GDAL 3.10 reads it (`CPLAtofM`, measured): the longest decimal number
/// after leading blanks (`nan`, `inf`, `infinity` in any case, signed; Windows' `1.#INF`,
/// `1.#QNAN`, `-1.#IND`), the rest ignored; no hexadecimal (`0x1A` is 0), and text with no
/// number is 0. `None`: empty (GDAL then has no nodata).
pub fn parse_c_double(text: &str) -> Option<f64> {
    if text.is_empty() {
        return None;
    }
    let t = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = body.get(..body.len().min(8)).unwrap_or("").to_ascii_lowercase();
    let sign = |x: f64| if neg { -x } else { x };
    if lower.starts_with("1.#inf") || lower.starts_with("inf") {
        return Some(sign(f64::INFINITY));
    }
    if lower.starts_with("1.#qnan") || lower.starts_with("1.#snan") || lower.starts_with("1.#ind") || lower.starts_with("nan") {
        return Some(f64::NAN);
    }
    let b = body.as_bytes();
    let digits = |from: usize| from + b.get(from..).map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
    let int_end = digits(0);
    let mut end = int_end;
    if b.get(end) == Some(&b'.') {
        end = digits(end + 1);
    }
    if end == 0 || (end == 1 && int_end == 0) {
        return Some(0.0);
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let s = end + 1 + usize::from(matches!(b.get(end + 1), Some(b'+' | b'-')));
        if digits(s) > s {
            end = digits(s);
        }
    }
    Some(sign(body[..end].parse::<f64>().unwrap_or(0.0)))
}

/// `x` rounded to float16 (to nearest, ties to even; past 65504 an infinity, as IEEE rounds).
pub fn to_f16(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let e = ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    // The spacing of float16 values near x: 2^(e-10), subnormals' 2^-24 below 2^-14.
    let q = f64::from_bits(((e.max(-14) - 10 + 1023) as u64) << 52);
    const MAGIC: f64 = 4503599627370496.0; // 2^52: adding it rounds to an integer, ties to even
    let r = ((x.abs() / q + MAGIC) - MAGIC) * q;
    let r = if r > 65504.0 { f64::INFINITY } else { r };
    if x < 0.0 {
        -r
    } else {
        r
    }
}

#[cfg(test)]
mod float_tests {
    use super::write_f64;

    #[test]
    fn floats_read_back_as_themselves() {
        let text = |x: f64| {
            let mut s = alloc::string::String::new();
            assert!(write_f64(&mut s, x), "{x}");
            s
        };
        assert_eq!(text(30.0), "30");
        assert_eq!(text(-9999.0), "-9999");
        assert_eq!(text(0.1), "0.1");
        assert_eq!(text(4600020.0), "4600020");
        assert_eq!(text(1.0 / 3600.0), "0.0002777777777777778");
        assert_eq!(text(1e-10), "1e-10");
        assert_eq!(text(0.0), "0");
        assert_eq!(text(123456789012345680000.0), "123456789012345680000");
        for x in [0.1 + 0.2, core::f64::consts::PI, -2.5e-5, 1.5e17, 6.02214076e23, 9.999999999999999e22, 5e-300] {
            let mut s = alloc::string::String::new();
            if write_f64(&mut s, x) {
                assert_eq!(s.parse::<f64>().unwrap(), x, "{s}");
            }
        }
        assert!(!write_f64(&mut alloc::string::String::new(), f64::NAN));
    }
}

#[cfg(test)]
mod nodata_tests {
    use super::{parse_c_double, to_f16, write_f64};
    use crate::image::{as_sample, fill_value};

    #[test]
    fn gdal_nodata_spellings() {
        let p = |t: &str| parse_c_double(t);
        assert_eq!(p(" -9999 "), Some(-9999.0));
        assert_eq!(p("-9999\0"), Some(-9999.0));
        assert_eq!(p("1e+38"), Some(1e38));
        assert_eq!(p("-3.4028234663852886e+38"), Some(-3.4028234663852886e38));
        assert_eq!(p("0x1A"), Some(0.0)); // as GDAL: no hexadecimal
        assert_eq!(p("12abc"), Some(12.0));
        assert_eq!(p(".5"), Some(0.5));
        assert_eq!(p("5."), Some(5.0));
        assert_eq!(p("2e"), Some(2.0));
        assert_eq!(p("-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(p("Infinity"), Some(f64::INFINITY));
        assert_eq!(p("-1.#INF"), Some(f64::NEG_INFINITY));
        for t in ["nan", "NaN", " NAN", "-nan", "1.#QNAN", "-1.#IND"] {
            assert!(p(t).is_some_and(f64::is_nan), "{t}");
        }
        // Text with no number is 0 to GDAL (its nodata set); only empty text is none.
        for t in [" ", "abc", "-", ".", "e5", "\u{e9}"] {
            assert_eq!(p(t), Some(0.0), "{t:?}");
        }
        assert_eq!(p(""), None);
    }

    #[test]
    fn nodata_rounded_to_the_sample_type() {
        let f = |dtype: &str, t: &str| fill_value(dtype, as_sample(dtype, parse_c_double(t).unwrap()), t);
        let s = |x: &str| Some(alloc::string::String::from(x));
        assert_eq!(f("float32", "-3.4028234663852886e+38"), s("-3.4028234663852886e38"));
        assert_eq!(f("float32", "3.4028235e38"), s("3.4028234663852886e38"));
        assert_eq!(f("float32", "0.1"), s("0.10000000149011612"));
        // GDAL rounds a float32 nodata to float32, past its range to an infinity.
        assert_eq!(f("float32", "1e40"), s("\"Infinity\""));
        assert_eq!(f("float32", "-1e39"), s("\"-Infinity\""));
        assert_eq!(f("float32", "1e-50"), s("0"));
        assert_eq!(f("float32", "nan"), s("\"NaN\""));
        assert_eq!(f("float32", "-inf"), s("\"-Infinity\""));
        assert_eq!(f("float64", "1e300"), s("1e300"));
        assert_eq!(f("float16", "65504"), s("65504"));
        assert_eq!(f("float16", "0.1"), s("0.0999755859375"));
        assert_eq!(f("float16", "70000"), s("\"Infinity\""));
        assert_eq!(f("uint8", "255"), s("255"));
        assert_eq!(f("uint8", "300"), None);
        assert_eq!(f("uint8", "nan"), None);
        assert_eq!(f("uint8", "1.5"), None);
        assert_eq!(f("uint16", "-1"), None);
        assert_eq!(f("int16", " -9999 "), s("-9999"));
        assert_eq!(f("int32", "1e+38"), None);
        assert_eq!(f("uint64", "18446744073709551615"), s("18446744073709551615"));
        assert_eq!(f("int64", "-9223372036854775808"), s("-9223372036854775808"));
        assert_eq!(f("uint64", "18446744073709551616"), None);
    }

    #[test]
    fn float16_rounding_and_large_floats() {
        assert_eq!(to_f16(1.0 + 1.0 / 2048.0), 1.0); // a tie, to even
        assert_eq!(to_f16(1.0 + 3.0 / 2048.0), 1.0 + 2.0 / 1024.0);
        assert_eq!(to_f16(65519.0), 65504.0);
        assert_eq!(to_f16(-65520.0), f64::NEG_INFINITY);
        assert_eq!(to_f16(-1e-8), 0.0); // under half the smallest subnormal (2^-24)
        assert_eq!(to_f16(3e-8), 2f64.powi(-25) * 2.0);
        let mut s = alloc::string::String::new();
        assert!(write_f64(&mut s, f64::MAX));
        assert_eq!(s, "1.7976931348623157e308");
    }
}

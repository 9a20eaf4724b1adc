//! Floats as JSON numbers for the descriptions (GeoTIFF transforms, scales, nodata).
/// A finite float as the shortest decimal of at most 17 significant digits that reads back as
/// it (exact digits from its bits, then shortened while a parse gives it back): the same text for the same
/// value on every platform, integers without a fraction (`-9999`, not `-9999.0`). `false`, writing nothing, for NaN, infinities, and magnitudes
/// outside 2^-67..2^127 (not met in metadata; the caller writes them otherwise).
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
        if e > 74 {
            return None;
        }
        let mut v = u128::from(m) << e;
        let mut rev = alloc::vec::Vec::new();
        while v > 0 {
            rev.push((v % 10) as u8);
            v /= 10;
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

//! [`Number`]: a JSON number kept as its source text, converted when asked.
//! (`Number::from_text` is in `parse.rs`: it runs the parser, which builds numbers.)
use alloc::boxed::Box;
use core::fmt;

/// A number as written: its text, checked against the JSON grammar.
#[derive(Clone, PartialEq, Eq)]
pub struct Number(pub(super) Box<str>);

impl Number {
    /// The number's text, as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Written without a fraction or an exponent.
    pub fn is_integer(&self) -> bool {
        !self.0.bytes().any(|c| matches!(c, b'.' | b'e' | b'E'))
    }

    /// Exact: integer text in range only.
    pub fn as_u64(&self) -> Option<u64> {
        if self.is_integer() {
            self.0.parse().ok()
        } else {
            None
        }
    }

    /// Exact: integer text in range only.
    pub fn as_i64(&self) -> Option<i64> {
        if self.is_integer() {
            self.0.parse().ok()
        } else {
            None
        }
    }

    /// The nearest f64; `None` beyond its range (`1e400`).
    pub fn as_f64(&self) -> Option<f64> {
        self.0.parse::<f64>().ok().filter(|x| x.is_finite())
    }

    /// The nearest f32, rounded once from the text. `None` where [`Number::as_f64`] is `None`;
    /// beyond f32's range (but not f64's) infinite, as a cast from f64 would give.
    pub fn as_f32(&self) -> Option<f32> {
        self.as_f64()?;
        self.0.parse::<f32>().ok()
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({})", self.0)
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::{parse, Value};
    use alloc::string::ToString;

    fn num(t: &str) -> Number {
        match parse(t.as_bytes()).unwrap() {
            Value::Number(n) => n,
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn integers_are_exact() {
        assert_eq!(num("18446744073709551615").as_u64(), Some(u64::MAX));
        assert_eq!(num("18446744073709551616").as_u64(), None);
        assert_eq!(num("18446744073709551616").as_f64(), Some(18446744073709551616.0));
        assert_eq!(num("9223372036854775807").as_i64(), Some(i64::MAX));
        assert_eq!(num("-9223372036854775808").as_i64(), Some(i64::MIN));
        assert_eq!(num("-9223372036854775809").as_i64(), None);
        assert_eq!(num("9007199254740993").as_i64(), Some(9007199254740993));
        assert_eq!(num("-1").as_u64(), None);
        assert_eq!(num("1.0").as_u64(), None);
        assert_eq!(num("1e2").as_i64(), None);
        assert_eq!(num("1e2").as_f64(), Some(100.0));
        assert_eq!(Value::from(u64::MAX).to_string(), "18446744073709551615");
        assert_eq!(Value::from(i64::MIN).as_i64(), Some(i64::MIN));
    }

    #[test]
    fn floats_round_once() {
        // 0.1 straight to f32, not through f64 (equal here, but see below).
        assert_eq!(num("0.1").as_f32(), Some(0.1f32));
        assert_eq!(num("0.1").as_f64(), Some(0.1f64));
        // A decimal between two f32 values where rounding through f64 lands on the wrong one:
        // 1 + 2^-24 + 2^-54 rounds to 1 + 2^-24 in f64 (a tie in f32, to even: 1.0), but is
        // just above the tie, so its nearest f32 is 1 + 2^-23.
        let t = "1.00000005960464482326530313422679527425765991210938";
        assert_eq!(num(t).as_f32(), Some(1.0 + f32::EPSILON));
        assert_eq!(num(t).as_f64().map(|x| x as f32), Some(1.0));
        assert_eq!(num("1e400").as_f64(), None);
        assert_eq!(num("1e400").as_f32(), None);
        assert_eq!(num("1e39").as_f32(), Some(f32::INFINITY));
        assert_eq!(num("1e-400").as_f64(), Some(0.0));
        let z = num("-0").as_f64().unwrap();
        assert!(z == 0.0 && z.is_sign_negative());
        assert_eq!(num("-0").as_i64(), Some(0));
        assert_eq!(num("-0").as_u64(), None);
        assert_eq!(num("-0.0e-0").to_string(), "-0.0e-0", "written as read");
        // Each refused where it stops being a JSON number, saying why.
        let eof = "EOF while parsing a value";
        for (bad, what, at) in [
            ("01", "trailing characters", 1),
            ("1.", eof, 2),
            (".5", "expected value", 0),
            ("+1", "expected value", 0),
            ("1e", eof, 2),
            ("1e+", eof, 3),
            ("-", eof, 1),
            ("NaN", "expected value", 0),
            ("Infinity", "expected value", 0),
            ("0x10", "trailing characters", 1),
            ("1.5e3.2", "trailing characters", 5),
            ("--1", "invalid number", 1),
        ] {
            let e = parse(bad.as_bytes()).unwrap_err();
            assert!(e.to_string().starts_with(what) && e.offset == at, "{bad}: {e}, not {what} at {at}");
            assert!(Number::from_text(bad).is_none(), "{bad}");
        }
        assert_eq!(Number::from_text("-12.5E+3").map(|n| n.as_f64()), Some(Some(-12500.0)));
    }
}

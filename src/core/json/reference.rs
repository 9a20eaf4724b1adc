//! Kerchunk's reference maps: each member of `refs` as a [`Reference`], borrowed from the
//! text where it can be ([`for_each_reference`]).
use super::parse::{Error, Parser};
use super::scan::walk;
use super::value::Value;
use alloc::borrow::Cow;

/// A member of a reference map (kerchunk's `refs`), borrowed from the text where it can be:
/// text, `[url]` or `[url, offset, length]` (non-negative integers, digits only), or any other
/// value.
pub enum Reference<'a> {
    Text(Cow<'a, str>),
    Target(Cow<'a, str>, Option<(u64, u64)>),
    Other(Value),
}

/// Each member of the top-level object of `text` as a [`Reference`], one at a time (`each`
/// returning `false` stops the walk; nothing else is kept): most entries of a reference file
/// build nothing (no value, no string of their own). `Ok(false)`: valid JSON, not an object.
pub fn for_each_reference(text: &[u8], each: &mut dyn FnMut(&str, Reference) -> bool) -> Result<bool, Error> {
    let mut member = |key: Cow<str>, p: &mut Parser| {
        p.ws();
        let at = p.i;
        let r = match p.peek() {
            Some(b'"') => Reference::Text(p.string()?),
            Some(b'[') => match p.target()? {
                Some(r) => r,
                None => {
                    p.i = at;
                    Reference::Other(p.value(1)?)
                }
            },
            _ => Reference::Other(p.value(1)?),
        };
        Ok(each(&key, r))
    };
    Ok(walk(text, &mut member)?.is_some())
}

// The parser's step for a target, beside the type it builds (parse.rs knows no references).
impl<'a> Parser<'a> {
    /// `[url]` or `[url, offset, length]` at a `[`, offsets in plain digits; `None` (the parser
    /// somewhere inside) for anything else, which the caller reads again as a value.
    fn target(&mut self) -> Result<Option<Reference<'a>>, Error> {
        self.i += 1;
        self.ws();
        if self.peek() != Some(b'"') {
            return Ok(None);
        }
        let url = self.string()?;
        self.ws();
        if self.close(b']') {
            return Ok(Some(Reference::Target(url, None)));
        }
        let mut n = [0u64; 2];
        for v in &mut n {
            if self.peek() != Some(b',') {
                return Ok(None);
            }
            self.i += 1;
            self.ws();
            let start = self.i;
            self.digits();
            let digits = &self.b[start..self.i];
            // Leading zeros, signs, fractions, exponents, overflow: the general path decides.
            let plain = !digits.is_empty() && (digits.len() == 1 || digits[0] != b'0');
            // 19 digits cannot overflow a u64 (a checked multiply is a 128-bit call at "z").
            if !plain || digits.len() > 19 || matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
                return Ok(None);
            }
            *v = digits.iter().fold(0u64, |x, &d| x * 10 + u64::from(d - b'0'));
            self.ws();
        }
        Ok(self.close(b']').then(|| Reference::Target(url, Some((n[0], n[1])))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;

    #[test]
    fn references_are_borrowed_in_the_usual_shapes_and_values_otherwise() {
        let text =
            br#"{"a": "t", "b": ["u"], "c": [ "u\/v" , 3 , 40 ], "d": ["u", 1.5, 2], "e": ["u", 1], "f": {"x": 1}}"#;
        let mut seen = Vec::new();
        let object = for_each_reference(text, &mut |k, r| {
            seen.push(match r {
                Reference::Text(s) => alloc::format!("{k} text {s}"),
                Reference::Target(u, range) => alloc::format!("{k} target {u} {range:?}"),
                Reference::Other(v) => alloc::format!("{k} other {v}"),
            });
            true
        })
        .unwrap();
        assert!(object);
        assert_eq!(
            seen,
            [
                "a text t",
                "b target u None",
                "c target u/v Some((3, 40))",
                "d other [\"u\",1.5,2]",
                "e other [\"u\",1]",
                "f other {\"x\":1}"
            ]
        );
        assert!(!for_each_reference(b"[1]", &mut |_, _| true).unwrap());
        let e = for_each_reference(br#"{"a": ["u", 1, 2"#, &mut |_, _| true).unwrap_err();
        assert!(e.is_eof() && e.to_string().starts_with("EOF while parsing a list") && e.offset == 16, "{e}");
        // Offsets of 19 digits are read in place; 20 (past what a sum of digits can hold
        // unchecked), leading zeros (not JSON) and fractions go the general way.
        let text = br#"{"a": ["u", 9999999999999999999, 1], "b": ["u", 18446744073709551615, 1], "c": ["u", 0, 0]}"#;
        let mut seen = Vec::new();
        for_each_reference(text, &mut |k, r| {
            seen.push(match r {
                Reference::Target(u, range) => alloc::format!("{k} target {u} {range:?}"),
                Reference::Other(v) => alloc::format!("{k} other {v}"),
                Reference::Text(t) => alloc::format!("{k} text {t}"),
            });
            true
        })
        .unwrap();
        assert_eq!(seen[0], "a target u Some((9999999999999999999, 1))");
        assert_eq!(seen[1], "b other [\"u\",18446744073709551615,1]");
        assert_eq!(seen[2], "c target u Some((0, 0))");
        let e = for_each_reference(br#"{"a": ["u", 01, 2]}"#, &mut |_, _| true).unwrap_err();
        assert!(e.to_string().starts_with("expected `,` or `]`") && e.offset == 13, "{e}");
    }
}

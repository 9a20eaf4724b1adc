//! The parser: [`parse`], [`validate`], [`Error`] (what is wrong and where), and the byte-level
//! `Parser` that the partial scanners (`scan.rs`, `reference.rs`) drive too.
use super::number::Number;
use super::value::{Map, Value};
use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::ops::Range;

/// Arrays and objects nested deeper than this are refused (the parser recurses).
pub const MAX_DEPTH: usize = 128;

/// What is wrong with a document, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// Byte offset of the offending byte (the length of the text when it ended too soon).
    pub offset: usize,
    pub line: usize,
    pub column: usize,
    what: &'static str,
    eof: bool,
}

impl Error {
    /// The text ended before the value did (a truncated document).
    pub fn is_eof(&self) -> bool {
        self.eof
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at line {} column {} (byte {})", self.what, self.line, self.column, self.offset)
    }
}

/// One JSON document.
pub fn parse(text: &[u8]) -> Result<Value, Error> {
    let s = utf8(text)?;
    let mut p = Parser { s, b: text, i: 0 };
    let v = p.value(0)?;
    p.end()?;
    Ok(v)
}

/// Whether `text` is one JSON document (nothing is built).
pub fn validate(text: &[u8]) -> Result<(), Error> {
    let s = utf8(text)?;
    let mut p = Parser { s, b: text, i: 0 };
    p.skip(0)?;
    p.end()
}

// Here rather than in number.rs: it runs the parser, which builds numbers (no import cycle).
impl Number {
    /// `text` when it is a JSON number.
    pub fn from_text(text: &str) -> Option<Number> {
        let mut p = Parser { s: text, b: text.as_bytes(), i: 0 };
        let end = p.number().ok()?;
        (end.end == text.len()).then(|| Number(text.into()))
    }
}

pub(super) fn utf8(text: &[u8]) -> Result<&str, Error> {
    core::str::from_utf8(text).map_err(|e| error_at(text, e.valid_up_to(), "invalid UTF-8", false))
}

pub(super) fn is_ws_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn error_at(text: &[u8], offset: usize, what: &'static str, eof: bool) -> Error {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
    let column = offset - before.iter().rposition(|&c| c == b'\n').map_or(0, |n| n + 1) + 1;
    Error { offset, line, column, what, eof }
}

pub(super) struct Parser<'a> {
    pub(super) s: &'a str,
    pub(super) b: &'a [u8],
    pub(super) i: usize,
}

impl<'a> Parser<'a> {
    fn fail(&self, what: &'static str) -> Error {
        error_at(self.b, self.i, what, false)
    }
    fn eof(&self, what: &'static str) -> Error {
        error_at(self.b, self.b.len(), what, true)
    }
    // Inlined by hand: the core builds at opt-level "z", where these calls were half the time
    // of indexing a large reference file.
    #[inline(always)]
    pub(super) fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    #[inline(always)]
    pub(super) fn ws(&mut self) {
        if self.b.get(self.i).is_some_and(|&c| c <= b' ') {
            self.ws_run();
        }
    }
    fn ws_run(&mut self) {
        let (b, mut i) = (self.b, self.i);
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        self.i = i;
    }
    /// Past the bytes of a string that need no care: up to a `"`, `\\` or control character.
    #[inline(always)]
    fn plain_run(&mut self) {
        let (b, mut i) = (self.b, self.i);
        while i < b.len() && b[i] != b'"' && b[i] != b'\\' && b[i] >= 0x20 {
            i += 1;
        }
        self.i = i;
    }
    /// Only whitespace may follow the document.
    pub(super) fn end(&mut self) -> Result<(), Error> {
        self.ws();
        if self.i < self.b.len() {
            return Err(self.fail("trailing characters"));
        }
        Ok(())
    }
    fn text(&self, r: Range<usize>) -> Result<&'a str, Error> {
        self.s.get(r).ok_or_else(|| self.fail("invalid UTF-8"))
    }

    pub(super) fn value(&mut self, depth: usize) -> Result<Value, Error> {
        self.ws();
        Ok(match self.peek() {
            None => return Err(self.eof("EOF while parsing a value")),
            Some(b'{') => {
                self.open(depth)?;
                let mut m = Map::new();
                if self.close(b'}') {
                    return Ok(Value::Object(m));
                }
                loop {
                    let k = self.key()?.into_owned();
                    let v = self.value(depth + 1)?;
                    m.0.push((k, v));
                    if self.after_member()? {
                        break;
                    }
                }
                Value::Object(m)
            }
            Some(b'[') => {
                self.open(depth)?;
                let mut a = Vec::new();
                if self.close(b']') {
                    return Ok(Value::Array(a));
                }
                loop {
                    a.push(self.value(depth + 1)?);
                    if self.after_element()? {
                        break;
                    }
                }
                Value::Array(a)
            }
            Some(b'"') => Value::String(self.string()?.into_owned()),
            Some(b't') => self.literal("true", Value::Bool(true))?,
            Some(b'f') => self.literal("false", Value::Bool(false))?,
            Some(b'n') => self.literal("null", Value::Null)?,
            Some(b'-' | b'0'..=b'9') => {
                let r = self.number()?;
                Value::Number(Number(self.text(r)?.into()))
            }
            Some(_) => return Err(self.fail("expected value")),
        })
    }

    /// Like [`Parser::value`], building nothing.
    pub(super) fn skip(&mut self, depth: usize) -> Result<(), Error> {
        self.ws();
        match self.peek() {
            None => return Err(self.eof("EOF while parsing a value")),
            Some(b'{') => {
                self.open(depth)?;
                if !self.close(b'}') {
                    loop {
                        self.ws();
                        if self.peek() != Some(b'"') {
                            return Err(self.key_error());
                        }
                        self.skip_string()?;
                        self.colon()?;
                        self.skip(depth + 1)?;
                        if self.after_member()? {
                            break;
                        }
                    }
                }
            }
            Some(b'[') => {
                self.open(depth)?;
                if !self.close(b']') {
                    loop {
                        self.skip(depth + 1)?;
                        if self.after_element()? {
                            break;
                        }
                    }
                }
            }
            Some(b'"') => self.skip_string()?,
            Some(b't') => self.literal("true", ())?,
            Some(b'f') => self.literal("false", ())?,
            Some(b'n') => self.literal("null", ())?,
            Some(b'-' | b'0'..=b'9') => {
                self.number()?;
            }
            Some(_) => return Err(self.fail("expected value")),
        }
        Ok(())
    }

    /// At `[` or `{`: one level deeper, within the limit.
    pub(super) fn open(&mut self, depth: usize) -> Result<(), Error> {
        if depth >= MAX_DEPTH {
            return Err(self.fail("arrays and objects nested more than 128 deep"));
        }
        self.i += 1;
        Ok(())
    }

    /// An empty array or object closing at once.
    pub(super) fn close(&mut self, c: u8) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            return true;
        }
        false
    }

    fn key_error(&self) -> Error {
        match self.peek() {
            None => self.eof("EOF while parsing an object"),
            Some(_) => self.fail("key must be a string"),
        }
    }

    /// A member's name and the `:` after it.
    pub(super) fn key(&mut self) -> Result<Cow<'a, str>, Error> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(self.key_error());
        }
        let k = self.string()?;
        self.colon()?;
        Ok(k)
    }

    fn colon(&mut self) -> Result<(), Error> {
        self.ws();
        match self.peek() {
            Some(b':') => {
                self.i += 1;
                Ok(())
            }
            None => Err(self.eof("EOF while parsing an object")),
            Some(_) => Err(self.fail("expected `:`")),
        }
    }

    /// After an object's member: `true` at its end.
    pub(super) fn after_member(&mut self) -> Result<bool, Error> {
        self.ws();
        let end = match self.peek() {
            Some(b',') => false,
            Some(b'}') => true,
            None => return Err(self.eof("EOF while parsing an object")),
            Some(_) => return Err(self.fail("expected `,` or `}`")),
        };
        self.i += 1;
        Ok(end)
    }

    /// After an array's element: `true` at its end.
    fn after_element(&mut self) -> Result<bool, Error> {
        self.ws();
        let end = match self.peek() {
            Some(b',') => false,
            Some(b']') => true,
            None => return Err(self.eof("EOF while parsing a list")),
            Some(_) => return Err(self.fail("expected `,` or `]`")),
        };
        self.i += 1;
        Ok(end)
    }

    fn literal<T>(&mut self, word: &'static str, v: T) -> Result<T, Error> {
        let end = self.i + word.len();
        match self.b.get(self.i..end) {
            Some(w) if w == word.as_bytes() => {
                self.i = end;
                Ok(v)
            }
            _ => {
                // Where it goes wrong: the first byte that differs, or the end.
                let rest = self.b.get(self.i..).unwrap_or(&[]);
                let same = rest.iter().zip(word.as_bytes()).take_while(|(a, b)| a == b).count();
                self.i += same;
                if self.i >= self.b.len() {
                    Err(self.eof("EOF while parsing a value"))
                } else {
                    Err(self.fail("expected ident"))
                }
            }
        }
    }

    /// The span of a number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Result<Range<usize>, Error> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            None => return Err(self.eof("EOF while parsing a value")),
            Some(_) => return Err(self.fail("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            self.some_digits()?;
        }
        Ok(start..self.i)
    }
    pub(super) fn digits(&mut self) {
        let (b, mut i) = (self.b, self.i);
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        self.i = i;
    }
    fn some_digits(&mut self) -> Result<(), Error> {
        match self.peek() {
            Some(b'0'..=b'9') => {
                self.digits();
                Ok(())
            }
            None => Err(self.eof("EOF while parsing a value")),
            Some(_) => Err(self.fail("invalid number")),
        }
    }

    /// A string (at its `"`), borrowed from the text when it has no escapes.
    pub(super) fn string(&mut self) -> Result<Cow<'a, str>, Error> {
        self.i += 1;
        let mut run = self.i;
        let mut out: Option<String> = None;
        loop {
            self.plain_run();
            match self.peek() {
                None => return Err(self.eof("EOF while parsing a string")),
                Some(b'"') => {
                    let tail = self.text(run..self.i)?;
                    self.i += 1;
                    return Ok(match out {
                        None => Cow::Borrowed(tail),
                        Some(mut o) => {
                            o.push_str(tail);
                            Cow::Owned(o)
                        }
                    });
                }
                Some(b'\\') => {
                    let o = out.get_or_insert_with(String::new);
                    o.push_str(self.text(run..self.i)?);
                    self.i += 1;
                    o.push(self.escape()?);
                    run = self.i;
                }
                Some(0..=0x1f) => {
                    return Err(self.fail("control character (\\u0000-\\u001F) found while parsing a string"))
                }
                Some(_) => self.i += 1,
            }
        }
    }

    /// Like [`Parser::string`], building nothing.
    fn skip_string(&mut self) -> Result<(), Error> {
        self.i += 1;
        loop {
            self.plain_run();
            match self.peek() {
                None => return Err(self.eof("EOF while parsing a string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.i += 1;
                    self.escape()?;
                }
                Some(0..=0x1f) => {
                    return Err(self.fail("control character (\\u0000-\\u001F) found while parsing a string"))
                }
                Some(_) => self.i += 1,
            }
        }
    }

    /// After a `\`: the character it stands for.
    fn escape(&mut self) -> Result<char, Error> {
        let c = match self.peek() {
            None => return Err(self.eof("EOF while parsing a string")),
            Some(c) => c,
        };
        self.i += 1;
        Ok(match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let at = self.i - 2;
                let hi = self.hex4()?;
                let code = match hi {
                    0xD800..=0xDBFF => {
                        if self.b.get(self.i..self.i + 2) != Some(b"\\u") {
                            self.i = at;
                            return Err(self.fail("lone leading surrogate in hex escape"));
                        }
                        self.i += 2;
                        let lo = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            self.i = at;
                            return Err(self.fail("lone leading surrogate in hex escape"));
                        }
                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                    }
                    0xDC00..=0xDFFF => {
                        self.i = at;
                        return Err(self.fail("lone trailing surrogate in hex escape"));
                    }
                    c => c,
                };
                char::from_u32(code).ok_or_else(|| self.fail("invalid unicode code point"))?
            }
            _ => {
                self.i -= 1;
                return Err(self.fail("invalid escape"));
            }
        })
    }

    fn hex4(&mut self) -> Result<u32, Error> {
        let mut n = 0;
        for _ in 0..4 {
            let d = match self.peek() {
                None => return Err(self.eof("EOF while parsing a string")),
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                Some(_) => return Err(self.fail("invalid escape")),
            };
            n = n * 16 + u32::from(d);
            self.i += 1;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::{for_each_reference, members_at, parse_object_with, Keep};
    use alloc::string::ToString;

    fn err(t: &str) -> Error {
        parse(t.as_bytes()).unwrap_err()
    }

    #[test]
    fn strings() {
        let v = parse(br#""a\"b\\c\/d\b\f\n\r\t\u00e9\u20AC\ud83d\ude00""#).unwrap();
        assert_eq!(v, "a\"b\\c/d\u{8}\u{c}\n\r\t\u{e9}\u{20ac}\u{1f600}");
        assert_eq!(parse("\"é€😀\"".as_bytes()).unwrap(), "é€😀");
        let e = err(r#""\ud83d""#);
        assert!(e.to_string().contains("lone leading surrogate"), "{e}");
        assert_eq!(e.offset, 1);
        assert!(err(r#""\ud83d\u0041""#).to_string().contains("lone leading surrogate"));
        assert!(err(r#""\ude00""#).to_string().contains("lone trailing surrogate"));
        assert!(err(r#""\x""#).to_string().contains("invalid escape"));
        assert!(err(r#""\u12g4""#).to_string().contains("invalid escape"));
        let e = err("\"a\nb\"");
        assert!(e.to_string().contains("control character"), "{e}");
        assert_eq!((e.offset, e.line, e.column), (2, 1, 3));
        let e = parse(b"[\"ok\", \"\xff\"]").unwrap_err();
        assert!(e.to_string().contains("invalid UTF-8"), "{e}");
        assert_eq!(e.offset, 8);
        for (text, why) in [(&b"\"\xc3\""[..], "cut sequence"), (b"\"\xed\xa0\x80\"", "encoded surrogate")] {
            let e = parse(text).unwrap_err();
            assert_eq!((e.what, e.offset), ("invalid UTF-8", 1), "{why}: {e}");
        }
        // Written back as serde_json and JSON.stringify write them.
        let s = Value::from("q\"\\\n\t\u{1}\u{7f}é/");
        assert_eq!(s.to_string(), "\"q\\\"\\\\\\n\\t\\u0001\u{7f}é/\"");
        assert_eq!(parse(s.to_string().as_bytes()).unwrap(), s);
        assert_eq!(s.to_string(), serde_json::to_string("q\"\\\n\t\u{1}\u{7f}é/").unwrap());
    }

    #[test]
    fn documents() {
        let v = parse(b" {\"a\": [1, 2.5, true, false, null, {}, []], \"b\": {\"c\": \"d\"}} \n").unwrap();
        assert_eq!(v["a"][1].as_f64(), Some(2.5));
        assert_eq!(v["a"][2].as_bool(), Some(true));
        assert!(v["a"][4].is_null() && v["zz"].is_null() && v["a"][99].is_null());
        assert_eq!(v.get("b").and_then(|b| b.get("c")), Some(&Value::from("d")));
        assert_eq!(v.to_string(), r#"{"a":[1,2.5,true,false,null,{},[]],"b":{"c":"d"}}"#);
        // Each refused where it goes wrong, saying why; validating agrees with parsing.
        let (value, object) = ("EOF while parsing a value", "EOF while parsing an object");
        for (bad, what, at) in [
            ("", value, 0),
            (" ", value, 1),
            ("{", object, 1),
            ("[1,]", "expected value", 3),
            ("{\"a\":1,}", "key must be a string", 7),
            ("{\"a\" 1}", "expected `:`", 5),
            ("{1:2}", "key must be a string", 1),
            ("[1 2]", "expected `,` or `]`", 3),
            ("tru", value, 3),
            ("nul", value, 3),
            ("{} x", "trailing characters", 3),
            ("[]]", "trailing characters", 2),
        ] {
            let e = err(bad);
            assert_eq!((e.what, e.offset), (what, at), "{bad:?}: {e}");
            assert_eq!(validate(bad.as_bytes()).unwrap_err(), e, "{bad:?}");
        }
        assert!(err("").is_eof() && err("{\"a\": [1, 2").is_eof() && err("\"abc").is_eof() && err("tr").is_eof());
        assert!(!err("[1 2]").is_eof());
    }

    #[test]
    fn error_positions() {
        let e = err("{\n  \"a\": 1,\n  \"b\" 2\n}");
        assert_eq!((e.line, e.column, e.offset), (3, 7, 18));
        assert_eq!(e.to_string(), "expected `:` at line 3 column 7 (byte 18)");
        let e = err("[1, 2");
        assert_eq!(e.offset, 5);
        assert!(e.to_string().starts_with("EOF while parsing a list"), "{e}");
    }

    #[test]
    fn depth_is_limited() {
        let nest = |n: usize| "[".repeat(n) + &"]".repeat(n);
        assert!(parse(nest(MAX_DEPTH).as_bytes()).is_ok());
        assert!(validate(nest(MAX_DEPTH).as_bytes()).is_ok());
        let e = err(&nest(MAX_DEPTH + 1));
        assert!(e.to_string().contains("nested more than 128"), "{e}");
        assert_eq!(e.offset, MAX_DEPTH);
        // Far deeper than a stack would take: refused, not overflowed.
        let deep = "{\"a\":".repeat(100_000);
        let nested = "arrays and objects nested more than 128 deep";
        let at = MAX_DEPTH * "{\"a\":".len();
        for e in [
            parse(deep.as_bytes()).unwrap_err(),
            validate(deep.as_bytes()).unwrap_err(),
            parse_object_with(deep.as_bytes(), |_| Keep::Raw).unwrap_err(),
        ] {
            assert_eq!((e.what, e.offset), (nested, at), "{e}");
        }
    }

    /// Mutated documents: accepted and rejected as serde_json does, and read to the same values.
    #[test]
    fn agrees_with_serde_json_on_mutated_documents() {
        let seeds: [&[u8]; 4] = [
            br#"{"zarr_format": 3, "shape": [10, 20], "fill_value": -1.5e-3, "attributes": {"a\"b": "\u00e9\n", "x": [true, false, null]}}"#,
            br#"{"version": 1, "refs": {"x/0.0": ["data.bin", 0, 128], "x/.zarray": "{\"chunks\": [2]}", "y": "base64:AAE="}}"#,
            b"[ 1 , 2.50 , -0 , 1E+2 , \"\\/\\\\\\b\\f\\r\\t\" , {} , [] ]",
            "{\"caf\u{e9}\": \"\u{1F600}\", \"n\": 123456789012345678901234567890}".as_bytes(),
        ];
        let alphabet = b"{}[]\",:\\ \t\n0123456789eE+-.tfnulrsa/\x7f";
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let (mut accepted, mut rejected) = (0, 0);
        for case in 0..20_000 {
            let mut doc = seeds[case % seeds.len()].to_vec();
            for _ in 0..1 + next(3) {
                let at = next(doc.len() + 1);
                let c = alphabet[next(alphabet.len())];
                match next(3) {
                    0 if at < doc.len() => doc[at] = c,
                    1 if at < doc.len() => {
                        doc.remove(at);
                    }
                    _ => doc.insert(at, c),
                }
            }
            let theirs = serde_json::from_slice::<serde_json::Value>(&doc);
            if theirs.as_ref().is_err_and(|e| e.to_string().contains("number out of range")) {
                continue; // serde_json refuses floats beyond f64; we keep the text
            }
            let ours = parse(&doc);
            let shown = alloc::string::String::from_utf8_lossy(&doc).into_owned();
            assert_eq!(ours.is_ok(), theirs.is_ok(), "{shown:?}: ours {ours:?}, serde_json {theirs:?}");
            // The reference walk (its own paths for strings and targets) judges the same.
            assert_eq!(for_each_reference(&doc, &mut |_, _| true).is_ok(), ours.is_ok(), "{shown:?}");
            // So does the one-pass walk to a nested object; what it finds is what parsing finds.
            let nested = members_at(&doc, &["attributes"]);
            assert_eq!(nested.is_ok(), ours.is_ok(), "{shown:?}");
            if let (Ok(Some(n)), Ok(Value::Object(o))) = (&nested, &ours) {
                let want = o.get("attributes").and_then(Value::as_object);
                assert_eq!(n.found, want.is_some(), "{shown:?}");
                let got: Vec<(&str, Value)> = n.members.iter().map(|(k, v)| (k.as_ref(), parse(v.as_bytes()).unwrap())).collect();
                let want: Vec<(&str, Value)> = want.map(|w| w.iter().map(|(k, v)| (k.as_str(), v.clone())).collect()).unwrap_or_default();
                assert_eq!(got, want, "{shown:?}");
            }
            if let (Ok(v), Ok(t)) = (ours, theirs) {
                let again: serde_json::Value = serde_json::from_str(&v.to_string()).unwrap();
                assert_eq!(again, t, "{shown:?}");
                accepted += 1;
            } else {
                rejected += 1;
            }
        }
        assert!(accepted > 1000 && rejected > 1000, "{accepted} accepted, {rejected} rejected");
    }
}

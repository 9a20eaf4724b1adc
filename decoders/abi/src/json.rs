//! The little JSON the metadata readers (hdf5, tiff) need: the request (parsed) and the
//! answers (written by hand).
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// A number's text (integers stay exact).
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }
    /// A non-negative integer (up to 2^64 - 1).
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Num(t) => t.parse::<u64>().ok().or_else(|| {
                let f = t.parse::<f64>().ok()?;
                (f >= 0.0 && f % 1.0 == 0.0 && f < 18_446_744_073_709_551_616.0).then_some(f as u64)
            }),
            _ => None,
        }
    }
}

/// Parse one JSON document (nesting at most 32 deep).
pub fn parse(text: &[u8]) -> Option<Json> {
    let mut p = Parser { b: text, i: 0 };
    let v = p.value(0)?;
    p.ws();
    (p.i == p.b.len()).then_some(v)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn lit(&mut self, word: &[u8]) -> bool {
        if self.b.get(self.i..self.i + word.len()) == Some(word) {
            self.i += word.len();
            true
        } else {
            false
        }
    }
    fn value(&mut self, depth: usize) -> Option<Json> {
        if depth > 32 {
            return None;
        }
        self.ws();
        match *self.b.get(self.i)? {
            b'n' => self.lit(b"null").then_some(Json::Null),
            b't' => self.lit(b"true").then_some(Json::Bool(true)),
            b'f' => self.lit(b"false").then_some(Json::Bool(false)),
            b'"' => self.string().map(Json::Str),
            b'[' => {
                self.i += 1;
                let mut a = Vec::new();
                if self.eat(b']') {
                    return Some(Json::Arr(a));
                }
                loop {
                    a.push(self.value(depth + 1)?);
                    if self.eat(b']') {
                        return Some(Json::Arr(a));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b'{' => {
                self.i += 1;
                let mut m = Vec::new();
                if self.eat(b'}') {
                    return Some(Json::Obj(m));
                }
                loop {
                    self.ws();
                    let k = self.string()?;
                    if !self.eat(b':') {
                        return None;
                    }
                    let v = self.value(depth + 1)?;
                    m.push((k, v));
                    if self.eat(b'}') {
                        return Some(Json::Obj(m));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            _ => {
                let start = self.i;
                while matches!(self.b.get(self.i), Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')) {
                    self.i += 1;
                }
                let t = core::str::from_utf8(&self.b[start..self.i]).ok()?;
                t.parse::<f64>().ok()?;
                Some(Json::Num(String::from(t)))
            }
        }
    }
    fn string(&mut self) -> Option<String> {
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = *self.b.get(self.i)?;
            self.i += 1;
            match c {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => {
                    let e = *self.b.get(self.i)?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xd800..0xdc00).contains(&cp) && self.lit(b"\\u") {
                                let lo = self.hex4()?;
                                cp = 0x10000 + ((cp - 0xd800) << 10) + lo.checked_sub(0xdc00)?;
                            }
                            char::from_u32(cp)?
                        }
                        _ => return None,
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                _ => out.push(c),
            }
        }
    }
    fn hex4(&mut self) -> Option<u32> {
        let t = self.b.get(self.i..self.i + 4)?;
        self.i += 4;
        u32::from_str_radix(core::str::from_utf8(t).ok()?, 16).ok()
    }
}

/// Append `s` as a JSON string.
pub fn str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Bytes as a JSON string: UTF-8 where valid, else each byte as its Latin-1 character.
pub fn bytes_str(out: &mut String, b: &[u8]) {
    match core::str::from_utf8(b) {
        Ok(s) => str(out, s),
        Err(_) => {
            let s: String = b.iter().map(|&x| x as char).collect();
            str(out, &s)
        }
    }
}

pub fn num(out: &mut String, v: impl core::fmt::Display) {
    let _ = write!(out, "{v}");
}

/// A float as Zarr v3 writes it: a number, or "NaN", "Infinity", "-Infinity".
pub fn f64(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("\"NaN\"");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" });
    } else {
        // Debug: the shortest text that reads back as the same value ("1e300", "0.1", "-0.0").
        let _ = write!(out, "{v:?}");
    }
}

pub fn f32(out: &mut String, v: f32) {
    if v.is_nan() || v.is_infinite() {
        f64(out, v as f64)
    } else {
        let _ = write!(out, "{v:?}");
    }
}

pub fn list(out: &mut String, v: &[u64]) {
    out.push('[');
    for (k, x) in v.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        num(out, x);
    }
    out.push(']');
}

/// Standard base64 (with padding).
pub fn base64(out: &mut String, b: &[u8]) {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out.push('"');
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(T[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out.push('"');
}

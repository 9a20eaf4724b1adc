//! JSON of our own: [`Value`] with insertion-ordered objects ([`Map`]) and numbers kept as
//! their source text ([`Number`]), a parser, and a compact serialiser.
//!
//! - Numbers convert when asked, from their text: [`Number::as_f32`] and [`Number::as_f64`]
//!   are correctly rounded to the type wanted (no double rounding through f64), `as_u64` and
//!   `as_i64` exact for integer text. Serialising writes the text back unchanged, so nothing
//!   here formats a float.
//! - The parser validates UTF-8, escapes (surrogate pairs included) and the number grammar,
//!   refuses more than [`MAX_DEPTH`] nested arrays and objects, and reports the line, column
//!   and byte offset of what is wrong.
//! - [`parse_object_with`] parses a document's top-level object while keeping chosen members
//!   as validated, unparsed text ([`Raw`], read back with [`Fields::raw`]) or skipping them:
//!   a linear scan that allocates nothing per element, so attributes of any size cost one
//!   pass over their bytes.
//!
//! May import: nothing.
use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::ops::Range;

/// Arrays and objects nested deeper than this are refused (the parser recurses).
pub const MAX_DEPTH: usize = 128;

#[derive(Clone, Debug, Default, PartialEq)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

/// A number as written: its text, checked against the JSON grammar.
#[derive(Clone, PartialEq, Eq)]
pub struct Number(Box<str>);

/// An object's members in document order. Lookups are linear and the last of duplicate keys
/// wins; iteration yields every member, duplicates too.
#[derive(Clone, Default)]
pub struct Map(Vec<(String, Value)>);

/// Validated JSON text of one value, not parsed (no whitespace around it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raw(String);

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

// ---------------------------------------------------------------------------------------------
// Numbers

impl Number {
    /// `text` when it is a JSON number.
    pub fn from_text(text: &str) -> Option<Number> {
        let mut p = Parser { s: text, b: text.as_bytes(), i: 0 };
        let end = p.number().ok()?;
        (end.end == text.len()).then(|| Number(text.into()))
    }

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

macro_rules! number_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Number {
            fn from(n: $t) -> Number {
                Number(alloc::format!("{n}").into_boxed_str())
            }
        }
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Number(Number::from(n))
            }
        }
    )*};
}
number_from_int!(u8, u16, u32, u64, usize, i8, i16, i32, i64);

// ---------------------------------------------------------------------------------------------
// Values

/// What [`Value::get`] and indexing accept: an object key or an array position.
pub trait Key {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value>;
}

impl Key for str {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_object()?.get(self)
    }
}

impl Key for String {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        self.as_str().index_into(v)
    }
}

impl Key for usize {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_array()?.get(*self)
    }
}

impl<T: Key + ?Sized> Key for &T {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        (**self).index_into(v)
    }
}

static NULL: Value = Value::Null;

impl Value {
    /// An object's member or an array's element.
    pub fn get<K: Key>(&self, k: K) -> Option<&Value> {
        k.index_into(self)
    }
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }
    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }
    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number()?.as_u64()
    }
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number()?.as_i64()
    }
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number()?.as_f64()
    }
    pub fn as_f32(&self) -> Option<f32> {
        self.as_number()?.as_f32()
    }
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// Compact JSON text (numbers as written).
    pub fn write(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Number(n) => out.push_str(n.as_str()),
            Value::String(s) => write_str(out, s),
            Value::Array(a) => {
                out.push('[');
                for (k, x) in a.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    x.write(out);
                }
                out.push(']');
            }
            Value::Object(o) => o.write(out),
        }
    }
}

/// A missing member or element indexes as `null`.
impl<K: Key> core::ops::Index<K> for Value {
    type Output = Value;
    fn index(&self, k: K) -> &Value {
        k.index_into(self).unwrap_or(&NULL)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write(&mut s);
        f.write_str(&s)
    }
}

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.into())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}
impl From<Number> for Value {
    fn from(n: Number) -> Value {
        Value::Number(n)
    }
}
impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Value {
        Value::Array(a)
    }
}
impl From<Map> for Value {
    fn from(o: Map) -> Value {
        Value::Object(o)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}
impl FromIterator<Value> for Value {
    fn from_iter<I: IntoIterator<Item = Value>>(it: I) -> Value {
        Value::Array(it.into_iter().collect())
    }
}

// ---------------------------------------------------------------------------------------------
// Objects

impl Map {
    pub fn new() -> Map {
        Map(Vec::new())
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn position(&self, k: &str) -> Option<usize> {
        self.0.iter().rposition(|(key, _)| key == k)
    }
    pub fn get(&self, k: &str) -> Option<&Value> {
        self.0.get(self.position(k)?).map(|e| &e.1)
    }
    pub fn get_mut(&mut self, k: &str) -> Option<&mut Value> {
        let i = self.position(k)?;
        self.0.get_mut(i).map(|e| &mut e.1)
    }
    pub fn contains_key(&self, k: &str) -> bool {
        self.position(k).is_some()
    }
    /// Replaces the value of an existing key in place (the old value back); else appends.
    pub fn insert(&mut self, k: String, v: Value) -> Option<Value> {
        match self.position(&k).and_then(|i| self.0.get_mut(i)) {
            Some(e) => Some(core::mem::replace(&mut e.1, v)),
            None => {
                self.0.push((k, v));
                None
            }
        }
    }
    /// Every member named `k` out; the one lookups saw back.
    pub fn remove(&mut self, k: &str) -> Option<Value> {
        let i = self.position(k)?;
        let (_, v) = self.0.remove(i);
        self.0.retain(|(key, _)| key != k);
        Some(v)
    }
    pub fn iter(&self) -> Iter<'_> {
        self.0.iter().map(pair)
    }
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.0.iter().map(|(_, v)| v)
    }
    pub fn write(&self, out: &mut String) {
        out.push('{');
        for (k, (key, v)) in self.0.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            write_str(out, key);
            out.push(':');
            v.write(out);
        }
        out.push('}');
    }
}

pub type Iter<'a> =
    core::iter::Map<core::slice::Iter<'a, (String, Value)>, fn(&'a (String, Value)) -> (&'a String, &'a Value)>;

fn pair(e: &(String, Value)) -> (&String, &Value) {
    (&e.0, &e.1)
}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a String, &'a Value);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = alloc::vec::IntoIter<(String, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<K: Into<String>> FromIterator<(K, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(it: I) -> Map {
        let mut m = Map::new();
        for (k, v) in it {
            m.insert(k.into(), v);
        }
        m
    }
}

/// A missing key indexes as `null`.
impl core::ops::Index<&str> for Map {
    type Output = Value;
    fn index(&self, k: &str) -> &Value {
        self.get(k).unwrap_or(&NULL)
    }
}

/// The same members, whatever their order (as lookups see them).
impl PartialEq for Map {
    fn eq(&self, other: &Map) -> bool {
        let same = |a: &Map, b: &Map| a.0.iter().all(|(k, _)| a.get(k) == b.get(k));
        same(self, other) && same(other, self)
    }
}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.0.iter().map(|(k, v)| (k, v))).finish()
    }
}

impl fmt::Display for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write(&mut s);
        f.write_str(&s)
    }
}

// ---------------------------------------------------------------------------------------------
// Raw text

impl Raw {
    /// `text` (surrounding whitespace dropped) when it is one JSON value.
    pub fn new(text: &str) -> Result<Raw, Error> {
        validate(text.as_bytes())?;
        Ok(Raw(String::from(text.trim_matches(is_ws_char))))
    }
    pub fn empty_object() -> Raw {
        Raw(String::from("{}"))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
    pub fn into_string(self) -> String {
        self.0
    }
    pub fn is_object(&self) -> bool {
        self.0.starts_with('{')
    }
    pub fn is_null(&self) -> bool {
        self.0 == "null"
    }
    /// The value. (The text is valid: this does not fail.)
    pub fn parse(&self) -> Result<Value, Error> {
        parse(self.0.as_bytes())
    }
}

impl fmt::Display for Raw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

// ---------------------------------------------------------------------------------------------
// Serialising

/// `s` as a JSON string literal: `"`, `\` and control characters escaped (as serde_json and
/// `JSON.stringify` do), everything else as is.
pub fn write_str(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut run = 0;
    for (i, c) in s.bytes().enumerate() {
        let esc = match c {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(s.get(run..i).unwrap_or(""));
        if esc.is_empty() {
            out.push_str("\\u00");
            out.push(HEX[(c >> 4) as usize] as char);
            out.push(HEX[(c & 15) as usize] as char);
        } else {
            out.push_str(esc);
        }
        run = i + 1;
    }
    out.push_str(s.get(run..).unwrap_or(""));
    out.push('"');
}

// ---------------------------------------------------------------------------------------------
// Parsing

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

/// What [`parse_object_with`] does with a top-level member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    Parse,
    /// Kept as validated text: [`Fields::raw`].
    Raw,
    /// Validated, dropped.
    Skip,
}

/// A top-level object as [`parse_object_with`] read it.
#[derive(Debug)]
pub struct Fields<'a> {
    text: &'a str,
    /// The members parsed.
    pub object: Map,
    raw: Vec<(Cow<'a, str>, Range<usize>)>,
}

impl<'a> Fields<'a> {
    /// The span in the document of member `k` kept raw (the last one of that name).
    pub fn span(&self, k: &str) -> Option<Range<usize>> {
        self.raw.iter().rev().find(|(key, _)| key == k).map(|(_, r)| r.clone())
    }
    /// The text of member `k` kept raw (the last one of that name).
    pub fn raw(&self, k: &str) -> Option<Raw> {
        self.raw_text(k).map(|t| Raw(String::from(t)))
    }
    /// The same, borrowed from the document.
    pub fn raw_text(&self, k: &str) -> Option<&'a str> {
        self.text.get(self.span(k)?)
    }
    /// Every member kept raw, in document order: name and text.
    pub fn raw_members(&self) -> impl Iterator<Item = (&str, &str)> {
        self.raw.iter().map(|(k, r)| (k.as_ref(), self.text.get(r.clone()).unwrap_or("null")))
    }
}

/// A document's top-level object, each member parsed, kept as text or skipped as `keep` says
/// for its name; `None` when the document is valid JSON but not an object. The whole document
/// is validated whatever is kept.
pub fn parse_object_with<'a>(text: &'a [u8], mut keep: impl FnMut(&str) -> Keep) -> Result<Option<Fields<'a>>, Error> {
    object_with(text, &mut keep)
}

// One copy of the walk, whatever the callers' closures (each copy costs about 2 KB of wasm).
fn object_with<'a>(text: &'a [u8], keep: &mut dyn FnMut(&str) -> Keep) -> Result<Option<Fields<'a>>, Error> {
    let (mut object, mut raw) = (Map::new(), Vec::new());
    let mut member = |key: Cow<'a, str>, p: &mut Parser<'a>| {
        match keep(&key) {
            Keep::Parse => {
                let v = p.value(1)?;
                object.0.push((key.into_owned(), v));
            }
            Keep::Raw => {
                p.ws();
                let start = p.i;
                p.skip(1)?;
                raw.push((key, start..p.i));
            }
            Keep::Skip => p.skip(1)?,
        }
        Ok(true)
    };
    let Some(text) = walk(text, &mut member)? else { return Ok(None) };
    Ok(Some(Fields { text, object, raw }))
}

/// A parser at the `{` of the top-level object of `text`; `None` when the document is valid
/// JSON but not an object.
fn at_object(text: &[u8]) -> Result<Option<Parser<'_>>, Error> {
    let s = utf8(text)?;
    let mut p = Parser { s, b: text, i: 0 };
    p.ws();
    if p.peek() != Some(b'{') {
        p.skip(0)?;
        p.end()?;
        return Ok(None);
    }
    Ok(Some(p))
}

/// What [`members_at`] found: the members of the object at the path, and the other members met
/// on the way there (their level, 0 the top, name and text), all as raw text of the document.
#[derive(Debug, Default)]
pub struct Nested<'a> {
    /// Whether the path led to an object (else `members` is empty).
    pub found: bool,
    pub members: Vec<(Cow<'a, str>, &'a str)>,
    pub beside: Vec<(usize, Cow<'a, str>, &'a str)>,
}

/// The object at `path` inside the top-level object of `text` (each name a member of the object
/// before; of a name given twice, the later, as [`Fields::raw_text`]), read in one pass: a
/// consolidated document's members without scanning it once per level. `None` when the
/// document is valid JSON but not an object. The whole document is validated.
pub fn members_at<'a>(text: &'a [u8], path: &[&str]) -> Result<Option<Nested<'a>>, Error> {
    let Some(mut p) = at_object(text)? else { return Ok(None) };
    let mut out = Nested::default();
    out.found = object_at(&mut p, path, 0, &mut out)?;
    p.end()?;
    Ok(Some(out))
}

fn object_at<'a>(p: &mut Parser<'a>, path: &[&str], level: usize, out: &mut Nested<'a>) -> Result<bool, Error> {
    p.open(level)?;
    let mut found = path.is_empty();
    if !p.close(b'}') {
        loop {
            let key = p.key()?;
            p.ws();
            let start = p.i;
            let on_path = path.first().is_some_and(|n| *n == key);
            if on_path {
                // The later of a name wins: what an earlier one gave is dropped.
                out.members.clear();
                out.beside.retain(|b| b.0 <= level);
            }
            if on_path && p.peek() == Some(b'{') {
                found = object_at(p, &path[1..], level + 1, out)?;
            } else {
                found &= !on_path;
                p.skip(level + 1)?;
                let raw = &p.s[start..p.i];
                if path.is_empty() {
                    out.members.push((key, raw));
                } else {
                    out.beside.push((level, key, raw));
                }
            }
            if p.after_member()? {
                break;
            }
        }
    }
    Ok(found)
}

/// The first member named `name` of the top-level object of `text`, when it is a string: the
/// walk stops there (a node's `node_type` without reading its attributes). `None` for anything
/// else, an invalid document included.
pub fn first_str<'a>(text: &'a [u8], name: &str) -> Option<Cow<'a, str>> {
    let mut found = None;
    let mut member = |key: Cow<'a, str>, p: &mut Parser<'a>| {
        if key != name {
            p.skip(1)?;
            return Ok(true);
        }
        p.ws();
        if p.peek() == Some(b'"') {
            found = Some(p.string()?);
        }
        Ok(false)
    };
    walk(text, &mut member).ok()?;
    found
}

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

/// The top-level object of `text`, each member's name handed to `member` with the parser at its
/// value, which `member` reads and says whether to go on; the text, or `None` when it is valid
/// JSON but not an object.
fn walk<'a>(
    text: &'a [u8],
    member: &mut dyn FnMut(Cow<'a, str>, &mut Parser<'a>) -> Result<bool, Error>,
) -> Result<Option<&'a str>, Error> {
    let Some(mut p) = at_object(text)? else { return Ok(None) };
    let s = p.s;
    p.i += 1;
    if !p.close(b'}') {
        loop {
            let key = p.key()?;
            if !member(key, &mut p)? {
                return Ok(Some(s));
            }
            if p.after_member()? {
                break;
            }
        }
    }
    p.end()?;
    Ok(Some(s))
}

/// Standard base64 (with or without padding), as JSON documents carry bytes; `None` on anything
/// else (a length of 4n + 1 characters included: no bytes end that way).
pub fn base64(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3 + 2);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

fn utf8(text: &[u8]) -> Result<&str, Error> {
    core::str::from_utf8(text).map_err(|e| error_at(text, e.valid_up_to(), "invalid UTF-8", false))
}

fn is_ws_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn error_at(text: &[u8], offset: usize, what: &'static str, eof: bool) -> Error {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
    let column = offset - before.iter().rposition(|&c| c == b'\n').map_or(0, |n| n + 1) + 1;
    Error { offset, line, column, what, eof }
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
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
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    #[inline(always)]
    fn ws(&mut self) {
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
    fn end(&mut self) -> Result<(), Error> {
        self.ws();
        if self.i < self.b.len() {
            return Err(self.fail("trailing characters"));
        }
        Ok(())
    }
    fn text(&self, r: Range<usize>) -> Result<&'a str, Error> {
        self.s.get(r).ok_or_else(|| self.fail("invalid UTF-8"))
    }

    fn value(&mut self, depth: usize) -> Result<Value, Error> {
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
    fn skip(&mut self, depth: usize) -> Result<(), Error> {
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
    fn open(&mut self, depth: usize) -> Result<(), Error> {
        if depth >= MAX_DEPTH {
            return Err(self.fail("arrays and objects nested more than 128 deep"));
        }
        self.i += 1;
        Ok(())
    }

    /// An empty array or object closing at once.
    fn close(&mut self, c: u8) -> bool {
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
    fn key(&mut self) -> Result<Cow<'a, str>, Error> {
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
    fn after_member(&mut self) -> Result<bool, Error> {
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
    fn digits(&mut self) {
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
    fn string(&mut self) -> Result<Cow<'a, str>, Error> {
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

/// `json!` for tests: serde_json's macro, its text read back by this parser.
#[cfg(test)]
macro_rules! json {
    ($($t:tt)+) => {
        $crate::core::json::from_serde(&serde_json::json!($($t)+))
    };
}
#[cfg(test)]
pub(crate) use json;

#[cfg(test)]
pub(crate) fn from_serde(v: &serde_json::Value) -> Value {
    parse(serde_json::to_string(v).unwrap().as_bytes()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn num(t: &str) -> Number {
        match parse(t.as_bytes()).unwrap() {
            Value::Number(n) => n,
            v => panic!("{v:?}"),
        }
    }

    fn err(t: &str) -> Error {
        parse(t.as_bytes()).unwrap_err()
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
        for bad in ["01", "1.", ".5", "+1", "1e", "1e+", "-", "NaN", "Infinity", "0x10", "1.5e3.2", "--1"] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad}");
            assert!(Number::from_text(bad).is_none(), "{bad}");
        }
        assert_eq!(Number::from_text("-12.5E+3").map(|n| n.as_f64()), Some(Some(-12500.0)));
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
        assert!(parse(b"\"\xc3\"").is_err(), "cut sequence");
        assert!(parse(b"\"\xed\xa0\x80\"").is_err(), "encoded surrogate");
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
        for bad in ["", " ", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{1:2}", "[1 2]", "tru", "nul", "{} x", "[]]"] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad:?}");
            assert!(validate(bad.as_bytes()).is_err(), "{bad:?}");
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
        assert!(parse(deep.as_bytes()).is_err());
        assert!(validate(deep.as_bytes()).is_err());
        assert!(parse_object_with(deep.as_bytes(), |_| Keep::Raw).is_err());
    }

    #[test]
    fn duplicate_keys_last_wins() {
        let v = parse(br#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(o.get("a").and_then(Value::as_u64), Some(3));
        assert_eq!(o.len(), 3);
        let mut o = o.clone();
        assert_eq!(o.insert("a".into(), Value::from(4)).and_then(|v| v.as_u64()), Some(3));
        assert_eq!(o["a"].as_u64(), Some(4));
        assert_eq!(o.remove("a").and_then(|v| v.as_u64()), Some(4));
        assert!(!o.contains_key("a"));
        assert_eq!(o.keys().collect::<Vec<_>>(), ["b"]);
        // Equality is by what lookups see.
        let a: Map = [("x", Value::from(1)), ("y", Value::from(2))].into_iter().collect();
        let b: Map = [("y", Value::from(2)), ("x", Value::from(1))].into_iter().collect();
        assert_eq!(a, b);
        assert_ne!(a, Map::new());
    }

    #[test]
    fn raw_members() {
        let text = br#"{"zarr_format": 3, "attributes": {"k": [1, {"x": "\u00e9"}], "n": 1e400},
            "skipped": [1, 2, {"deep": null}], "shape": [4]}"#;
        let keep = |k: &str| match k {
            "attributes" => Keep::Raw,
            "skipped" => Keep::Skip,
            _ => Keep::Parse,
        };
        let f = parse_object_with(text, keep).unwrap().unwrap();
        assert_eq!(f.object.keys().collect::<Vec<_>>(), ["zarr_format", "shape"]);
        let raw = f.raw("attributes").unwrap();
        assert_eq!(raw.as_str(), r#"{"k": [1, {"x": "\u00e9"}], "n": 1e400}"#);
        assert!(raw.is_object());
        assert_eq!(raw.parse().unwrap()["k"][1]["x"], "é");
        assert_eq!(&text[f.span("attributes").unwrap()], raw.as_str().as_bytes());
        assert_eq!(f.raw_members().collect::<Vec<_>>(), [("attributes", raw.as_str())]);
        assert!(f.raw("skipped").is_none());
        // Round trip: the raw text back in a document reads the same.
        let again = alloc::format!("{{\"attributes\":{raw}}}");
        assert_eq!(parse(again.as_bytes()).unwrap()["attributes"], raw.parse().unwrap());
        // Skipped and raw members are validated all the same.
        for bad in [r#"{"attributes": {"a": 01}}"#, r#"{"skipped": ["\ud800"]}"#, r#"{"attributes": [1,]}"#] {
            assert!(parse_object_with(bad.as_bytes(), keep).is_err(), "{bad}");
        }
        assert!(parse_object_with(b"[1, 2]", keep).unwrap().is_none());
        assert!(parse_object_with(b"[1, 2", keep).is_err());
        // The last of duplicates.
        let f = parse_object_with(br#"{"attributes": 1, "attributes": {"b": 2}}"#, keep).unwrap().unwrap();
        assert_eq!(f.raw("attributes").unwrap().as_str(), r#"{"b": 2}"#);
        assert_eq!(Raw::new(" [1] \n").unwrap().as_str(), "[1]");
        assert!(Raw::new("[1").is_err());
    }

    #[test]
    fn serialising_keeps_order_and_text() {
        let t = r#"{"z":1,"a":[0.10,-0,1E+2],"m":{"é":"\"","c":null}}"#;
        assert_eq!(parse(t.as_bytes()).unwrap().to_string(), t);
        let o: Value = vec![Value::from(1u8), Value::from("x"), Value::Null].into_iter().collect();
        assert_eq!(o.to_string(), r#"[1,"x",null]"#);
    }

    #[test]
    fn the_test_macro() {
        let v = json!({"a": [1, 2], "b": 0.1});
        assert_eq!(v["a"][1].as_u64(), Some(2));
        assert_eq!(v["b"].as_f32(), Some(0.1));
    }

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
        assert!(for_each_reference(br#"{"a": ["u", 1, 2"#, &mut |_, _| true).is_err());
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
        assert!(for_each_reference(br#"{"a": ["u", 01, 2]}"#, &mut |_, _| true).is_err());
    }

    #[test]
    fn first_str_stops_at_the_first_member_of_that_name() {
        let doc = br#"{"attributes": {"node_type": "x"}, "node_type": "arr\u0061y", "node_type": "group"}"#;
        assert_eq!(first_str(doc, "node_type").as_deref(), Some("array"));
        assert_eq!(first_str(br#"{"node_type": 3}"#, "node_type"), None);
        assert_eq!(first_str(br#"{"a": 1}"#, "node_type"), None);
        assert_eq!(first_str(br#"["node_type", "array"]"#, "node_type"), None);
        assert_eq!(first_str(br#"{"a": [1,, "node_type": "array"}"#, "node_type"), None);
    }

    #[test]
    fn one_pass_to_a_nested_object() {
        let doc = br#"{"a": 1, "cm": {"kind": "inline", "metadata": {"x": {"k": [1]}, "y": "t"}, "z": null}, "b": [2]}"#;
        let n = members_at(doc, &["cm", "metadata"]).unwrap().unwrap();
        assert!(n.found);
        assert_eq!(n.members.iter().map(|(k, v)| (k.as_ref(), *v)).collect::<Vec<_>>(), [("x", r#"{"k": [1]}"#), ("y", r#""t""#)]);
        let beside: Vec<_> = n.beside.iter().map(|(l, k, v)| (*l, k.as_ref(), *v)).collect();
        assert_eq!(beside, [(0, "a", "1"), (1, "kind", r#""inline""#), (1, "z", "null"), (0, "b", "[2]")]);
        // Of a name given twice the later wins, an object or not.
        let n = members_at(br#"{"m": {"p": 1}, "m": {"q": 2}}"#, &["m"]).unwrap().unwrap();
        assert_eq!(n.members.iter().map(|(k, _)| k.as_ref()).collect::<Vec<_>>(), ["q"]);
        let n = members_at(br#"{"m": {"p": {"r": 1}}, "m": 3}"#, &["m", "p"]).unwrap().unwrap();
        assert!(!n.found && n.members.is_empty() && n.beside.iter().all(|b| b.0 == 0));
        assert!(!members_at(br#"{"m": [1]}"#, &["m"]).unwrap().unwrap().found);
        assert!(members_at(b"[1]", &["m"]).unwrap().is_none());
        assert!(members_at(br#"{"m": {"p": 1}"#, &["m"]).is_err());
        assert!(members_at(br#"{"m": {"p": 1}} x"#, &["m"]).is_err());
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

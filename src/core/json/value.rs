//! [`Value`], its objects ([`Map`]: members in document order), indexing ([`Key`]) and the
//! conversions into values (integers into [`Number`] too).
use super::number::Number;
use super::write::write_str;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

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

/// An object's members in document order. Lookups are linear and the last of duplicate keys
/// wins; iteration yields every member, duplicates too.
#[derive(Clone, Default)]
pub struct Map(pub(super) Vec<(String, Value)>);

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::parse;
    use alloc::string::ToString;
    use alloc::vec;

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
    fn serialising_keeps_order_and_text() {
        let t = r#"{"z":1,"a":[0.10,-0,1E+2],"m":{"é":"\"","c":null}}"#;
        assert_eq!(parse(t.as_bytes()).unwrap().to_string(), t);
        let o: Value = vec![Value::from(1u8), Value::from("x"), Value::Null].into_iter().collect();
        assert_eq!(o.to_string(), r#"[1,"x",null]"#);
    }
}

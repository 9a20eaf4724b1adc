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
mod base64;
mod number;
mod parse;
mod raw;
mod reference;
mod scan;
mod value;
mod write;

pub use base64::base64;
pub use number::Number;
pub use parse::{parse, validate, Error, MAX_DEPTH};
pub use raw::Raw;
pub use reference::{for_each_reference, Reference};
pub use scan::{first_str, members_at, parse_object_with, Fields, Keep, Nested};
pub use value::{Iter, Key, Map, Value};
pub use write::write_str;

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
    #[test]
    fn the_test_macro() {
        let v = json!({"a": [1, 2], "b": 0.1});
        assert_eq!(v["a"][1].as_u64(), Some(2));
        assert_eq!(v["b"].as_f32(), Some(0.1));
    }
}

//! [`Raw`]: validated JSON text of one value, kept unparsed.
use super::parse::{is_ws_char, parse, validate, Error};
use super::value::Value;
use alloc::string::String;
use core::fmt;

/// Validated JSON text of one value, not parsed (no whitespace around it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raw(pub(super) String);

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

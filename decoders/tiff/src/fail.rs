//! What a failed answer carries.
use alloc::format;
use alloc::string::String;

/// A failure the answer carries: a shardfetch error code and the message.
pub struct Fail(pub &'static str, pub String);

pub fn corrupt(why: impl core::fmt::Display) -> Fail {
    Fail("CorruptShard", format!("not a readable TIFF: {why}"))
}

//! The decoders kept outside the module, as codecs reach them (see [`crate::core::external`]).
pub use crate::core::external::*;

//! What reads hand back: chunks and regions as the API returns them, and each piece of a read.
use crate::core::codec::Decoded;
use alloc::vec::Vec;

/// An array chunk or region: little-endian elements, `stride` in elements per axis.
/// For a chunk at the array's edge `shape` is clipped while `stride` may stay the stored
/// chunk's, so `bytes` may hold more elements than `shape` covers.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub bytes: Vec<u8>,
    pub shape: Vec<u64>,
    pub stride: Vec<u64>,
}

/// What a read hands over for one piece of its plan.
#[derive(Debug)]
pub enum Got {
    /// Decoded (a read that decodes here).
    Decoded(Decoded),
    /// The stored bytes, for a decoder elsewhere (a worker).
    Encoded(Vec<u8>),
    /// Not stored: the fill value.
    Absent,
}

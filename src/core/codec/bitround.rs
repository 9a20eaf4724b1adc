//! numcodecs `BitRound` (v3 `numcodecs.bitround`): mantissa bits dropped when encoding, the
//! values stay floats of the same type — nothing to undo.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::Result;

#[derive(Debug)]
pub struct BitRound;

impl Codec for BitRound {
    fn name(&self) -> &str {
        "bitround"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToArray
    }
    fn costly(&self) -> bool {
        false
    }
    fn decode(&self, data: Decoded, _ctx: &Ctx) -> Result<Decoded> {
        Ok(data)
    }
}

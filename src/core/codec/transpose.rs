//! `transpose`: a permutation of the chunk's axes, undone as a change of strides (no copy).
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{invalid, Result};
use crate::core::json::{Map, Value};
use crate::core::metadata::json::shape_of;
use alloc::format;
use alloc::vec::Vec;

/// Encoded axis `k` holds decoded axis `order[k]`.
#[derive(Debug)]
pub struct Transpose {
    pub order: Vec<usize>,
}

impl Transpose {
    pub fn parse(conf: &Map, ndim: usize) -> Result<Transpose> {
        let order: Vec<usize> = match conf.get("order") {
            Some(Value::String(s)) if s == "C" => (0..ndim).collect(),
            Some(Value::String(s)) if s == "F" => (0..ndim).rev().collect(),
            v @ Some(Value::Array(_)) => {
                shape_of(v, "transpose order", true)?.into_iter().map(|x| x as usize).collect()
            }
            _ => return Err(invalid("transpose needs an \"order\"")),
        };
        let mut seen = alloc::vec![false; ndim];
        if order.len() != ndim || order.iter().any(|&i| i >= ndim || core::mem::replace(&mut seen[i], true)) {
            return Err(invalid(format!("transpose order {} is not a permutation of {ndim} axes", crate::core::error::List(&order))));
        }
        Ok(Transpose { order })
    }
}

impl Codec for Transpose {
    fn name(&self) -> &str {
        "transpose"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToArray
    }
    fn encoded_shape(&self, shape: &[u64]) -> Vec<u64> {
        self.order.iter().map(|&i| shape[i]).collect()
    }
    fn costly(&self) -> bool {
        false
    }
    fn decode(&self, data: Decoded, _ctx: &Ctx) -> Result<Decoded> {
        let mut strides = alloc::vec![0; data.strides.len()];
        for (k, &axis) in self.order.iter().enumerate() {
            strides[axis] = data.strides[k];
        }
        Ok(Decoded { strides, ..data })
    }
}

//! numcodecs' `JSON` object codec (`json2`, Zarr v2 `|O` arrays): one JSON list — the
//! elements (nested per axis, as NumPy's `tolist()` gives them), then the dtype string and the
//! shape. Each element is kept as its JSON text (handles into a heap).
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, corrupt_in, Result};
use crate::core::json::{self, Value};
use crate::core::metadata::dtype::{handle, HANDLE};
use crate::core::nd::c_strides;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

#[derive(Debug)]
pub struct Json2;

/// The elements of `v`, nested `depth` levels deep, in C order.
fn flatten<'a>(v: &'a Value, shape: &[u64], out: &mut Vec<&'a Value>) -> Result<()> {
    let Some((&n, rest)) = shape.split_first() else {
        out.push(v);
        return Ok(());
    };
    match v {
        Value::Array(items) if items.len() as u64 == n => items.iter().try_for_each(|x| flatten(x, rest, out)),
        _ => Err(corrupt_in("json2", "the elements do not have the chunk's shape")),
    }
}

impl Codec for Json2 {
    fn name(&self) -> &str {
        "json2"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    fn max_encoded_len(&self, _n: usize) -> usize {
        crate::core::error::MAX_DECODED
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let n = checked_bytes(ctx.shape, 1)?;
        let v = json::parse(&data.bytes).map_err(|e| corrupt_in("json2", format!("not JSON: {e}")))?;
        let Value::Array(mut items) = v else { return Err(corrupt_in("json2", "not a JSON list")) };
        let shape = items.pop().ok_or_else(|| corrupt_in("json2", "no shape"))?;
        items.pop().ok_or_else(|| corrupt_in("json2", "no dtype"))?;
        let shape: Vec<u64> = match &shape {
            Value::Array(s) => {
                s.iter().map(|d| d.as_u64().ok_or_else(|| corrupt_in("json2", "a bad shape"))).collect::<Result<_>>()?
            }
            _ => return Err(corrupt_in("json2", "a bad shape")),
        };
        let count =
            shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d)).ok_or_else(|| corrupt_in("json2", "a bad shape"))?;
        if count != n as u64 {
            return Err(corrupt_in("json2", format!("{count} elements, the chunk has {n}")));
        }
        let elements = Value::Array(items);
        let mut flat = Vec::new();
        match (&elements, shape.is_empty()) {
            // A 0-d chunk: its one element, alone in the list.
            (Value::Array(items), true) => flat.push(items.first().ok_or_else(|| corrupt_in("json2", "no element"))?),
            _ => flatten(&elements, &shape, &mut flat)?,
        }
        let mut handles = crate::core::error::zeroed(checked_bytes(ctx.shape, HANDLE as u64)?)?;
        let mut heap = String::new();
        for (h, x) in handles.chunks_exact_mut(HANDLE).zip(flat) {
            let at = heap.len();
            x.write(&mut heap);
            h.copy_from_slice(&handle(at, heap.len() - at));
        }
        Ok(Decoded { bytes: handles, strides: c_strides(ctx.shape), heap: heap.into_bytes() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metadata::dtype::content;
    use crate::core::metadata::DataType;

    #[test]
    fn lists() {
        // numcodecs.JSON().encode(np.array([["a", 1], [None, [2]]], dtype=object))
        let text = br#"[["a",1],[null,[2]],"|O",[2,2]]"#;
        let ctx = Ctx { shape: &[2, 2], dtype: DataType::Json, limit: 0, decoders: None };
        let d = Json2.decode(Decoded::bytes(text.to_vec()), &ctx).unwrap();
        let got: Vec<&[u8]> = d.bytes.chunks(8).map(|h| content(h, &d.heap).unwrap()).collect();
        assert_eq!(got, [&br#""a""#[..], b"1", b"null", b"[2]"]);
        // Each wrong in one way: CorruptChunk, saying which.
        for (t, why) in [
            (&br#"[["a",1],"|O",[2,2]]"#[..], "the elements do not have the chunk's shape"),
            (b"[", "not JSON"),
            (br#"{"a":1}"#, "not a JSON list"),
            (br#"[1,2,3,"|O",[3]]"#, "3 elements, the chunk has 4"),
        ] {
            let e = Json2.decode(Decoded::bytes(t.to_vec()), &ctx).unwrap_err();
            assert_eq!(e.code, crate::core::error::ErrorCode::CorruptChunk, "{e}");
            assert!(e.message.starts_with("json2: ") && e.message.contains(why), "{why}: {e}");
        }
    }
}

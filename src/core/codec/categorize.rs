//! numcodecs' `Categorize` filter: text stored as small integers, `0` for none of the labels
//! (decoded as empty text), `i + 1` for `labels[i]`.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, corrupt_chunk, err, invalid, zeroed, ErrorCode, Result};
use crate::core::json::{Map, Value};
use crate::core::metadata::dtype::{handle, HANDLE};
use crate::core::metadata::DataType;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

#[derive(Debug)]
pub struct Categorize {
    labels: Vec<String>,
    /// The integer type the codes are stored as.
    codes: DataType,
}

impl Categorize {
    pub fn parse(conf: &Map, decoded: DataType) -> Result<Categorize> {
        let labels = conf.get("labels").and_then(Value::as_array).ok_or_else(|| invalid("categorize needs labels"))?;
        let labels: Vec<String> = labels
            .iter()
            .map(|l| l.as_str().map(String::from).ok_or_else(|| invalid("categorize labels are text")))
            .collect::<Result<_>>()?;
        let codes = match conf.get("astype") {
            None => DataType::UInt8,
            Some(_) => super::numeric::type_option(conf, "astype", "categorize")?.map_or(DataType::UInt8, |t| t.0),
        };
        if !matches!(codes, DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64) {
            return err(ErrorCode::UnsupportedCodec, format!("categorize as {}", codes.name()));
        }
        if !matches!(decoded, DataType::String | DataType::FixedUtf32(_)) {
            return err(ErrorCode::InvalidMetadata, format!("categorize decodes to text, not {}", decoded.name()));
        }
        Ok(Categorize { labels, codes })
    }
}

impl Codec for Categorize {
    fn name(&self) -> &str {
        "categorize"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToArray
    }
    fn encoded_dtype(&self, _decoded: DataType) -> DataType {
        self.codes
    }
    /// Integers in, text out: one table lookup per element, cheaper than a worker's round trip.
    fn costly(&self) -> bool {
        false
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let size = self.codes.size();
        let n = checked_bytes(ctx.shape, 1)?;
        if data.bytes.len() != n * size {
            return Err(corrupt_chunk(format!(
                "categorize: {} bytes of codes, expected {}",
                data.bytes.len(),
                n * size
            )));
        }
        let code = |i: usize| {
            let mut w = [0u8; 8];
            w[..size].copy_from_slice(&data.bytes[i * size..(i + 1) * size]);
            u64::from_le_bytes(w)
        };
        let label = |c: u64| -> &str {
            // Codes that match no label decode as empty text, as numcodecs does.
            usize::try_from(c).ok().and_then(|c| c.checked_sub(1)).and_then(|i| self.labels.get(i)).map_or("", |s| s)
        };
        match ctx.dtype {
            DataType::FixedUtf32(chars) => {
                let width = 4 * chars as usize;
                let mut out = zeroed(checked_bytes(ctx.shape, width as u64)?)?;
                for (i, e) in out.chunks_exact_mut(width).enumerate() {
                    for (k, ch) in label(code(i)).chars().take(chars as usize).enumerate() {
                        e[4 * k..4 * k + 4].copy_from_slice(&(ch as u32).to_le_bytes());
                    }
                }
                Ok(Decoded { bytes: out, ..data })
            }
            _ => {
                // The labels once in the heap; every element a handle to one of them.
                let mut heap = Vec::new();
                let mut at = Vec::with_capacity(self.labels.len() + 1);
                at.push((0, 0));
                for l in &self.labels {
                    at.push((heap.len(), l.len()));
                    heap.extend_from_slice(l.as_bytes());
                }
                let mut out = zeroed(checked_bytes(ctx.shape, HANDLE as u64)?)?;
                for (i, e) in out.chunks_exact_mut(HANDLE).enumerate() {
                    let (o, l) = usize::try_from(code(i)).ok().and_then(|c| at.get(c)).copied().unwrap_or((0, 0));
                    e.copy_from_slice(&handle(o, l));
                }
                Ok(Decoded { bytes: out, strides: data.strides, heap })
            }
        }
    }
}

//! numcodecs `LZMA` in its default `.xz` container (format 1), its check (CRC-32 or CRC-64)
//! verified; decoded by the external `lzma` decoder (xz4rust; `decoders/lzma`). The `.lzma` and
//! raw formats are refused by name.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{err, invalid, ErrorCode, Result};
use crate::core::json::{Map, Value};
use alloc::format;

#[derive(Debug)]
pub struct Lzma;

impl Lzma {
    pub fn parse(conf: &Map) -> Result<Lzma> {
        match conf.get("format").map(|f| (f, f.as_u64())) {
            None | Some((Value::Null, _)) | Some((_, Some(1))) => Ok(Lzma),
            Some((_, Some(2))) => err(ErrorCode::UnsupportedCodec, "unsupported lzma format 2 (.lzma, \"alone\"): only .xz (format 1) is read"),
            Some((_, Some(3))) => err(ErrorCode::UnsupportedCodec, "unsupported lzma format 3 (raw): only .xz (format 1) is read"),
            Some((f, _)) => Err(invalid(format!("lzma format {f}"))),
        }
    }
}

impl Codec for Lzma {
    fn name(&self) -> &str {
        "numcodecs.lzma"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::compressed_bound(n)
    }
    fn decoder(&self) -> Option<&'static str> {
        Some("lzma")
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        Ok(Decoded::bytes(super::external::run(ctx.decoders, "lzma", &data.bytes, &[ctx.limit as f64])?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_other_formats() {
        let conf = |f: u64| crate::core::json::json!({ "format": f }).as_object().unwrap().clone();
        assert_eq!(Lzma::parse(&conf(2)).unwrap_err().code, ErrorCode::UnsupportedCodec);
        assert!(Lzma::parse(&conf(1)).is_ok());
    }
}

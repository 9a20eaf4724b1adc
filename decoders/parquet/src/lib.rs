//! The rows of a Parquet reference file (fsspec's `refs.{k}.parq`, see [`parquet`]) as a
//! decoder module: few datasets are Parquet reference sets, so the reader is fetched when one
//! is opened. `decode(file, [max_rows, limit])` → the rows, each
//! `u8 flags (1: path, 2: raw) · i64 offset · i64 size · [u32 n · path] · [u32 n · raw]`
//! (little-endian), after a `u32` count of rows.
#![forbid(unsafe_code)]
use abi::{count, Failure};

pub mod parquet;
mod unzstd;

abi::export_decoder!(decode);

pub fn decode(data: &[u8], args: &[f64]) -> Result<Vec<u8>, Failure> {
    let max = usize::try_from(count(args, 0, "max_rows")?).unwrap_or(usize::MAX);
    let limit = usize::try_from(count(args, 1, "limit")?).unwrap_or(usize::MAX);
    let rows = parquet::rows("", data, max, limit)?;
    let size = rows.iter().map(|r| 25 + r.path.as_ref().map_or(0, |p| 4 + p.len()) + r.raw.as_ref().map_or(0, |b| 4 + b.len()));
    let size = size.fold(4usize, usize::saturating_add);
    if size > limit.saturating_add(rows.len().saturating_mul(25)) {
        return Err(Failure::too_large(format!("the rows take {size} bytes")));
    }
    let mut out = Vec::new();
    out.try_reserve_exact(size).map_err(|_| Failure::too_large(format!("cannot allocate {size} bytes")))?;
    out.extend_from_slice(&(rows.len() as u32).to_le_bytes());
    for r in rows {
        out.push(u8::from(r.path.is_some()) | (u8::from(r.raw.is_some()) << 1));
        out.extend_from_slice(&r.offset.to_le_bytes());
        out.extend_from_slice(&r.size.to_le_bytes());
        for b in [r.path.as_ref().map(|p| p.as_bytes()), r.raw.as_deref()].into_iter().flatten() {
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(b);
        }
    }
    Ok(out)
}

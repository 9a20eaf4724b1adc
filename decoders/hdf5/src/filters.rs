//! The HDF5 filters no Zarr codec matches, decoded here for the core (op "filter"): LZF
//! (h5py's, 32000), LZ4 in HDF5's block framing (32004), and scale-offset (6).
use abi::Failure;
use alloc::format;
use alloc::vec::Vec;

/// Decode `data` (one chunk as stored) through filter `id` with its client data `cd`, into at
/// most `size` bytes.
pub fn run(id: u64, cd: &[u64], data: &[u8], size: u64) -> Result<Vec<u8>, Failure> {
    let limit = usize::try_from(size).map_err(|_| Failure::too_large("size"))?;
    if limit > 1 << 30 {
        return Err(Failure::too_large(format!("a chunk of {size} bytes")));
    }
    match id {
        32000 => lzf(data, limit),
        32004 => lz4_hdf5(data, limit),
        6 => scale_offset(cd, data, limit),
        _ => Err(Failure::unsupported(format!("HDF5 filter {id} is not decoded by this module"))),
    }
}

fn bad(msg: &str) -> Failure {
    Failure::corrupt(msg)
}

/// LZF (liblzf's format, no header): literal runs and back references.
pub fn lzf(src: &[u8], limit: usize) -> Result<Vec<u8>, Failure> {
    let mut out: Vec<u8> = Vec::new();
    out.try_reserve(limit.min(src.len().saturating_mul(8)).max(64)).map_err(|_| Failure::too_large("memory"))?;
    let mut i = 0usize;
    while i < src.len() {
        let ctrl = src[i] as usize;
        i += 1;
        if ctrl < 32 {
            let n = ctrl + 1;
            let lit = src.get(i..i + n).ok_or_else(|| bad("lzf: a literal run past the input's end"))?;
            if out.len() + n > limit {
                return Err(bad("lzf: decodes to more than the chunk"));
            }
            out.extend_from_slice(lit);
            i += n;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += *src.get(i).ok_or_else(|| bad("lzf: truncated"))? as usize;
                i += 1;
            }
            let low = *src.get(i).ok_or_else(|| bad("lzf: truncated"))? as usize;
            i += 1;
            let back = ((ctrl & 0x1f) << 8) + low + 1;
            len += 2;
            let start = out.len().checked_sub(back).ok_or_else(|| bad("lzf: a reference before the start"))?;
            if out.len() + len > limit {
                return Err(bad("lzf: decodes to more than the chunk"));
            }
            for k in 0..len {
                let b = out[start + k];
                out.push(b);
            }
        }
    }
    Ok(out)
}

/// One LZ4 block (the raw block format) appended to `out`, which may grow by `n` bytes at most.
fn lz4_block(src: &[u8], out: &mut Vec<u8>, n: usize) -> Result<(), Failure> {
    let end = out.len() + n;
    let base = out.len();
    let mut i = 0usize;
    let more = |i: &mut usize, mut v: usize| -> Result<usize, Failure> {
        loop {
            let b = *src.get(*i).ok_or_else(|| bad("lz4: truncated"))?;
            *i += 1;
            v = v.checked_add(b as usize).ok_or_else(|| bad("lz4: a length overflows"))?;
            if b != 255 {
                return Ok(v);
            }
        }
    };
    loop {
        let token = *src.get(i).ok_or_else(|| bad("lz4: truncated"))?;
        i += 1;
        let mut lit = (token >> 4) as usize;
        if lit == 15 {
            lit = more(&mut i, lit)?;
        }
        let l = src.get(i..i.checked_add(lit).unwrap_or(usize::MAX)).ok_or_else(|| bad("lz4: literals past the input"))?;
        if out.len() + lit > end {
            return Err(bad("lz4: a block decodes to more than its size"));
        }
        out.extend_from_slice(l);
        i += lit;
        if i == src.len() {
            break;
        }
        let off = src.get(i..i + 2).map(|b| b[0] as usize | (b[1] as usize) << 8).ok_or_else(|| bad("lz4: truncated"))?;
        i += 2;
        let mut m = (token & 15) as usize;
        if m == 15 {
            m = more(&mut i, m)?;
        }
        m += 4;
        if off == 0 || off > out.len() - base {
            return Err(bad("lz4: an offset before the block's start"));
        }
        if out.len() + m > end {
            return Err(bad("lz4: a block decodes to more than its size"));
        }
        let start = out.len() - off;
        for k in 0..m {
            let b = out[start + k];
            out.push(b);
        }
    }
    if out.len() != end {
        return Err(bad("lz4: a block decodes to less than its size"));
    }
    Ok(())
}

/// HDF5's LZ4 filter: original size (u64 BE), block size (u32 BE), then per block its
/// compressed size (u32 BE) and bytes (stored raw when that size equals the block's).
pub fn lz4_hdf5(src: &[u8], limit: usize) -> Result<Vec<u8>, Failure> {
    let be = |b: &[u8]| b.iter().fold(0u64, |v, &x| v << 8 | x as u64);
    let head = src.get(..12).ok_or_else(|| bad("lz4: no header"))?;
    let total = be(&head[..8]);
    let block = be(&head[8..12]);
    if total > limit as u64 {
        return Err(bad("lz4: the header's size is more than the chunk"));
    }
    if block == 0 && total > 0 {
        return Err(bad("lz4: blocks of 0 bytes"));
    }
    let total = total as usize;
    let mut out: Vec<u8> = Vec::new();
    out.try_reserve_exact(total).map_err(|_| Failure::too_large("memory"))?;
    let mut i = 12usize;
    while out.len() < total {
        let n = (total - out.len()).min(block as usize);
        let c = src.get(i..i + 4).map(be).ok_or_else(|| bad("lz4: truncated"))? as usize;
        i += 4;
        let data = src.get(i..i.checked_add(c).unwrap_or(usize::MAX)).ok_or_else(|| bad("lz4: a block past the input"))?;
        i += c;
        if c == n {
            out.extend_from_slice(data);
        } else {
            lz4_block(data, &mut out, n)?;
        }
    }
    Ok(out)
}

/// Scale-offset (filter 6): per chunk the minimum bits `minbits` (u32 LE), the size of the
/// minimum (1 byte) and the minimum (8 bytes LE), 21 bytes in all, then every element's
/// `minbits` bits, most significant first; values are `minimum + stored` (integers) or
/// `stored / 10^D + minimum` (floats, D-scaling), the all-ones value standing for the fill.
pub fn scale_offset(cd: &[u64], src: &[u8], limit: usize) -> Result<Vec<u8>, Failure> {
    let p = |i: usize| cd.get(i).copied().ok_or_else(|| bad("scale-offset: missing parameters"));
    let scale_type = p(0)?;
    let factor = p(1)? as u32 as i32;
    let n = p(2)? as usize;
    let class = p(3)?;
    let size = p(4)? as usize;
    let signed = p(5)? == 1;
    let be = p(6)? == 1;
    let fill_avail = p(7)? == 1;
    if !matches!(size, 1 | 2 | 4 | 8) || n.checked_mul(size) != Some(limit) {
        return Err(bad("scale-offset: parameters do not match the chunk"));
    }
    // The fill value: the parameters from 8 on, as little-endian 32-bit words.
    let mut fill = [0u8; 8];
    for k in 0..size.div_ceil(4) {
        let w = cd.get(8 + k).copied().unwrap_or(0) as u32;
        fill[4 * k..4 * k + 4].copy_from_slice(&w.to_le_bytes());
    }
    let fill = u64::from_le_bytes(fill);
    let head = src.get(..21).ok_or_else(|| bad("scale-offset: no header"))?;
    let minbits = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    let mlen = (head[4] as usize).min(8);
    let minval = head[5..5 + mlen].iter().rev().fold(0u64, |v, &x| v << 8 | x as u64);
    let bits = 8 * size;
    if minbits > bits {
        return Err(bad("scale-offset: more bits than the type"));
    }
    let data = &src[21..];
    let mut vals: Vec<u64> = Vec::new();
    vals.try_reserve_exact(n).map_err(|_| Failure::too_large("memory"))?;
    if minbits == bits {
        // Stored in full, in the dataset's byte order: nothing to undo.
        let raw = data.get(..limit).ok_or_else(|| bad("scale-offset: truncated"))?;
        return Ok(raw.to_vec());
    }
    if data.len().saturating_mul(8) < n.saturating_mul(minbits) {
        return Err(bad("scale-offset: truncated"));
    }
    let mut bit = 0usize;
    for _ in 0..n {
        let mut v = 0u64;
        for _ in 0..minbits {
            let b = (data[bit / 8] >> (7 - bit % 8)) & 1;
            v = v << 1 | b as u64;
            bit += 1;
        }
        vals.push(v);
    }
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let sentinel = if minbits == 0 { None } else { Some((1u64 << minbits) - 1) };
    let is_fill = |v: u64| fill_avail && sentinel == Some(v);
    let mut out = Vec::with_capacity(limit);
    for v in vals {
        let x: u64 = match (class, scale_type) {
            (0, _) => {
                if is_fill(v) {
                    fill
                } else {
                    v.wrapping_add(minval) & mask
                }
            }
            (1, 0) => {
                let d = 10f64.powi(factor);
                if is_fill(v) {
                    fill
                } else if size == 4 {
                    let min = f32::from_bits(minval as u32);
                    ((v as u32 as i32 as f32) / (d as f32) + min).to_bits() as u64
                } else if size == 8 {
                    let min = f64::from_bits(minval);
                    ((v as i64 as f64) / d + min).to_bits()
                } else {
                    return Err(Failure::unsupported("scale-offset: floats of other than 4 or 8 bytes"));
                }
            }
            _ => return Err(Failure::unsupported("scale-offset: this scale type is not read")),
        };
        let _ = signed;
        let le = x.to_le_bytes();
        if be {
            out.extend(le[..size].iter().rev());
        } else {
            out.extend_from_slice(&le[..size]);
        }
    }
    Ok(out)
}

/// The filters `mask` skipped (ids, in pipeline order) when they are the pipeline's last ones
/// and each can be re-applied without compressing ([`wrap`]); `None` otherwise.
pub fn masked(ids: &[u16], mask: u32) -> Option<Vec<u64>> {
    let skipped: Vec<usize> = (0..ids.len()).filter(|&i| i < 32 && mask & (1 << i) != 0).collect();
    let first = *skipped.first()?;
    let suffix = skipped.len() == ids.len() - first && mask >> ids.len().min(31) == 0;
    let ok = skipped.iter().all(|&i| matches!(ids[i], 1 | 32000));
    (suffix && ok).then(|| skipped.iter().map(|&i| u64::from(ids[i])).collect())
}

/// `data` as filters `ids` (applied in order) store it, without compressing: LZF literal runs,
/// zlib stored blocks.
pub fn wrap(ids: &[u64], data: &[u8]) -> Result<Vec<u8>, Failure> {
    let mut cur = data.to_vec();
    for &id in ids {
        let mut out = Vec::new();
        out.try_reserve(cur.len() + cur.len() / 32 + 16).map_err(|_| Failure::too_large("memory"))?;
        match id {
            32000 => {
                for run in cur.chunks(32) {
                    out.push((run.len() - 1) as u8);
                    out.extend_from_slice(run);
                }
            }
            1 => {
                out.extend_from_slice(&[0x78, 0x01]);
                let blocks: Vec<&[u8]> = if cur.is_empty() { alloc::vec![&[][..]] } else { cur.chunks(65535).collect() };
                for (k, b) in blocks.iter().enumerate() {
                    let n = b.len() as u16;
                    out.push(u8::from(k + 1 == blocks.len()));
                    out.extend_from_slice(&n.to_le_bytes());
                    out.extend_from_slice(&(!n).to_le_bytes());
                    out.extend_from_slice(b);
                }
                let (mut a, mut b) = (1u32, 0u32);
                for &x in &cur {
                    a = (a + u32::from(x)) % 65521;
                    b = (b + a) % 65521;
                }
                out.extend_from_slice(&((b << 16) | a).to_be_bytes());
            }
            _ => return Err(Failure::unsupported(format!("HDF5 filter {id} is not re-applied by this module"))),
        }
        cur = out;
    }
    Ok(cur)
}

#[cfg(test)]
mod wrap_tests {
    use super::*;

    #[test]
    fn wrapped_chunks_decode_to_themselves() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let lzf_wrapped = wrap(&[32000], &data).unwrap();
        assert_eq!(lzf(&lzf_wrapped, data.len()).unwrap(), data);
        assert_eq!(masked(&[2, 32000], 0b10), Some(alloc::vec![32000]));
        assert_eq!(masked(&[1, 2], 0b01), None, "a skipped filter before one applied");
        assert_eq!(masked(&[32001], 1), None, "blosc is not re-applied");
        assert_eq!(masked(&[1], 0b10), None, "a mask naming no filter");
        assert_eq!(wrap(&[1], &[]).unwrap(), [0x78, 0x01, 1, 0, 0, 0xff, 0xff, 0, 0, 0, 1]);
    }
}

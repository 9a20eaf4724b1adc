//! Blosc1 frames: what c-blosc 1.x writes, and so numcodecs' `Blosc` (Zarr v2 `compressor`) and
//! the Zarr v3 `blosc` codec.
//!
//! Layout (all integers little-endian): a 16-byte header (version, versionlz, flags, typesize,
//! nbytes, blocksize, cbytes), then, unless the whole buffer is stored raw (`MEMCPYED`), one
//! `i32` start offset per block, and at each start the block's streams: each an `i32`
//! compressed size and that many bytes, stored raw when the size equals the stream's decoded
//! size. The decoded block is then byte- or bit-unshuffled. Which blocks are split into
//! `typesize` streams follows c-blosc 1.21's decoder exactly (see [`split`]). BloscLZ and the
//! unshuffles are in `shardfetch-kernels`.

use super::lz4::unlz4_into;
use super::zlib::unzlib_into;
use crate::core::zstd::Zstd;
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{corrupt_in, err, zeroed, Error, ErrorCode, Result};
use alloc::format;
use alloc::vec::Vec;

/// The `blosc` codec: the frame header says everything; its configuration is not needed.
#[derive(Debug)]
pub struct Blosc;

impl Codec for Blosc {
    fn name(&self) -> &str {
        "blosc"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        super::compressed_bound(n)
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        Ok(Decoded::bytes(decode(&data.bytes, ctx.limit)?))
    }
}

const HEADER_LEN: usize = 16;
/// The only frame format c-blosc 1.x writes and reads (blosc2 chunks use 3 and above).
const VERSION_FORMAT: u8 = 2;
/// c-blosc 1.x writes 1 for every internal compressor and refuses anything else.
const VERSIONLZ: u8 = 1;
const DOSHUFFLE: u8 = 0x01;
const MEMCPYED: u8 = 0x02;
const DOBITSHUFFLE: u8 = 0x04;
const RESERVED: u8 = 0x08;
const DONT_SPLIT: u8 = 0x10;
/// c-blosc: at most this many streams per block, of at least this many bytes each.
const MAX_SPLITS: usize = 16;
const MIN_BUFFERSIZE: usize = 128;

/// The 16-byte header of a blosc1 frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub versionlz: u8,
    pub flags: u8,
    pub typesize: u8,
    /// Decoded size.
    pub nbytes: u32,
    pub blocksize: u32,
    /// Size of the whole frame, header included.
    pub cbytes: u32,
}

impl Header {
    /// The compressor, from the top three flag bits.
    pub fn compressor(&self) -> Result<Compressor> {
        match self.flags >> 5 {
            0 => Ok(Compressor::BloscLz),
            1 => Ok(Compressor::Lz4),
            2 => err(ErrorCode::UnsupportedCodec, "blosc: the snappy compressor is not supported"),
            3 => Ok(Compressor::Zlib),
            4 => Ok(Compressor::Zstd),
            n => err(ErrorCode::UnsupportedCodec, format!("blosc: unknown compressor id {n}")),
        }
    }
}

/// Blosc's internal compressors that we decode (`lz4hc` writes the `lz4` format).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compressor {
    BloscLz,
    Lz4,
    Zlib,
    Zstd,
}

impl Compressor {
    pub fn name(self) -> &'static str {
        match self {
            Compressor::BloscLz => "blosclz",
            Compressor::Lz4 => "lz4",
            Compressor::Zlib => "zlib",
            Compressor::Zstd => "zstd",
        }
    }
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Read and check the header of `frame`.
pub fn header(frame: &[u8]) -> Result<Header> {
    let field =
        |at| le32(frame, at).ok_or_else(|| Error::new(ErrorCode::CorruptChunk, "blosc: shorter than its header"));
    let h = Header {
        version: *frame.first().ok_or_else(|| Error::new(ErrorCode::CorruptChunk, "blosc: empty frame"))?,
        versionlz: frame.get(1).copied().unwrap_or(0),
        flags: frame.get(2).copied().unwrap_or(0),
        typesize: frame.get(3).copied().unwrap_or(0),
        nbytes: field(4)?,
        blocksize: field(8)?,
        cbytes: field(12)?,
    };
    // c-blosc keeps these in C ints.
    if h.nbytes > i32::MAX as u32 || h.blocksize > i32::MAX as u32 || h.cbytes > i32::MAX as u32 {
        return Err(corrupt_in("blosc", format!("sizes out of range in the header ({} bytes, blocks of {}, {} compressed)", h.nbytes, h.blocksize, h.cbytes)));
    }
    if (h.cbytes as usize) < HEADER_LEN {
        return Err(corrupt_in("blosc", format!("header says the frame has {} bytes, less than its header", h.cbytes)));
    }
    if h.cbytes as usize > frame.len() {
        return Err(corrupt_in("blosc", format!("truncated: the header says {} bytes, got {}", h.cbytes, frame.len())));
    }
    Ok(h)
}

/// Whether a block is stored as `typesize` streams, as c-blosc 1.21's decoder decides it: not if
/// the writer set `DONT_SPLIT`, and (for frames older than that flag) only for typesizes up to 16
/// with at least 128 elements, never for the last, partial block.
fn split(h: &Header, bsize: usize, leftover: bool) -> bool {
    let ts = usize::from(h.typesize);
    h.flags & DONT_SPLIT == 0 && ts <= MAX_SPLITS && bsize / ts >= MIN_BUFFERSIZE && !leftover
}

/// Decode one blosc1 frame to its `nbytes` bytes, refusing (before allocating) frames that
/// claim more than `limit` bytes. Bytes after the header's `cbytes` are ignored, as c-blosc does.
pub fn decode(frame: &[u8], limit: usize) -> Result<Vec<u8>> {
    let h = header(frame)?;
    let frame = &frame[..h.cbytes as usize];
    let nbytes = h.nbytes as usize;
    if nbytes > limit {
        return Err(corrupt_in("blosc", format!("the frame decodes to {nbytes} bytes, more than the {limit} allowed")));
    }
    if nbytes == 0 {
        return Ok(Vec::new());
    }
    if h.version != VERSION_FORMAT {
        return err(
            ErrorCode::UnsupportedCodec,
            format!("blosc: frame format version {} (only blosc1 frames, version 2, are supported)", h.version),
        );
    }
    if h.flags & RESERVED != 0 {
        return Err(corrupt_in("blosc", "reserved flag bit 3 is set"));
    }
    let ts = usize::from(h.typesize);
    let blocksize = h.blocksize as usize;
    if ts == 0 || blocksize == 0 || blocksize > nbytes {
        return Err(corrupt_in("blosc", format!("invalid typesize {ts} or blocksize {blocksize} for {nbytes} bytes")));
    }
    if h.flags & MEMCPYED != 0 {
        // The whole buffer follows the header as is; shuffle flags do not apply.
        let body = match nbytes.checked_add(HEADER_LEN) {
            Some(end) if end == frame.len() => &frame[HEADER_LEN..end],
            _ => {
                return Err(corrupt_in(
                    "blosc",
                    format!("stored frame of {} bytes does not hold {nbytes} bytes", frame.len()),
                ))
            }
        };
        let mut out = Vec::new();
        if out.try_reserve_exact(nbytes).is_err() {
            return err(ErrorCode::TooLarge, format!("cannot allocate {nbytes} bytes"));
        }
        out.extend_from_slice(body);
        return Ok(out);
    }
    let codec = h.compressor()?;
    if h.versionlz != VERSIONLZ {
        return err(
            ErrorCode::UnsupportedCodec,
            format!("blosc: {} format version {} (only 1 is known)", codec.name(), h.versionlz),
        );
    }
    let leftover = nbytes % blocksize;
    let nblocks = nbytes / blocksize + usize::from(leftover > 0);
    match nblocks.checked_mul(4).and_then(|t| t.checked_add(HEADER_LEN)) {
        Some(end) if end <= frame.len() => {}
        _ => return Err(corrupt_in("blosc", format!("{nblocks} block offsets do not fit in {} bytes", frame.len()))),
    }
    let shuffled = (h.flags & DOSHUFFLE != 0 && ts > 1) || h.flags & DOBITSHUFFLE != 0;
    let mut out = zeroed(nbytes)?;
    let mut tmp = if shuffled { zeroed(blocksize)? } else { Vec::new() };
    let mut streams = Streams { codec, zstd: None };
    for (j, dest) in out.chunks_mut(blocksize).enumerate() {
        let start = le32(frame, HEADER_LEN + 4 * j).unwrap_or(u32::MAX) as usize;
        let last = leftover > 0 && j + 1 == nblocks;
        decode_block(&h, frame, start, last, dest, &mut tmp, &mut streams)
            .map_err(|e| Error::new(e.code, format!("{} (block {j} of {nblocks})", e.message)))?;
    }
    Ok(out)
}

/// The internal decompressor, with the zstd decoder kept across streams.
struct Streams {
    codec: Compressor,
    zstd: Option<Zstd>,
}

impl Streams {
    fn decode_into(&mut self, src: &[u8], out: &mut [u8]) -> Result<()> {
        match self.codec {
            Compressor::BloscLz => shardfetch_kernels::blosclz::decompress(src, out).map_err(|m| corrupt_in("blosclz", m)),
            Compressor::Lz4 => unlz4_into(src, out),
            Compressor::Zlib => unzlib_into(src, out),
            Compressor::Zstd => self.zstd.get_or_insert_with(Zstd::new).decode_exact(src, out),
        }
    }
}

/// Decode the block whose streams start at `start` into `dest` (the block's bytes).
fn decode_block(
    h: &Header,
    frame: &[u8],
    start: usize,
    leftover: bool,
    dest: &mut [u8],
    tmp: &mut [u8],
    streams: &mut Streams,
) -> Result<()> {
    let ts = usize::from(h.typesize);
    let bsize = dest.len();
    let doshuffle = h.flags & DOSHUFFLE != 0 && ts > 1;
    let dobitshuffle = !doshuffle && h.flags & DOBITSHUFFLE != 0 && bsize >= ts;
    let nstreams = if split(h, bsize, leftover) { ts } else { 1 };
    if !bsize.is_multiple_of(nstreams) {
        // c-blosc would leave the last bytes undefined; no writer produces this.
        return Err(corrupt_in(
            "blosc",
            format!("a split block of {bsize} bytes is not a whole number of {ts}-byte elements"),
        ));
    }
    let neblock = bsize / nstreams;
    let target = if doshuffle || dobitshuffle {
        tmp.get_mut(..bsize).ok_or_else(|| Error::new(ErrorCode::CorruptChunk, "blosc: block larger than blocksize"))?
    } else {
        &mut *dest
    };
    let mut pos = start;
    for (s, out) in target.chunks_mut(neblock).enumerate() {
        let csize = match le32(frame, pos) {
            Some(c) if c <= i32::MAX as u32 => c as usize,
            Some(c) => return Err(corrupt_in("blosc", format!("stream {s}: negative size {}", c as i32))),
            None => {
                return Err(corrupt_in("blosc", format!("stream {s}: its size at offset {pos} is past the frame end")))
            }
        };
        pos += 4;
        let src = match frame.get(pos..).and_then(|r| r.get(..csize)) {
            Some(src) => src,
            None => {
                return Err(corrupt_in(
                    "blosc",
                    format!("stream {s}: {csize} bytes at offset {pos} run past the frame end"),
                ))
            }
        };
        if csize == neblock {
            out.copy_from_slice(src);
        } else {
            streams
                .decode_into(src, out)
                .map_err(|e| Error::new(e.code, format!("blosc: stream {s}: {}", e.message)))?;
        }
        pos += csize;
    }
    if doshuffle {
        shardfetch_kernels::shuffle::unshuffle(ts, &tmp[..bsize], dest);
    } else if dobitshuffle {
        shardfetch_kernels::bitshuffle::bitunshuffle(ts, &mut tmp[..bsize], dest);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn frame(flags: u8, ts: u8, nbytes: u32, blocksize: u32, body: &[u8]) -> Vec<u8> {
        let mut f = vec![2, 1, flags, ts];
        f.extend_from_slice(&nbytes.to_le_bytes());
        f.extend_from_slice(&blocksize.to_le_bytes());
        f.extend_from_slice(&((16 + body.len()) as u32).to_le_bytes());
        f.extend_from_slice(body);
        f
    }

    #[test]
    fn memcpyed_and_empty() {
        let f = frame(MEMCPYED | DOSHUFFLE, 2, 4, 4, &[1, 2, 3, 4]);
        assert_eq!(decode(&f, 4).unwrap(), [1, 2, 3, 4]);
        assert_eq!(decode(&f, 3).unwrap_err().code, ErrorCode::CorruptChunk);
        let f = frame(MEMCPYED, 1, 0, 0, &[]);
        assert_eq!(decode(&f, 0).unwrap(), [0u8; 0]);
    }

    #[test]
    fn raw_streams_with_shuffle_and_two_blocks() {
        // Two blocks of 4 bytes (typesize 2, not split: too few elements), each one raw stream.
        let mut body = vec![];
        body.extend_from_slice(&24u32.to_le_bytes());
        body.extend_from_slice(&32u32.to_le_bytes());
        body.extend_from_slice(&4u32.to_le_bytes());
        body.extend_from_slice(&[1, 3, 2, 4]);
        body.extend_from_slice(&4u32.to_le_bytes());
        body.extend_from_slice(&[5, 7, 6, 8]);
        let f = frame(DOSHUFFLE, 2, 8, 4, &body);
        assert_eq!(decode(&f, 8).unwrap(), [1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn rejects_bad_headers() {
        let code = |f: &[u8]| decode(f, 1 << 20).unwrap_err().code;
        assert_eq!(code(&[2, 1, 0]), ErrorCode::CorruptChunk);
        let mut f = frame(MEMCPYED, 1, 4, 4, &[1, 2, 3, 4]);
        f.pop();
        assert_eq!(code(&f), ErrorCode::CorruptChunk);
        assert_eq!(code(&frame(0x40, 1, 4, 4, &[0; 8])), ErrorCode::UnsupportedCodec); // snappy
        assert_eq!(code(&frame(0xA0, 1, 4, 4, &[0; 8])), ErrorCode::UnsupportedCodec);
        let mut f = frame(MEMCPYED, 1, 4, 4, &[1, 2, 3, 4]);
        f[0] = 3;
        assert_eq!(code(&f), ErrorCode::UnsupportedCodec);
        assert_eq!(code(&frame(RESERVED, 1, 4, 4, &[0; 8])), ErrorCode::CorruptChunk);
        assert_eq!(code(&frame(0, 1, 4, 0, &[0; 8])), ErrorCode::CorruptChunk);
        assert_eq!(code(&frame(0, 0, 4, 4, &[0; 8])), ErrorCode::CorruptChunk);
        assert_eq!(code(&frame(0, 1, 1 << 30, 1, &[0; 8])), ErrorCode::CorruptChunk);
    }
}

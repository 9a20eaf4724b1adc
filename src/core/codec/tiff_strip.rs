//! `tiff_strip` (bytes→bytes, next to the array→bytes codec): a TIFF's last strip stored at
//! full `RowsPerStrip` height, past the image's last row, decodes to more bytes than its chunk
//! holds; the rows past the image are dropped, as libtiff reads only the rows the image has. A
//! strip that decodes short stays an error (libtiff's too). Configuration `bytes`: a whole
//! strip's size, what the compression before it may decode to.
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{Result, MAX_ALLOC};
use crate::core::json::{Map, Value};

#[derive(Debug)]
pub struct TiffStrip {
    bytes: usize,
}

impl TiffStrip {
    pub fn parse(conf: &Map) -> TiffStrip {
        // Without `bytes` it only crops (the compression's limit stays the chunk's size).
        let bytes = conf.get("bytes").and_then(Value::as_u64).unwrap_or(0);
        TiffStrip { bytes: bytes.min(MAX_ALLOC as u64) as usize }
    }
}

impl Codec for TiffStrip {
    fn name(&self) -> &str {
        "tiff_strip"
    }
    fn kind(&self) -> Kind {
        Kind::BytesToBytes
    }
    fn costly(&self) -> bool {
        false
    }
    fn max_encoded_len(&self, n: usize) -> usize {
        n.max(self.bytes)
    }
    /// `ctx.limit`: what the array→bytes codec after it reads at most (the chunk's rows).
    fn decode(&self, mut data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        data.bytes.truncate(ctx.limit);
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::super::chain::Chain;
    use crate::core::error::ErrorCode;
    use crate::core::json::json;
    use crate::core::metadata::{DataType, Named};

    fn chain(v: crate::core::json::Value) -> Chain {
        let list: alloc::vec::Vec<Named> =
            v.as_array().unwrap().iter().map(|c| Named::parse(c, "codec").unwrap()).collect();
        Chain::parse(&list, 2, DataType::UInt16).unwrap()
    }

    #[test]
    fn a_long_strip_is_cropped_a_short_one_refused() {
        // A strip of 3 rows of 2 uint16 stored for a chunk of the 2 rows the image has left.
        let c = chain(
            json!([{"name":"bytes","configuration":{"endian":"little"}},{"name":"tiff_strip","configuration":{"bytes":12}}]),
        );
        let long: alloc::vec::Vec<u8> = (1..=12).collect();
        assert_eq!(c.decode(long, &[2, 2], None).unwrap().bytes, (1..=8).collect::<alloc::vec::Vec<u8>>());
        let e = c.decode(alloc::vec![0; 6], &[2, 2], None).unwrap_err();
        assert_eq!(e.code, ErrorCode::CorruptChunk);
        assert!(e.message.contains("6 bytes, expected 8"), "{}", e.message);
        // The compression before it may give the whole strip (zlib's limit is the strip's size).
        let c = chain(
            json!([{"name":"bytes"},{"name":"tiff_strip","configuration":{"bytes":12}},{"name":"numcodecs.zlib"}]),
        );
        let z =
            [0x78, 0x01, 0x01, 0x0c, 0x00, 0xf3, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x01, 0x78, 0x00, 0x4f];
        assert_eq!(c.decode(z.to_vec(), &[2, 2], None).unwrap().bytes, (1..=8).collect::<alloc::vec::Vec<u8>>());
        // Without it, the same stream is refused: Zarr's chunks are not cropped.
        let c = chain(json!([{"name":"bytes"},{"name":"numcodecs.zlib"}]));
        assert_eq!(c.decode(z.to_vec(), &[2, 2], None).unwrap_err().code, ErrorCode::CorruptChunk);
    }
}

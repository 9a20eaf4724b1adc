//! Where a [`ByteRange`] lies in an object of known size: the one rule every reader of held
//! bytes (a whole object a server sent, an entry's inflated bytes) and every store over a store
//! (an entry inside an archive inside an archive) applies.
use super::http::{short, ByteRange};
use crate::core::error::Result;
use alloc::format;
use alloc::vec::Vec;

/// Bytes read, with the object's total size when the answer told it.
#[derive(Clone)]
pub struct RangeRead {
    pub bytes: Vec<u8>,
    pub object_size: Option<u64>,
}

/// `(offset, len)` of `range` in the `size`-byte object at `url`, or an error naming it when the
/// range does not lie inside (a tail or head of a shorter object is the whole of it).
pub fn within(url: &str, size: u64, range: ByteRange) -> Result<(u64, u64)> {
    match range {
        ByteRange::Full => Ok((0, size)),
        ByteRange::Range { offset, len } => match offset.checked_add(len) {
            Some(end) if end <= size => Ok((offset, len)),
            _ => Err(short(
                url,
                &format!("bytes {offset}..{} lie beyond the end of the {size}-byte object", offset.saturating_add(len)),
            )),
        },
        ByteRange::Suffix(n) if n > size => {
            Err(short(url, &format!("object has {size} bytes, fewer than the last {n} asked for")))
        }
        ByteRange::Suffix(n) => Ok((size - n, n)),
        ByteRange::Tail(n) => Ok((size - n.min(size), n.min(size))),
        ByteRange::Head(n) | ByteRange::Prefix(n) => Ok((0, n.min(size))),
    }
}

/// `range` of the whole bytes of the object at `url`.
pub fn slice(url: &str, whole: &[u8], range: ByteRange) -> Result<RangeRead> {
    let size = whole.len() as u64;
    let (a, n) = within(url, size, range)?;
    Ok(RangeRead { bytes: whole[a as usize..(a + n) as usize].to_vec(), object_size: Some(size) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::ErrorCode;

    #[test]
    fn ranges_inside_and_outside() {
        let r = |offset, len| ByteRange::Range { offset, len };
        assert_eq!(within("u", 10, ByteRange::Full).unwrap(), (0, 10));
        assert_eq!(within("u", 10, r(2, 8)).unwrap(), (2, 8));
        assert_eq!(within("u", 10, ByteRange::Suffix(3)).unwrap(), (7, 3));
        assert_eq!(within("u", 10, ByteRange::Tail(30)).unwrap(), (0, 10));
        assert_eq!(within("u", 10, ByteRange::Head(30)).unwrap(), (0, 10));
        for bad in [r(2, 9), r(u64::MAX, 2), ByteRange::Suffix(11)] {
            let e = within("https://h/x", 10, bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::CorruptShard);
            assert!(e.message.starts_with("https://h/x: "), "{}", e.message);
        }
        assert_eq!(slice("u", b"abcdef", r(1, 2)).unwrap().bytes, b"bc");
    }
}

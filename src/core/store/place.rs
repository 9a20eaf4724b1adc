//! Where an object inside a layer is ([`Place`]), and a range of it as a range of the object
//! holding it ([`inside`]): a range inside a range, composed in one small function.
use crate::core::error::Result;
use crate::core::transport::range::{slice, within, RangeRead};
use crate::core::transport::ByteRange;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

/// Where an object inside a layer is.
#[derive(Clone, Debug)]
pub enum Place {
    /// `len` bytes at `offset` of the object at `url`.
    Range { url: String, offset: u64, len: u64 },
    /// Bytes held here (an inflated entry, an inline reference).
    Bytes(Rc<Vec<u8>>),
    /// The whole object at this URL (its size unknown until read).
    Whole(String),
    Missing,
}

/// Where `range` of an object at `place` is.
pub enum Inside {
    /// `range` of the object at `url`, whose first `size` bytes (when known) are the object's.
    Range { url: String, range: ByteRange, size: Option<u64> },
    Bytes(RangeRead),
    Missing,
}

/// `range` of the object `url` names, at `place`: a range of the object holding it, or its bytes.
pub fn inside(url: &str, place: Place, range: ByteRange) -> Result<Inside> {
    Ok(match place {
        Place::Missing => Inside::Missing,
        Place::Bytes(b) => Inside::Bytes(slice(url, &b, range)?),
        Place::Whole(outer) => Inside::Range { url: outer, range, size: None },
        Place::Range { url: outer, offset, len: size } => {
            let (o, n) = within(url, size, range)?;
            Inside::Range { url: outer, range: ByteRange::Range { offset: offset + o, len: n }, size: Some(size) }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_of_a_range() {
        let place = || Place::Range { url: "outer".into(), offset: 100, len: 10 };
        let got = |range| match inside("inner", place(), range).unwrap() {
            Inside::Range { url, range: ByteRange::Range { offset, len }, size } => (url, offset, len, size),
            _ => panic!(),
        };
        assert_eq!(got(ByteRange::Full), ("outer".into(), 100, 10, Some(10)));
        assert_eq!(got(ByteRange::Suffix(4)), ("outer".into(), 106, 4, Some(10)));
        assert_eq!(got(ByteRange::Tail(40)), ("outer".into(), 100, 10, Some(10)));
        assert_eq!(got(ByteRange::Range { offset: 2, len: 3 }), ("outer".into(), 102, 3, Some(10)));
        let e = inside("inner", place(), ByteRange::Range { offset: 8, len: 3 }).err().unwrap();
        assert!(e.message.starts_with("inner: "), "{}", e.message);
        assert!(matches!(inside("x", Place::Missing, ByteRange::Full).unwrap(), Inside::Missing));
        match inside("x", Place::Bytes(Rc::new(b"abcd".to_vec())), ByteRange::Suffix(2)).unwrap() {
            Inside::Bytes(r) => assert_eq!((r.bytes, r.object_size), (b"cd".to_vec(), Some(4))),
            _ => panic!(),
        }
    }
}

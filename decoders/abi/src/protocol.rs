//! The metadata readers' protocol, both sides of it: a request is `u32 LE n`, `n` bytes of JSON,
//! then windows of the file the host holds, each `u64 LE offset, u64 LE len, len bytes`; the
//! answer is JSON (`{"need":[[offset, len], …]}` when the reader needs more of the file).
use crate::Failure;
use alloc::vec::Vec;

/// A request's JSON and its windows, as the module reads them.
pub fn request(input: &[u8]) -> Result<(crate::json::Json, Vec<(u64, &[u8])>), Failure> {
    let n = input.get(..4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let n = n.ok_or_else(|| Failure::corrupt("request: no length"))?;
    let text = input.get(4..4usize.saturating_add(n)).ok_or_else(|| Failure::corrupt("request: truncated"))?;
    let req = crate::json::parse(text).ok_or_else(|| Failure::corrupt("request: not JSON"))?;
    let mut windows = Vec::new();
    let mut at = 4 + n;
    while at < input.len() {
        let h = input.get(at..at.saturating_add(16)).ok_or_else(|| Failure::corrupt("request: a window's header is truncated"))?;
        let off = u64::from_le_bytes(h[..8].try_into().unwrap_or([0; 8]));
        let len = u64::from_le_bytes(h[8..].try_into().unwrap_or([0; 8]));
        let len = usize::try_from(len).map_err(|_| Failure::corrupt("request: a window's length"))?;
        let bytes = input.get(at + 16..(at + 16).saturating_add(len)).ok_or_else(|| Failure::corrupt("request: a window is truncated"))?;
        if off.checked_add(len as u64).is_none() {
            return Err(Failure::corrupt("request: a window past 2^64"));
        }
        windows.push((off, bytes));
        at += 16 + len;
    }
    Ok((req, windows))
}

/// A request as the host writes it: `json`, then `windows`.
// (Inlined into each caller: the core's module is 23 bytes smaller so; as a call, this crate's
// opt-level-3 MIR made it 120 bytes larger than the core's own copy was.)
#[inline(always)]
pub fn encode_request<'a>(json: &str, windows: impl IntoIterator<Item = (u64, &'a [u8])> + Clone) -> Vec<u8> {
    let n = 4 + json.len() + windows.clone().into_iter().map(|(_, b)| 16 + b.len()).sum::<usize>();
    let mut out = Vec::with_capacity(n);
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(json.as_bytes());
    for (at, b) in windows {
        out.extend_from_slice(&at.to_le_bytes());
        out.extend_from_slice(&(b.len() as u64).to_le_bytes());
        out.extend_from_slice(b);
    }
    out
}

/// The `len` bytes at `at`, if one of `windows` (`(offset, bytes)`, overlapping or not, in any
/// order) holds them all.
pub fn held<'a>(windows: impl IntoIterator<Item = (u64, &'a [u8])>, at: u64, len: u64) -> Option<&'a [u8]> {
    let len = usize::try_from(len).ok()?;
    // (Not `tails(…).find_map`: the same, but the core's module grew 140 bytes by it.)
    windows.into_iter().find_map(|(w, b)| b.get(usize::try_from(at.checked_sub(w)?).ok()?..)?.get(..len))
}

/// The bytes from `at` to the end of each of `windows` holding offset `at` (a window ending
/// at `at` gives an empty tail).
pub fn tails<'a>(windows: impl IntoIterator<Item = (u64, &'a [u8])>, at: u64) -> impl Iterator<Item = &'a [u8]> {
    windows.into_iter().filter_map(move |(w, b)| b.get(usize::try_from(at.checked_sub(w)?).ok()?..))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_back_as_written() {
        let (a, b) = (&b"abcdef"[..], &b"xyz"[..]);
        let input = encode_request("{\"op\":\"node\",\"path\":\"g/v\"}", [(100, a), (u64::MAX - 3, b)]);
        assert_eq!(input.len(), 4 + 26 + 16 + 6 + 16 + 3);
        let (req, windows) = request(&input).unwrap();
        assert_eq!(req.get("path").and_then(crate::json::Json::as_str), Some("g/v"));
        assert_eq!(windows, [(100, a), (u64::MAX - 3, b)]);
        let empty = encode_request("{}", []);
        let (req, windows) = request(&empty).unwrap();
        assert_eq!((req, windows.len()), (crate::json::Json::Obj(Vec::new()), 0));
    }

    #[test]
    fn malformed_requests_are_failures_that_say_why() {
        let good = encode_request("{}", [(8, &b"abcd"[..])]);
        let why = |input: &[u8]| request(input).err().map(|f| (f.code, f.message));
        let corrupt = |m: &str| Some((crate::CORRUPT, alloc::string::String::from(m)));
        assert_eq!(why(&good[..3]), corrupt("request: no length"));
        assert_eq!(why(&good[..5]), corrupt("request: truncated"));
        assert_eq!(why(&[1, 0, 0, 0, b'{']), corrupt("request: not JSON"));
        assert_eq!(why(&good[..6 + 10]), corrupt("request: a window's header is truncated"));
        assert_eq!(why(&good[..good.len() - 1]), corrupt("request: a window is truncated"));
        let past = encode_request("{}", [(u64::MAX - 1, &b"ab"[..])]);
        assert_eq!(why(&past), corrupt("request: a window past 2^64"));
    }

    #[test]
    fn held_finds_the_window_that_holds_all_the_bytes() {
        let w: [(u64, &[u8]); 3] = [(10, b"abcd"), (12, b"CDEFGH"), (100, b"z")];
        assert_eq!(held(w, 10, 4), Some(&b"abcd"[..]));
        assert_eq!(held(w, 12, 2), Some(&b"cd"[..]));
        // The first window holds the start, the second all of it.
        assert_eq!(held(w, 13, 3), Some(&b"DEF"[..]));
        assert_eq!(held(w, 14, 0), Some(&b""[..]));
        assert_eq!(held(w, 18, 1), None);
        assert_eq!(held(w, 9, 1), None);
        assert_eq!(held(w, 100, 2), None);
        assert_eq!(held(w, u64::MAX, u64::MAX), None);
        assert_eq!(tails(w, 13).collect::<Vec<_>>(), [&b"d"[..], &b"DEFGH"[..]]);
        assert_eq!(tails(w, 14).collect::<Vec<_>>(), [&b""[..], &b"EFGH"[..]]);
    }
}

//! A merged read's spans handed out as its answer arrives: the first tiles of a large range
//! decoded while the rest downloads (see [`Streamed`]).
use super::http::{parse_content_range, ByteRange, Progress, Response};
use super::versions::{Version, Versions};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

/// A merged read's spans handed out as the answer's bytes arrive (its [`Progress`]): only from
/// a partial answer that is the range asked for, of the version of the object its spans were
/// located in (the rest of the answer is checked at its end, as every answer is). A retry's
/// body starts again; what was handed out is not handed out twice.
pub struct Streamed {
    pub url: String,
    /// The `Range` header it is the progress of.
    pub range: String,
    pub offset: u64,
    pub len: u64,
    versions: Rc<Versions>,
    /// The object's epoch when its read began.
    epoch: u64,
    /// (input index, offset in the answer, length), in the read's order.
    spans: Vec<(usize, u64, u64)>,
    /// Positions in `spans` by end.
    by_end: Vec<usize>,
    /// Spans handed out so far (the first ones of `by_end`).
    next: Cell<usize>,
    /// Spans arrived, not yet given to the batch's callback.
    pub ready: RefCell<Vec<(usize, Vec<u8>)>>,
}

impl Progress for Streamed {
    fn arrived(&self, head: &Response, body: &[u8]) {
        let k = self.next.get();
        let due = |k: usize| self.by_end.get(k).map(|&p| self.spans[p]).filter(|m| m.1 + m.2 <= body.len() as u64);
        if due(k).is_none() || !self.trusted(head) {
            return;
        }
        let mut k = k;
        let mut ready = self.ready.borrow_mut();
        while let Some((i, at, n)) = due(k) {
            ready.push((i, body[at as usize..(at + n) as usize].to_vec()));
            k += 1;
        }
        self.next.set(k);
    }
}

impl Streamed {
    /// The progress of the read `range` of `url` serving `members` (input index, offset in the
    /// answer, length), when it is a merged read of several spans.
    pub fn of(versions: &Rc<Versions>, url: &str, range: ByteRange, members: &[(usize, u64, Option<u64>)]) -> Option<Rc<Streamed>> {
        let ByteRange::Range { offset, len } = range else { return None };
        if members.len() < 2 || len == 0 {
            return None;
        }
        let spans: Vec<(usize, u64, u64)> = members.iter().map(|m| Some((m.0, m.1, m.2?))).collect::<Option<_>>()?;
        let end = |k: usize| spans[k].1 + spans[k].2;
        let by_end = crate::core::nd::order(spans.len(), &|a, b| end(a) < end(b));
        Some(Rc::new(Streamed {
            url: String::from(url),
            range: format!("bytes={offset}-{}", offset + len - 1),
            offset,
            len,
            versions: versions.clone(),
            epoch: versions.epoch(url),
            spans,
            by_end,
            next: Cell::new(0),
            ready: RefCell::new(Vec::new()),
        }))
    }

    /// Whether `head` is a partial answer with exactly the bytes asked for (by its visible
    /// `Content-Range`, else its length), of the version the spans were located in.
    fn trusted(&self, head: &Response) -> bool {
        let exact = match head.content_range.as_deref() {
            Some(v) => parse_content_range(v).is_some_and(|(a, b, _)| a == self.offset && b.checked_sub(a) == Some(self.len - 1)),
            None => head.content_length == Some(self.len),
        };
        let v = Version::of(head, false, false, Some(&self.range));
        head.status == 206 && exact && self.versions.agrees(&self.url, self.epoch, &v)
    }

    /// Which of the read's spans (in the order `of` was given them) were handed out.
    pub fn handed(&self) -> Vec<bool> {
        let mut out = alloc::vec![false; self.spans.len()];
        self.by_end[..self.next.get()].iter().for_each(|&p| out[p] = true);
        out
    }
}

//! Reads of whole objects: held for readers (one plain GET for all of a shard's chunks), and
//! downloaded once for a server that ignores ranges, kept in the cache and by [`super::wholes::Wholes`].
use super::http::{classify, ByteRange, HttpClient, Method, Status};
use super::range::RangeRead;
use super::wholes::{HeldWhole, LastWhole, Pin};
use super::{Entry, Slot, Transport};
use crate::core::error::Result;
use alloc::rc::Rc;
use alloc::string::ToString;
use alloc::vec::Vec;

impl Transport {
    /// Hold whole objects for the batch of reads under way until the guard is dropped.
    pub fn pin(&self) -> Pin {
        let w = &self.wholes;
        w.batches.set(w.batches.get() + 1);
        Pin { batches: w.batches.clone(), pinned: w.pinned.clone() }
    }

    /// The whole object at `url` when it is held (cached, or by a holder).
    pub fn whole_held(&self, url: &str) -> Option<Rc<Vec<u8>>> {
        if let Some(Entry::Object(w)) = self.cache.borrow_mut().get(&(url.to_string(), Slot::Object)) {
            return Some(w);
        }
        self.wholes.get(url)
    }

    /// Serve every read of `url` from `bytes` while the guard lives (an object read whole by a
    /// store above: an entry of an archive).
    pub fn hold(&self, url: &str, bytes: Vec<u8>) -> Option<HeldWhole> {
        self.wholes.guard(url, Some(Rc::new(bytes)))
    }

    /// Whether a guard holds `url`; if so, one more.
    pub fn held_again(&self, url: &str) -> Option<HeldWhole> {
        if let Some(w) = self.whole_held(url) {
            return self.wholes.guard(url, Some(w));
        }
        None
    }

    /// Read the whole object at `url` with one plain GET and serve every read of it from
    /// those bytes while the guard lives (not cached beyond it). `None` when that did not work
    /// (absent, too large, failed): reads then go their usual way and meet the cause there.
    /// `most`: the bytes the object plausibly has at most; an answer running longer is cut
    /// there (and the reads go their usual way).
    pub async fn hold_whole<C: HttpClient>(&self, c: &C, url: &str, most: Option<u64>) -> Option<HeldWhole> {
        if let Some(g) = self.held_again(url) {
            return Some(g);
        }
        let got = match most {
            Some(n) if n < self.config.max_body => {
                let r = self.send_limited(c, Method::Get, url, None, Some((n, "the object's plausible size"))).await;
                r.and_then(|r| match classify(url, r.status, self.config.treat403_as_missing)? {
                    Status::Missing => Ok(None),
                    Status::Whole | Status::Partial => Ok(Some(RangeRead { object_size: Some(r.body.len() as u64), bytes: r.body })),
                    Status::Refused => Err(super::http::http_error(url, r.status)),
                })
            }
            _ => self.fetch(c, url, ByteRange::Full).await,
        };
        match got {
            Ok(Some(f)) => self.wholes.guard(url, Some(Rc::new(f.bytes))),
            Ok(None) => {
                self.missing(url);
                None
            }
            Err(_) => None,
        }
    }

    /// The whole object at `url`, downloaded once however many reads want it at the same time
    /// (for a server that ignores Range).
    pub(super) async fn whole<C: HttpClient>(&self, c: &C, url: &str) -> Result<Option<Rc<Vec<u8>>>> {
        if let Some(w) = self.whole_held(url) {
            return Ok(Some(w));
        }
        let work = || async {
            match self.fetch(c, url, ByteRange::Full).await? {
                None => Ok(None),
                Some(f) => Ok(Some(self.keep(url, f.bytes))),
            }
        };
        self.wholes.loading.run(url.to_string(), || c.is_aborted(), work).await
    }

    /// A 200 answer to a ranged request: the server ignores Range. Slice it, and keep it for
    /// later reads of this object.
    pub(super) fn keep_whole(&self, url: &str, body: Vec<u8>, range: ByteRange) -> Result<RangeRead> {
        self.range_ignored.set(true);
        let f = super::range::slice(url, &body, range)?;
        self.keep(url, body);
        Ok(f)
    }

    /// Keep a whole object: in the cache within its budget, and for the batches under way.
    fn keep(&self, url: &str, body: Vec<u8>) -> Rc<Vec<u8>> {
        let n = body.len();
        let body = Rc::new(body);
        self.cache.borrow_mut().put((url.to_string(), Slot::Object), Entry::Object(body.clone()), n);
        self.wholes.arrived(url, &body);
        body
    }

    /// Share `last` (the last object a server sent whole) with other transports over the same
    /// container.
    pub fn share_last_whole(&mut self, last: LastWhole) {
        self.wholes.last = last;
    }

    pub(super) fn forget_whole(&self, url: &str) {
        self.wholes.forget(url);
    }
}

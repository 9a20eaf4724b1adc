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

    /// The whole object at `url` when it is held under `stamp` (cached, or by a holder).
    pub fn whole_held(&self, url: &str, stamp: u64) -> Option<Rc<Vec<u8>>> {
        if let Some(Entry::Object(w)) = self.cached(&(url.to_string(), Slot::Object), stamp) {
            return Some(w);
        }
        self.wholes.get(url, stamp)
    }

    /// Serve every read of `url` from `bytes` (read under `stamp`) while the guard lives (an
    /// object read whole by a store above: an entry of an archive).
    pub fn hold(&self, url: &str, bytes: Vec<u8>, stamp: u64) -> Option<HeldWhole> {
        self.wholes.guard(url, Some(Rc::new(bytes)), stamp)
    }

    /// Whether a guard holds `url` under `stamp`; if so, one more.
    pub fn held_again(&self, url: &str, stamp: u64) -> Option<HeldWhole> {
        if let Some(w) = self.whole_held(url, stamp) {
            return self.wholes.guard(url, Some(w), stamp);
        }
        None
    }

    /// Read the whole object at `url` with one plain GET and serve every read of it from
    /// those bytes while the guard lives (not cached beyond it). `None` when that did not work
    /// (absent, too large, failed): reads then go their usual way and meet the cause there.
    /// `most`: the bytes the object plausibly has at most; an answer running longer is cut
    /// there (and the reads go their usual way).
    pub async fn hold_whole<C: HttpClient>(&self, c: &C, url: &str, most: Option<u64>) -> Option<HeldWhole> {
        let stamp = self.stamp(url, false);
        if let Some(g) = self.held_again(url, stamp) {
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
            // (Held only as of the version its read began with: see `versions`.)
            Ok(Some(f)) if self.stamp(url, false) == stamp => self.wholes.guard(url, Some(Rc::new(f.bytes)), stamp),
            Ok(None) => {
                self.missing(url, stamp);
                None
            }
            _ => None,
        }
    }

    /// The whole object at `url`, downloaded once however many reads want it at the same time
    /// (for a server that ignores Range).
    pub(super) async fn whole<C: HttpClient>(&self, c: &C, url: &str) -> Result<Option<Rc<Vec<u8>>>> {
        let stamp = self.stamp(url, false);
        if let Some(w) = self.whole_held(url, stamp) {
            return Ok(Some(w));
        }
        let work = || async {
            match self.fetch(c, url, ByteRange::Full).await? {
                None => Ok(None),
                Some(f) => Ok(Some(self.keep(url, f.bytes, stamp))),
            }
        };
        self.wholes.loading.run((url.to_string(), stamp), || c.is_aborted(), work).await
    }

    /// A 200 answer to a ranged request (read under `stamp`): the server ignores Range. Slice
    /// it, and keep it for later reads of this object.
    pub(super) fn keep_whole(&self, url: &str, body: Vec<u8>, range: ByteRange, stamp: u64) -> Result<RangeRead> {
        self.range_ignored.set(true);
        let f = super::range::slice(url, &body, range)?;
        self.keep(url, body, stamp);
        Ok(f)
    }

    /// Keep a whole object read under `stamp`: in the cache within its budget, and for the
    /// batches under way (not when the object changed meanwhile).
    pub(super) fn keep(&self, url: &str, body: Vec<u8>, stamp: u64) -> Rc<Vec<u8>> {
        let n = body.len();
        let body = Rc::new(body);
        if self.stamp(url, false) == stamp {
            self.put((url.to_string(), Slot::Object), Entry::Object(body.clone()), stamp, false, n);
            self.wholes.arrived(url, &body, stamp);
        }
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

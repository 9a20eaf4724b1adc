//! Many spans of objects wanted together, with as few requests as possible: spans already held
//! need none, spans inside a read under way wait for it, the rest are merged per object across
//! small gaps ([`super::coalesce`]); the unasked bytes of a merged read are held for later.
use super::coalesce::coalesce;
use super::http::{short, ByteRange, HttpClient};
use super::range::RangeRead;
use super::vecmap::VecMap;
use super::streamed::Streamed;
use super::{Entry, Key, Slot, Transport};
use crate::core::error::Result;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::task::Poll;
use futures_util::stream::{self, StreamExt};

/// How many requests one batch keeps in flight (the binding's per-origin limit applies too).
const CONCURRENCY: usize = 32;

/// One request of a batch: `range` of `url`, serving spans (input index, offset in the
/// answer, length; `None`: the whole answer).
type Job = (String, ByteRange, Vec<(usize, u64, Option<u64>)>);

/// Takes a read's [`Streamed`] out of the transport's list when the read ends.
struct Listed<'t>(&'t Transport, Rc<Streamed>);

impl Drop for Listed<'_> {
    fn drop(&mut self) {
        self.0.streamed.borrow_mut().retain(|s| !Rc::ptr_eq(s, &self.1));
    }
}

impl Transport {
    /// Read many spans (`ByteRange::Range` or `Full`) of one or more objects with as few
    /// requests as possible, handing each to `each` as its bytes arrive (`None`: the object
    /// does not exist) — `early`: a merged read's spans each as soon as its own bytes are in
    /// (see [`Streamed`]). An error from `each` stops the batch.
    pub async fn read_spans<C: HttpClient>(
        &self,
        c: &C,
        wanted: &[(String, ByteRange)],
        early: bool,
        mut each: impl FnMut(usize, Result<Option<Vec<u8>>>) -> Result<()>,
    ) -> Result<()> {
        // One copy of the batch per client, whatever the callback (wasm size).
        self.spans_with(c, wanted, early, &mut each).await
    }

    async fn spans_with<C: HttpClient>(
        &self,
        c: &C,
        wanted: &[(String, ByteRange)],
        early: bool,
        each: &mut dyn FnMut(usize, Result<Option<Vec<u8>>>) -> Result<()>,
    ) -> Result<()> {
        let mut by_url: VecMap<&str, Vec<usize>> = VecMap::new();
        for (i, (url, _)) in wanted.iter().enumerate() {
            by_url.get_or_insert_with(url.as_str(), Vec::new).push(i);
        }
        let by_url = by_url.into_vec();
        for (url, _) in &by_url {
            self.revalidate(c, url).await;
        }
        let jobs = self.jobs(by_url, wanted, each)?;
        // A merged read's spans handed out as they arrive, decoded while the rest downloads.
        let streams: Vec<Option<Rc<Streamed>>> =
            jobs.iter().map(|(url, range, members)| early.then(|| Streamed::of(&self.versions, url, *range, members)).flatten()).collect();
        let mut fetches = stream::iter(jobs.into_iter().zip(streams.iter().cloned()).map(|((url, range, members), streamed)| async move {
            let stamp = self.stamp(&url, false);
            let _listed = streamed.clone().map(|s| {
                self.streamed.borrow_mut().push(s.clone());
                Listed(self, s)
            });
            let got = self.read(c, &url, range).await;
            (url, range, got, members, stamp, streamed)
        }))
        .buffer_unordered(CONCURRENCY);
        let arrived = || streams.iter().flatten().flat_map(|s| s.ready.take()).collect::<Vec<_>>();
        loop {
            // The next read that ended, or else the spans arrived meanwhile.
            let next = core::future::poll_fn(|cx| match fetches.poll_next_unpin(cx) {
                Poll::Ready(done) => Poll::Ready(Ok(done)),
                Poll::Pending => match arrived() {
                    early if early.is_empty() => Poll::Pending,
                    early => Poll::Ready(Err(early)),
                },
            })
            .await;
            let (url, range, got, all, stamp, streamed) = match next {
                Err(early) => {
                    early.into_iter().try_for_each(|(i, piece)| each(i, Ok(Some(piece))))?;
                    continue;
                }
                Ok(None) => break,
                Ok(Some(done)) => done,
            };
            // What arrived before the end goes first; those spans are not handed out again.
            arrived().into_iter().try_for_each(|(i, piece)| each(i, Ok(Some(piece))))?;
            let members: Vec<(usize, u64, Option<u64>)> = match &streamed {
                Some(s) => all.iter().zip(s.handed()).filter(|(_, out)| !out).map(|(m, _)| *m).collect(),
                None => all.clone(),
            };
            let fetched = match got {
                Ok(Some(f)) => f,
                // The object went missing (or the read failed): every span of it says so.
                Ok(None) => {
                    members.iter().try_for_each(|m| each(m.0, Ok(None)))?;
                    continue;
                }
                Err(e) => {
                    members.iter().try_for_each(|m| each(m.0, Err(e.clone())))?;
                    continue;
                }
            };
            let n = all.len() as u64;
            self.count(|s| {
                s.spans += n;
                s.merged_requests += u64::from(n > 1);
            });
            let single =
                members.len() == 1 && members[0].1 == 0 && members[0].2.is_none_or(|n| n == fetched.bytes.len() as u64);
            let bytes = Rc::new(fetched.bytes);
            if let ByteRange::Range { offset, len } = range {
                let asked: u64 = all.iter().filter_map(|m| m.2).sum();
                if asked < len {
                    // The gaps may hold spans asked for a moment later (a viewer's next tiles).
                    self.hold_merged(&url, offset, bytes.clone(), stamp);
                }
            }
            let mut whole = Some(bytes);
            for (i, at, len) in members {
                let piece = match (single, len) {
                    // The answer is this span: hand the buffer over (no copy unless held).
                    (true, _) | (_, None) => whole
                        .take()
                        .map(|b| Rc::try_unwrap(b).unwrap_or_else(|kept| (*kept).clone()))
                        .unwrap_or_default(),
                    (false, Some(n)) => match whole.as_ref().and_then(|b| b.get(at as usize..(at + n) as usize)) {
                        Some(p) => p.to_vec(),
                        None => {
                            each(i, Err(short(&url, "short read")))?;
                            continue;
                        }
                    },
                };
                each(i, Ok(Some(piece)))?;
            }
        }
        Ok(())
    }

    /// The requests that read `wanted`: spans held already handed to `each` at once, spans
    /// inside a read under way waiting for it, the rest merged per object.
    fn jobs(
        &self,
        by_url: Vec<(&str, Vec<usize>)>,
        wanted: &[(String, ByteRange)],
        each: &mut dyn FnMut(usize, Result<Option<Vec<u8>>>) -> Result<()>,
    ) -> Result<Vec<Job>> {
        let mut jobs: Vec<Job> = Vec::new();
        for (url, items) in by_url {
            let stamp = self.stamp(url, false);
            let mut spans: Vec<(usize, u64, u64)> = Vec::new();
            let mut held = Vec::new();
            for i in items {
                match wanted[i].1 {
                    ByteRange::Range { offset, len } => match self.held_range(url, offset, len, stamp) {
                        Some(bytes) => held.push((i, bytes)),
                        None => match self.check_len(url, offset, len) {
                            Ok(()) => spans.push((i, offset, len)),
                            Err(e) => each(i, Err(e))?,
                        },
                    },
                    whole => jobs.push((url.into(), whole, alloc::vec![(i, 0, None)])),
                }
            }
            let n = held.len() as u64;
            self.count(|s| {
                s.spans += n;
                s.held_hits += n;
            });
            for (i, bytes) in held {
                each(i, Ok(Some(bytes)))?;
            }
            // Spans inside a read under way (an earlier batch's merged run) wait for it alone:
            // merged with others into a wider range, they would be sent again.
            spans.retain(|&(i, offset, len)| {
                if !self.reading(url, offset, len) {
                    return true;
                }
                jobs.push((url.into(), ByteRange::Range { offset, len }, alloc::vec![(i, 0, Some(len))]));
                false
            });
            if self.range_ignored.get() && !spans.is_empty() {
                // The server sends whole objects anyway: one download serves every span of it.
                let members = spans.iter().map(|&(i, offset, len)| (i, offset, Some(len))).collect();
                jobs.push((url.into(), ByteRange::Full, members));
                continue;
            }
            let offsets: Vec<(u64, u64)> = spans.iter().map(|s| (s.1, s.2)).collect();
            let free = |a, b| !self.reading_any(url, a, b);
            let merge_max = self.config.merge_max.min(self.config.max_body);
            for run in coalesce(&offsets, self.config.merge_gap, merge_max, &free) {
                let members = run.members.iter().map(|&(k, at)| (spans[k].0, at, Some(offsets[k].1))).collect();
                jobs.push((url.into(), ByteRange::Range { offset: run.offset, len: run.len }, members));
            }
        }
        Ok(jobs)
    }

    /// A range read, or a share of one under way that covers it.
    pub(super) async fn shared_range<C: HttpClient>(&self, c: &C, url: &str, offset: u64, len: u64) -> Result<Option<RangeRead>> {
        let end = offset.saturating_add(len);
        let key = (url.to_string(), offset, len);
        let covers = |k: &(String, u64, u64)| k.0 == url && k.1 <= offset && end <= k.1.saturating_add(k.2);
        let work = || async {
            let r = self.fetch(c, url, ByteRange::Range { offset, len }).await?;
            Ok(r.map(Rc::new))
        };
        let ((_, start, _), got) = self.reads.run_covered(key, covers, || c.is_aborted(), work).await?;
        let Some(f) = got else { return Ok(None) };
        if start == offset && f.bytes.len() as u64 == len {
            return Ok(Some(Rc::try_unwrap(f).unwrap_or_else(|shared| (*shared).clone())));
        }
        // Another read's answer: our part of it.
        let from = (offset - start) as usize;
        match f.bytes.get(from..from + len as usize) {
            Some(piece) => Ok(Some(RangeRead { bytes: piece.to_vec(), object_size: f.object_size })),
            None => Err(short(url, "shared read is shorter than its range")),
        }
    }

    /// Hold the answer to a merged read (`bytes` from `offset`, read under `stamp`) whose gaps
    /// hold bytes nobody asked for yet: a later read inside it needs no request.
    pub(super) fn hold_merged(&self, url: &str, offset: u64, bytes: Rc<Vec<u8>>, stamp: u64) {
        let n = bytes.len();
        self.put((url.to_string(), Slot::Held(offset)), Entry::Held(bytes), stamp, false, n);
    }

    /// Whether a range read under way covers `len` bytes at `offset` of `url`.
    fn reading(&self, url: &str, offset: u64, len: u64) -> bool {
        let end = offset.saturating_add(len);
        self.reads.any(|(u, start, n)| u == url && *start <= offset && end <= start.saturating_add(*n))
    }

    /// Whether a range read under way holds any of the bytes `[a, b)` of `url`.
    fn reading_any(&self, url: &str, a: u64, b: u64) -> bool {
        self.reads.any(|(u, start, n)| u == url && *start < b && a < start.saturating_add(*n))
    }

    /// `len` bytes at `offset` of `url` from a held merged read, if one holds them. Held reads
    /// may overlap (a later, smaller one inside an earlier one): any starting up to `merge_max`
    /// before `offset` may cover it.
    pub(super) fn held_range(&self, url: &str, offset: u64, len: u64, stamp: u64) -> Option<Vec<u8>> {
        let end = offset.checked_add(len)?;
        let lo = (url.to_string(), Slot::Held(offset.saturating_sub(self.config.merge_max)));
        let hi = (url.to_string(), Slot::Held(offset));
        let covers = |k: &Key, v: &(Entry, u64)| match (&k.1, v) {
            (Slot::Held(start), (Entry::Held(b), s)) => *s == stamp && start.saturating_add(b.len() as u64) >= end,
            _ => false,
        };
        let (key, value) = self.cache.borrow_mut().find_below(&lo, &hi, covers)?;
        let ((_, Slot::Held(start)), (Entry::Held(bytes), _)) = (key, value) else { return None };
        let from = usize::try_from(offset - start).ok()?;
        Some(bytes.get(from..from.checked_add(usize::try_from(len).ok()?)?)?.to_vec())
    }
}

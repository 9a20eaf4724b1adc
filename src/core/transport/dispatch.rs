//! Requests merged at dispatch: ranged reads of one object waiting behind the origin's limit
//! ([`super::limit`]) that lie near each other leave as one request when a slot frees — by the
//! `mergeGap`/`mergeMax` rules of [`super::coalesce`] — and each waiter is given its slice of
//! the answer as the answer to its own request (a `206` with its own `Content-Range`), so that
//! everything above (versions, retries, errors, a whole object instead of a range) sees what it
//! would have seen alone. A read that merges nothing leaves as before. (The limiter's
//! [`super::limit::dispatch`] sends a request so.)
use super::http::{parse_content_range, Request, Response};
use crate::core::error::Result;
use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::any::Any;
use core::cell::RefCell;
use core::future::poll_fn;
use core::task::{Poll, Waker};

/// Where a waiting ranged request reads, and what it may be merged with: requests of the same
/// URL and `class` (what else must match: headers, condition, limit) whose bytes lie within
/// `gap` of each other, the request staying within `max` bytes.
pub struct Spot {
    pub url: String,
    pub class: String,
    pub offset: u64,
    pub len: u64,
    pub gap: u64,
    pub max: u64,
    /// Whether its caller still wants it (not aborted): a dead request takes none along.
    pub alive: Option<Box<dyn Fn() -> bool>>,
    /// What the client needs of the caller to end a merged request once every one it serves
    /// was given up (its abort signal).
    pub token: Option<Rc<dyn Any>>,
}

impl Spot {
    /// The spot of `req` if it may be merged: a GET of `bytes=a-b` with merging rules.
    pub fn of(
        req: &Request<'_>,
        class: String,
        alive: Option<Box<dyn Fn() -> bool>>,
        token: Option<Rc<dyn Any>>,
    ) -> Option<Spot> {
        let (gap, max) = req.merge?;
        let (a, b) = req.range.as_deref()?.strip_prefix("bytes=")?.split_once('-')?;
        let (offset, last) = (a.parse::<u64>().ok()?, b.parse::<u64>().ok()?);
        let len = last.checked_sub(offset)?.checked_add(1)?;
        (req.method == super::http::Method::Get).then(|| Spot {
            url: req.url.into(),
            class,
            offset,
            len,
            gap,
            max,
            alive,
            token,
        })
    }

    pub(super) fn token(&self) -> Option<Rc<dyn Any>> {
        self.token.clone()
    }

    pub(super) fn span(&self) -> (u64, u64) {
        (self.offset, self.len)
    }

    pub(super) fn alive(&self) -> bool {
        self.alive.as_ref().is_none_or(|f| f())
    }

    /// Whether this waiting request may ride along with `lead`'s.
    pub(super) fn joins(&self, lead: &Spot) -> bool {
        self.url == lead.url && self.class == lead.class && self.alive()
    }
}

enum State {
    Pending(Vec<Waker>),
    /// The answer (its body apart).
    Done(Result<Response>, Rc<Vec<u8>>),
    /// Its request was dropped before an answer: those waiting queue again.
    Abandoned,
}

/// One request serving several waiters: `len` bytes at `offset`, waiter `k` wanting `parts[k]`
/// (offset, length; the lead's first).
pub struct Group {
    pub offset: u64,
    pub len: u64,
    parts: Vec<(u64, u64)>,
    /// Each waiter's [`Spot::token`].
    tokens: Vec<Option<Rc<dyn Any>>>,
    state: RefCell<State>,
}

impl Group {
    pub(super) fn new(offset: u64, len: u64, parts: Vec<(u64, u64)>, tokens: Vec<Option<Rc<dyn Any>>>) -> Self {
        Group { offset, len, parts, tokens, state: RefCell::new(State::Pending(Vec::new())) }
    }

    /// The waiters' tokens, the lead's first.
    pub fn tokens(&self) -> &[Option<Rc<dyn Any>>] {
        &self.tokens
    }

    /// The `Range` header of its request.
    pub fn range(&self) -> String {
        format!("bytes={}-{}", self.offset, self.offset + self.len.max(1) - 1)
    }

    /// How many requests it serves.
    pub fn size(&self) -> usize {
        self.parts.len()
    }

    fn finish(&self, state: State) {
        let old = core::mem::replace(&mut *self.state.borrow_mut(), state);
        if let State::Pending(w) = old {
            w.into_iter().for_each(Waker::wake);
        }
    }

    pub(super) fn abandon(&self) {
        if matches!(*self.state.borrow(), State::Pending(_)) {
            self.finish(State::Abandoned);
        }
    }

    /// Waiter `k`'s answer once the request has one; `None`: it was abandoned.
    pub async fn wait(&self, k: usize) -> Option<Result<Response>> {
        poll_fn(|cx| match &mut *self.state.borrow_mut() {
            State::Pending(w) => {
                w.push(cx.waker().clone());
                Poll::Pending
            }
            State::Done(r, body) => Poll::Ready(Some(self.part(k, r, body))),
            State::Abandoned => Poll::Ready(None),
        })
        .await
    }

    /// What waiter `k` would have been answered alone, of `r` whose body is `body`: of a
    /// partial answer, its bytes (fewer where the object ends sooner; `416` past its end); any
    /// other answer or error as it came.
    fn part(&self, k: usize, r: &Result<Response>, body: &[u8]) -> Result<Response> {
        let as_came = |r: &Response| Ok(Response { body: body.to_vec(), shared: true, ..r.clone_head() });
        let r = match r {
            Ok(r) if r.status == 206 => r,
            Ok(r) => return as_came(r),
            Err(e) => return Err(e.clone()),
        };
        let (offset, len) = self.parts[k];
        let shown = r.content_range.as_deref().map(parse_content_range);
        // The bytes that came: from `offset` on, as many as the body has (or the range names).
        let (came, total) = match shown {
            None => (body.len() as u64, None),
            Some(Some((a, b, total))) if a == self.offset && b >= a => ((b - a + 1).min(body.len() as u64), total),
            // Other bytes than asked for: as they came (the read asks again, then fails).
            Some(_) => return as_came(r),
        };
        let from = offset - self.offset;
        let to = from.saturating_add(len).min(came);
        let total_text = total.map_or_else(|| String::from("*"), |t| format!("{t}"));
        if from >= to {
            let content_range = total.map(|t| format!("bytes */{t}"));
            return Ok(Response {
                status: 416,
                content_range,
                content_length: Some(0),
                shared: true,
                ..r.clone_head()
            });
        }
        let body = body[from as usize..to as usize].to_vec();
        let content_range = shown.map(|_| format!("bytes {offset}-{}/{total_text}", offset + (to - from) - 1));
        Ok(Response { content_range, content_length: Some(to - from), body, shared: true, ..r.clone_head() })
    }

    /// Whether `r` holds every byte of the request, as asked.
    fn whole(&self, r: &Result<Response>, body: &[u8]) -> bool {
        let Ok(r) = r else { return false };
        let shown = r.content_range.as_deref().map(parse_content_range);
        r.status == 206
            && body.len() as u64 == self.len
            && shown.is_none_or(|s| s.is_some_and(|(a, ..)| a == self.offset))
    }
}

/// The request serving a group: dropped without an answer, its group is abandoned.
pub struct Lead(Rc<Group>);

impl Lead {
    pub(super) fn new(group: Rc<Group>) -> Self {
        Lead(group)
    }

    pub fn group(&self) -> &Group {
        &self.0
    }

    /// Hand the answer to the waiters taken along; the lead's own part of it, with the whole
    /// (to keep the bytes between the parts).
    pub fn finish(self, r: Result<Response>) -> Result<Response> {
        let (r, body) = match r {
            Ok(mut r) => {
                let body = Rc::new(core::mem::take(&mut r.body));
                (Ok(r), body)
            }
            Err(e) => (Err(e), Rc::new(Vec::new())),
        };
        let g = &self.0;
        let mut mine = g.part(0, &r, &body);
        if let (Ok(m), true) = (&mut mine, g.whole(&r, &body)) {
            m.held = Some((g.offset, body.clone()));
        }
        // (Unread when no one else waits any more.)
        if Rc::strong_count(g) > 1 {
            g.finish(State::Done(r, body));
        }
        mine.map(|r| Response { shared: false, ..r })
    }
}

impl Drop for Lead {
    fn drop(&mut self) {
        self.0.abandon();
    }
}

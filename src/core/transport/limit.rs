//! A limit on requests in flight with priorities: when the limit is reached, waiting requests
//! start highest priority first (then in arrival order). Browsers fail thousands of concurrent
//! fetches, and their own queue is first come, first served: a viewer's visible tiles should
//! not wait behind tiles that scrolled away. A waiting ranged request may carry a [`Spot`]:
//! when a slot frees, the request granted it takes its waiting neighbours in the same object
//! along ([`super::dispatch`]).
use super::dispatch::{Group, Spot};
use super::http::Response;
use crate::core::error::Result;
use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::cmp::Reverse;
use core::future::{poll_fn, Future};
use core::task::{Poll, Waker};

enum Ticket {
    /// Waiting, until a slot comes free — or, past its deadline, until the origin is found
    /// stuck ([`Limiter::note_stall`]).
    Waiting(Option<Waker>, Option<f64>),
    /// A slot, with the waiting neighbours merged into its request, if any.
    Granted(Option<Rc<Group>>),
    /// Taken along by another waiter's request: its answer carries this one's bytes.
    Joined(Rc<Group>, usize),
    /// Given up: past its deadline, while every request in flight was stalling.
    Expired,
}

type Key = (Reverse<i64>, u64);

/// Waiting requests by (priority, arrival), kept sorted with the next one last (a vector: a
/// `BTreeMap` instance costs more module than this queue ever costs time).
/// A waiting request: its place, its ticket, where it reads (if it may be merged).
type Waiter = (Key, Rc<RefCell<Ticket>>, Option<Rc<Spot>>);

#[derive(Default)]
struct Queue(Vec<Waiter>);

impl Queue {
    fn insert(&mut self, key: Key, t: Rc<RefCell<Ticket>>, spot: Option<Rc<Spot>>) {
        let at = self.0.partition_point(|(k, ..)| *k > key);
        self.0.insert(at, (key, t, spot));
    }
    fn remove(&mut self, key: &Key) -> Option<Rc<RefCell<Ticket>>> {
        let at = self.0.partition_point(|(k, ..)| k > key);
        self.0.get(at).is_some_and(|(k, ..)| k == key).then(|| self.0.remove(at).1)
    }
    fn pop_first(&mut self) -> Option<Waiter> {
        self.0.pop()
    }
    fn retain(&mut self, mut keep: impl FnMut(&Key, &Rc<RefCell<Ticket>>) -> bool) {
        self.0.retain(|(k, t, _)| keep(k, t));
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

pub struct Limiter {
    max: Cell<usize>,
    inflight: Cell<usize>,
    queue: RefCell<Queue>,
    seq: Cell<u64>,
    /// When a request of this origin last received something (an answer, body bytes).
    progress: Cell<Option<f64>>,
}

/// What waiting for a slot gave: the slot (and the group its request serves, if it took
/// waiting neighbours along), or a place in another request's group.
pub enum Slot<'a> {
    Go(Permit<'a>, Option<Lead>),
    Joined(Rc<Group>, usize),
}

pub use super::dispatch::Lead;

/// A slot in flight; dropping it lets the next waiting request start.
pub struct Permit<'a> {
    owner: &'a Limiter,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.owner.release();
    }
}

/// Removes a waiting ticket that is given up (its request aborted), or hands back a slot
/// granted to it that it never used.
struct Waiting<'a> {
    owner: &'a Limiter,
    key: (Reverse<i64>, u64),
    ticket: Rc<RefCell<Ticket>>,
    done: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let ticket = self.ticket.borrow();
        match &*ticket {
            Ticket::Granted(group) => {
                // Those taken along learn that nobody sends their request: they queue again.
                if let Some(g) = group {
                    g.abandon();
                }
                drop(ticket);
                self.owner.release()
            }
            Ticket::Waiting(..) => drop(self.owner.queue.borrow_mut().remove(&self.key)),
            Ticket::Expired | Ticket::Joined(..) => {}
        }
    }
}

impl Limiter {
    pub fn new(max: usize) -> Self {
        Limiter {
            max: Cell::new(max.max(1)),
            inflight: Cell::new(0),
            queue: RefCell::new(Queue::default()),
            seq: Cell::new(0),
            progress: Cell::new(None),
        }
    }

    /// A request of this origin received something at `now` (the client's clock).
    pub fn note_progress(&self, now: f64) {
        self.progress.set(Some(self.progress.get().map_or(now, |p| p.max(now))));
    }

    /// A request of this origin stalled at `now` (nothing for `stall_ms`). If nothing of the
    /// origin has progressed for that long, its slots are held by requests that stall too, and
    /// waiting for one is futile: the waiting requests past their deadline give up (their
    /// `acquire` returns `None`). A silent server thus ends every read within its budget,
    /// however many wait, while a slow but live one keeps them waiting.
    pub fn note_stall(&self, now: f64, stall_ms: f64) {
        if self.progress.get().is_some_and(|p| now - p <= stall_ms) {
            return;
        }
        self.queue.borrow_mut().retain(|_, t| {
            let mut t = t.borrow_mut();
            if !matches!(*t, Ticket::Waiting(_, Some(d)) if d <= now) {
                return true;
            }
            if let Ticket::Waiting(Some(w), _) = core::mem::replace(&mut *t, Ticket::Expired) {
                w.wake();
            }
            false
        });
    }

    pub fn set_max(&self, max: usize) {
        self.max.set(max.max(1));
        while self.inflight.get() < self.max.get() && self.grant_next() {}
    }

    pub fn in_flight(&self) -> usize {
        self.inflight.get()
    }
    pub fn waiting(&self) -> usize {
        self.queue.borrow().len()
    }

    /// Wait for a slot; higher `priority` goes first. `None`: given up past `deadline` (the
    /// client's clock) because the origin was stuck (see [`Limiter::note_stall`]).
    pub async fn acquire(&self, priority: i64, deadline: Option<f64>) -> Option<Permit<'_>> {
        match self.acquire_at(priority, deadline, None).await? {
            Slot::Go(p, _) => Some(p),
            // (Not taken along without a spot.)
            Slot::Joined(..) => None,
        }
    }

    /// [`acquire`](Self::acquire) for a ranged request at `spot`: granted a slot, it may take
    /// waiting neighbours along (the group its request serves); waiting, it may be taken along.
    pub async fn acquire_at(&self, priority: i64, deadline: Option<f64>, spot: Option<Rc<Spot>>) -> Option<Slot<'_>> {
        if self.inflight.get() < self.max.get() && self.queue.borrow().is_empty() {
            self.inflight.set(self.inflight.get() + 1);
            return Some(Slot::Go(Permit { owner: self }, None));
        }
        let seq = self.seq.get();
        self.seq.set(seq + 1);
        let key = (Reverse(priority), seq);
        let ticket = Rc::new(RefCell::new(Ticket::Waiting(None, deadline)));
        self.queue.borrow_mut().insert(key, ticket.clone(), spot);
        let mut waiting = Waiting { owner: self, key, ticket, done: false };
        let got = poll_fn(|cx| match &mut *waiting.ticket.borrow_mut() {
            Ticket::Granted(g) => Poll::Ready(Some(Ok(g.clone()))),
            Ticket::Joined(g, k) => Poll::Ready(Some(Err((g.clone(), *k)))),
            Ticket::Expired => Poll::Ready(None),
            Ticket::Waiting(w, _) => {
                *w = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await;
        waiting.done = true;
        // (A Permit is built only here: one built and dropped would hand on a slot it never held.)
        match got? {
            Ok(group) => Some(Slot::Go(Permit { owner: self }, group.map(Lead::new))),
            Err((group, k)) => Some(Slot::Joined(group, k)),
        }
    }

    fn release(&self) {
        self.inflight.set(self.inflight.get().saturating_sub(1));
        if self.inflight.get() < self.max.get() {
            self.grant_next();
        }
    }

    /// Start the best waiting request, if any, with the waiting neighbours it takes along.
    fn grant_next(&self) -> bool {
        let Some((_, ticket, spot)) = self.queue.borrow_mut().pop_first() else { return false };
        self.inflight.set(self.inflight.get() + 1);
        let group = spot.and_then(|s| self.gather(&s));
        let old = core::mem::replace(&mut *ticket.borrow_mut(), Ticket::Granted(group));
        if let Ticket::Waiting(Some(w), _) = old {
            w.wake();
        }
        true
    }

    /// The waiting requests that `lead`'s request takes along (near it in its object, by its
    /// gap and cap), taken out of the queue; `None` when there are none.
    fn gather(&self, lead: &Spot) -> Option<Rc<Group>> {
        if !lead.alive() {
            return None;
        }
        let mut q = self.queue.borrow_mut();
        let near: Vec<usize> = (0..q.0.len())
            .filter(|&i| q.0[i].2.as_ref().is_some_and(|s| s.joins(lead) && matches!(*q.0[i].1.borrow(), Ticket::Waiting(..))))
            .collect();
        if near.is_empty() {
            return None;
        }
        let spans: Vec<(u64, u64)> = core::iter::once(lead.span())
            .chain(near.iter().filter_map(|&i| q.0[i].2.as_ref().map(|s| s.span())))
            .collect();
        let run = super::coalesce::coalesce(&spans, lead.gap, lead.max, &|_, _| true)
            .into_iter()
            .find(|r| r.members.iter().any(|m| m.0 == 0))?;
        if run.members.len() < 2 {
            return None;
        }
        // The lead first; those taken along in their order in the queue.
        let mut taken = alloc::vec![false; spans.len()];
        run.members.iter().for_each(|m| taken[m.0] = true);
        let members: Vec<usize> = (0..spans.len()).filter(|&m| taken[m]).collect();
        let parts = members.iter().map(|&m| spans[m]).collect();
        let token = |m: usize| if m == 0 { lead.token() } else { q.0[near[m - 1]].2.as_ref().and_then(|s| s.token()) };
        let tokens = members.iter().map(|&m| token(m)).collect();
        let group = Rc::new(Group::new(run.offset, run.len, parts, tokens));
        // Out of the queue from the back, so that the indexes stay good.
        for (k, &m) in members.iter().enumerate().skip(1).rev() {
            let (_, t, _) = q.0.remove(near[m - 1]);
            let old = core::mem::replace(&mut *t.borrow_mut(), Ticket::Joined(group.clone(), k));
            if let Ticket::Waiting(Some(w), _) = old {
                w.wake();
            }
        }
        Some(group)
    }
}

/// One request through the origin's `limit` with merging: `go(None)` sends the request as it
/// is, `go(Some(group))` the group's merged range (a request no single caller's abort ends).
/// `None`: no slot came free before `deadline` (see [`Limiter::note_stall`]).
pub async fn dispatch<F, Fut>(
    limit: &Limiter,
    priority: i64,
    deadline: Option<f64>,
    spot: Option<Spot>,
    go: F,
) -> Option<Result<Response>>
where
    F: Fn(Option<&Group>) -> Fut,
    Fut: Future<Output = Result<Response>>,
{
    let spot = spot.map(Rc::new);
    loop {
        match limit.acquire_at(priority, deadline, spot.clone()).await? {
            Slot::Go(_permit, None) => return Some(go(None).await),
            Slot::Go(_permit, Some(lead)) => {
                let r = go(Some(lead.group())).await;
                return Some(lead.finish(r));
            }
            Slot::Joined(group, k) => {
                if let Some(r) = group.wait(k).await {
                    return Some(r);
                }
            }
        }
    }
}

/// Bytes of answers in flight, bounded: a request reserves the bytes it asked for before it is
/// sent and frees them when its body is read, so a hostile index or a run of large chunks
/// cannot make many requests each buffer up to the limit at once. Waiters start in arrival
/// order; one reservation alone always starts (so one above the cap never waits forever).
pub struct Budget {
    cap: u64,
    used: Cell<u64>,
    queue: RefCell<alloc::collections::VecDeque<(u64, Rc<RefCell<Grant>>)>>,
}

enum Grant {
    Waiting(Option<Waker>),
    Granted,
}

/// Bytes reserved from a [`Budget`]; dropping it frees them.
pub struct Reserved<'a> {
    owner: &'a Budget,
    n: u64,
}

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        self.owner.free(self.n);
    }
}

/// A waiting reservation: removed when given up, or handed back when granted but unused.
struct Pending<'a> {
    owner: &'a Budget,
    n: u64,
    grant: Rc<RefCell<Grant>>,
    done: bool,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if matches!(*self.grant.borrow(), Grant::Granted) {
            self.owner.free(self.n);
        } else {
            self.owner.queue.borrow_mut().retain(|(_, g)| !Rc::ptr_eq(g, &self.grant));
            // Those behind it may fit now.
            self.owner.grant_waiting();
        }
    }
}

impl Budget {
    pub fn new(cap: u64) -> Self {
        Budget { cap: cap.max(1), used: Cell::new(0), queue: RefCell::new(alloc::collections::VecDeque::new()) }
    }

    /// Bytes reserved now.
    pub fn used(&self) -> u64 {
        self.used.get()
    }

    fn fits(&self, n: u64) -> bool {
        self.used.get() == 0 || self.used.get().saturating_add(n) <= self.cap
    }

    /// Reserve `n` bytes, waiting while they do not fit beside those reserved.
    pub async fn reserve(&self, n: u64) -> Reserved<'_> {
        if self.queue.borrow().is_empty() && self.fits(n) {
            self.used.set(self.used.get().saturating_add(n));
            return Reserved { owner: self, n };
        }
        let grant = Rc::new(RefCell::new(Grant::Waiting(None)));
        self.queue.borrow_mut().push_back((n, grant.clone()));
        let mut pending = Pending { owner: self, n, grant, done: false };
        poll_fn(|cx| match &mut *pending.grant.borrow_mut() {
            Grant::Granted => Poll::Ready(()),
            Grant::Waiting(w) => {
                *w = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await;
        pending.done = true;
        Reserved { owner: self, n }
    }

    fn free(&self, n: u64) {
        self.used.set(self.used.get().saturating_sub(n));
        self.grant_waiting();
    }

    /// Start the waiters at the head of the queue that fit.
    fn grant_waiting(&self) {
        loop {
            let mut q = self.queue.borrow_mut();
            let Some(&(n, _)) = q.front() else { return };
            if !self.fits(n) {
                return;
            }
            let Some((_, g)) = q.pop_front() else { return };
            drop(q);
            self.used.set(self.used.get().saturating_add(n));
            let was = core::mem::replace(&mut *g.borrow_mut(), Grant::Granted);
            if let Grant::Waiting(Some(w)) = was {
                w.wake();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use core::future::Future;
    use core::pin::pin;
    use core::task::{Context, Waker};

    fn poll<F: Future>(f: core::pin::Pin<&mut F>) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn waiting_requests_start_by_priority_and_aborts_free_their_place() {
        let l = Limiter::new(2);
        let a = pin!(l.acquire(0, None));
        let Poll::Ready(Some(pa)) = poll(a) else { panic!() };
        let b = pin!(l.acquire(0, None));
        let Poll::Ready(Some(pb)) = poll(b) else { panic!() };
        // Full: three wait, priorities 1, 5, 5 (arrival order among equals).
        let mut low = pin!(l.acquire(1, None));
        let mut high1 = pin!(l.acquire(5, None));
        let mut high2 = pin!(l.acquire(5, None));
        assert!(
            poll(low.as_mut()).is_pending() && poll(high1.as_mut()).is_pending() && poll(high2.as_mut()).is_pending()
        );
        assert_eq!((l.in_flight(), l.waiting()), (2, 3));
        drop(pa);
        assert!(poll(low.as_mut()).is_pending());
        let Poll::Ready(Some(p1)) = poll(high1.as_mut()) else { panic!("the first high-priority request starts") };
        assert!(poll(high2.as_mut()).is_pending());
        drop(pb);
        let Poll::Ready(Some(p2)) = poll(high2.as_mut()) else { panic!() };
        // An aborted waiter gives its place up; a granted-but-dropped one hands its slot on.
        {
            let mut gone = pin!(l.acquire(9, None));
            assert!(poll(gone.as_mut()).is_pending());
        }
        assert_eq!(l.waiting(), 1);
        drop(p1);
        assert_eq!(l.in_flight(), 2, "the low-priority request got the slot");
        let mut granted: Vec<Permit> = Vec::new();
        if let Poll::Ready(Some(p)) = poll(low.as_mut()) {
            granted.push(p);
        }
        assert_eq!(granted.len(), 1);
        drop(p2);
        drop(granted);
        assert_eq!((l.in_flight(), l.waiting()), (0, 0));
    }

    #[test]
    fn waiting_past_the_deadline_ends_only_when_the_origin_is_stuck() {
        let l = Limiter::new(1);
        let Poll::Ready(Some(held)) = poll(pin!(l.acquire(0, None))) else { panic!() };
        let mut soon = pin!(l.acquire(0, Some(100.0)));
        let mut later = pin!(l.acquire(0, Some(600.0)));
        let mut never = pin!(l.acquire(0, None));
        assert!(
            poll(soon.as_mut()).is_pending() && poll(later.as_mut()).is_pending() && poll(never.as_mut()).is_pending()
        );
        // Past the first deadline, but the origin answered 50 ms ago: waiting goes on.
        l.note_progress(150.0);
        l.note_stall(200.0, 300.0);
        assert!(poll(soon.as_mut()).is_pending());
        // Nothing for longer than a stall time: the waiter past its deadline gives up, the others wait.
        l.note_stall(600.0 - 50.0, 300.0);
        assert!(matches!(poll(soon.as_mut()), Poll::Ready(None)));
        assert!(poll(later.as_mut()).is_pending(), "later");
        assert!(poll(never.as_mut()).is_pending(), "never");
        assert_eq!((l.in_flight(), l.waiting()), (1, 2));
        l.note_stall(700.0, 300.0);
        assert!(matches!(poll(later.as_mut()), Poll::Ready(None)));
        // The slot goes to the one left.
        drop(held);
        assert!(matches!(poll(never.as_mut()), Poll::Ready(Some(_))));
    }

    #[test]
    fn a_budget_starts_reservations_that_fit_in_arrival_order() {
        let b = Budget::new(100);
        let Poll::Ready(r60) = poll(pin!(b.reserve(60))) else { panic!() };
        let mut r50 = pin!(b.reserve(50));
        let mut r10 = pin!(b.reserve(10));
        assert!(poll(r50.as_mut()).is_pending());
        // In arrival order: 10 would fit, but waits behind 50.
        assert!(poll(r10.as_mut()).is_pending());
        drop(r60);
        let Poll::Ready(a) = poll(r50.as_mut()) else { panic!("50 starts") };
        let Poll::Ready(c) = poll(r10.as_mut()) else { panic!("10 starts beside it") };
        assert_eq!(b.used(), 60);
        drop((a, c));
        // One reservation above the cap starts alone; a waiter given up frees its place.
        let Poll::Ready(big) = poll(pin!(b.reserve(500))) else { panic!("alone, it starts") };
        {
            let mut gone = pin!(b.reserve(1));
            assert!(poll(gone.as_mut()).is_pending());
        }
        let mut next = pin!(b.reserve(1));
        assert!(poll(next.as_mut()).is_pending());
        drop(big);
        let Poll::Ready(one) = poll(next.as_mut()) else { panic!("the next starts") };
        assert_eq!(b.used(), 1);
        drop(one);
        assert_eq!(b.used(), 0);
    }
}

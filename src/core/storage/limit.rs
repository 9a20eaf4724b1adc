//! A limit on requests in flight with priorities: when the limit is reached, waiting requests
//! start highest priority first (then in arrival order). Browsers fail thousands of concurrent
//! fetches, and their own queue is first come, first served: a viewer's visible tiles should
//! not wait behind tiles that scrolled away.
use alloc::collections::BTreeMap;
use alloc::rc::Rc;
use core::cell::{Cell, RefCell};
use core::cmp::Reverse;
use core::future::poll_fn;
use core::task::{Poll, Waker};

enum Ticket {
    Waiting(Option<Waker>),
    Granted,
}

type Queue = BTreeMap<(Reverse<i64>, u64), Rc<RefCell<Ticket>>>;

pub struct Limiter {
    max: Cell<usize>,
    inflight: Cell<usize>,
    queue: RefCell<Queue>,
    seq: Cell<u64>,
}

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
        if matches!(*self.ticket.borrow(), Ticket::Granted) {
            self.owner.release();
        } else {
            self.owner.queue.borrow_mut().remove(&self.key);
        }
    }
}

impl Limiter {
    pub fn new(max: usize) -> Self {
        Limiter {
            max: Cell::new(max.max(1)),
            inflight: Cell::new(0),
            queue: RefCell::new(BTreeMap::new()),
            seq: Cell::new(0),
        }
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

    /// Wait for a slot; higher `priority` goes first.
    pub async fn acquire(&self, priority: i64) -> Permit<'_> {
        if self.inflight.get() < self.max.get() && self.queue.borrow().is_empty() {
            self.inflight.set(self.inflight.get() + 1);
            return Permit { owner: self };
        }
        let seq = self.seq.get();
        self.seq.set(seq + 1);
        let key = (Reverse(priority), seq);
        let ticket = Rc::new(RefCell::new(Ticket::Waiting(None)));
        self.queue.borrow_mut().insert(key, ticket.clone());
        let mut waiting = Waiting { owner: self, key, ticket, done: false };
        poll_fn(|cx| match &mut *waiting.ticket.borrow_mut() {
            Ticket::Granted => Poll::Ready(()),
            Ticket::Waiting(w) => {
                *w = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await;
        waiting.done = true;
        Permit { owner: self }
    }

    fn release(&self) {
        self.inflight.set(self.inflight.get().saturating_sub(1));
        if self.inflight.get() < self.max.get() {
            self.grant_next();
        }
    }

    /// Start the best waiting request, if any.
    fn grant_next(&self) -> bool {
        let Some((_, ticket)) = self.queue.borrow_mut().pop_first() else { return false };
        self.inflight.set(self.inflight.get() + 1);
        let old = core::mem::replace(&mut *ticket.borrow_mut(), Ticket::Granted);
        if let Ticket::Waiting(Some(w)) = old {
            w.wake();
        }
        true
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
        let a = pin!(l.acquire(0));
        let Poll::Ready(pa) = poll(a) else { panic!() };
        let b = pin!(l.acquire(0));
        let Poll::Ready(pb) = poll(b) else { panic!() };
        // Full: three wait, priorities 1, 5, 5 (arrival order among equals).
        let mut low = pin!(l.acquire(1));
        let mut high1 = pin!(l.acquire(5));
        let mut high2 = pin!(l.acquire(5));
        assert!(
            poll(low.as_mut()).is_pending() && poll(high1.as_mut()).is_pending() && poll(high2.as_mut()).is_pending()
        );
        assert_eq!((l.in_flight(), l.waiting()), (2, 3));
        drop(pa);
        assert!(poll(low.as_mut()).is_pending());
        let Poll::Ready(p1) = poll(high1.as_mut()) else { panic!("the first high-priority request starts") };
        assert!(poll(high2.as_mut()).is_pending());
        drop(pb);
        let Poll::Ready(p2) = poll(high2.as_mut()) else { panic!() };
        // An aborted waiter gives its place up; a granted-but-dropped one hands its slot on.
        {
            let mut gone = pin!(l.acquire(9));
            assert!(poll(gone.as_mut()).is_pending());
        }
        assert_eq!(l.waiting(), 1);
        drop(p1);
        assert_eq!(l.in_flight(), 2, "the low-priority request got the slot");
        let mut granted: Vec<Permit> = Vec::new();
        if let Poll::Ready(p) = poll(low.as_mut()) {
            granted.push(p);
        }
        assert_eq!(granted.len(), 1);
        drop(p2);
        drop(granted);
        assert_eq!((l.in_flight(), l.waiting()), (0, 0));
    }
}

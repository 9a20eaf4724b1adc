//! Concurrent requests for the same key share one computation.
//!
//! Single-threaded (wasm): state lives in `RefCell`s. If the task doing the work is dropped
//! (its caller aborted), waiters are woken and one of them takes over.
use crate::core::error::{ErrorCode, Result};
use super::vecmap::VecMap;
use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::RefCell;
use core::future::{poll_fn, Future};
use core::task::{Poll, Waker};

enum State<V> {
    Pending(Vec<Waker>),
    Done(Result<V>),
    Abandoned,
}

type Slot<V> = Rc<RefCell<State<V>>>;

pub struct Dedup<K: Ord + Clone, V: Clone> {
    inflight: RefCell<VecMap<K, Slot<V>>>,
}

impl<K: Ord + Clone, V: Clone> Default for Dedup<K, V> {
    fn default() -> Self {
        Dedup { inflight: RefCell::new(VecMap::new()) }
    }
}

struct Leader<'a, K: Ord + Clone, V: Clone> {
    owner: &'a Dedup<K, V>,
    key: K,
    slot: Slot<V>,
}

impl<K: Ord + Clone, V: Clone> Leader<'_, K, V> {
    fn finish(&self, state: State<V>) {
        self.owner.inflight.borrow_mut().remove(&self.key);
        let old = core::mem::replace(&mut *self.slot.borrow_mut(), state);
        if let State::Pending(wakers) = old {
            wakers.into_iter().for_each(Waker::wake);
        }
    }

    /// Hand `r` to the waiters, cloning it only when someone waits.
    fn share(&self, r: &Result<V>) {
        let waiting = matches!(&*self.slot.borrow(), State::Pending(w) if !w.is_empty());
        self.finish(if waiting { State::Done(r.clone()) } else { State::Abandoned });
    }
}

impl<K: Ord + Clone, V: Clone> Drop for Leader<'_, K, V> {
    fn drop(&mut self) {
        if matches!(*self.slot.borrow(), State::Pending(_)) {
            self.finish(State::Abandoned);
        }
    }
}

impl<K: Ord + Clone, V: Clone> Dedup<K, V> {
    /// Run `work` for `key`, or wait for the run already under way. `aborted` tells whether
    /// this caller itself was aborted: a run that failed with `Aborted` because *another*
    /// caller gave up is retried.
    pub async fn run<F, Fut>(&self, key: K, aborted: impl Fn() -> bool, work: F) -> Result<V>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V>>,
    {
        let k = key.clone();
        Ok(self.run_covered(key, |other| *other == k, aborted, work).await?.1)
    }

    /// Like [`run`](Self::run), but also waits for a run under way whose key `covers` this
    /// one (a read of a byte range inside another read's range); returns the key whose
    /// result is given.
    pub async fn run_covered<F, Fut>(
        &self,
        key: K,
        covers: impl Fn(&K) -> bool,
        aborted: impl Fn() -> bool,
        work: F,
    ) -> Result<(K, V)>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V>>,
    {
        loop {
            let existing = self.inflight.borrow().iter().find(|(k, _)| covers(k)).map(|(k, s)| (k.clone(), s.clone()));
            if let Some((found, slot)) = existing {
                let outcome = poll_fn(|cx| match &mut *slot.borrow_mut() {
                    State::Pending(w) => {
                        w.push(cx.waker().clone());
                        Poll::Pending
                    }
                    State::Done(r) => Poll::Ready(Some(r.clone())),
                    State::Abandoned => Poll::Ready(None),
                })
                .await;
                match outcome {
                    Some(Err(e)) if e.code == ErrorCode::Aborted && !aborted() => continue,
                    Some(r) => return r.map(|v| (found, v)),
                    None => continue,
                }
            }
            let slot: Slot<V> = Rc::new(RefCell::new(State::Pending(Vec::new())));
            self.inflight.borrow_mut().insert(key.clone(), slot.clone());
            let leader = Leader { owner: self, key: key.clone(), slot };
            let r = work().await;
            leader.share(&r);
            return r.map(|v| (key, v));
        }
    }

    /// Whether a run under way has a key for which `pred` holds.
    pub fn any(&self, pred: impl Fn(&K) -> bool) -> bool {
        self.inflight.borrow().keys().any(pred)
    }

    pub fn in_flight(&self) -> usize {
        self.inflight.borrow().len()
    }
}

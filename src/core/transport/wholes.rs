//! Whole objects held outside the byte-bounded cache: [`Wholes`] holds them for readers (a
//! [`HeldWhole`] guard each), for the batches under way ([`Pin`]), and the last one a server
//! sent for a ranged read ([`LastWhole`]); it downloads each at most once at a time.
use super::dedup::Dedup;
use super::vecmap::VecMap;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

/// The last object a server sent whole for a ranged request, shared by the transports of every
/// node opened over one container (an archive, a reference file's target): each array would
/// otherwise download it again. (Each whole object is kept with its stamp: see `versions`.)
pub type LastWhole = Rc<RefCell<Option<(String, Rc<Vec<u8>>, u64)>>>;

type Held = Rc<RefCell<VecMap<String, (Rc<Vec<u8>>, usize, u64)>>>;

#[derive(Default)]
pub struct Wholes {
    /// Downloads under way (a server that ignores Range).
    pub(super) loading: Dedup<(String, u64), Option<Rc<Vec<u8>>>>,
    /// Objects held for readers, with the number of guards holding each.
    held: Held,
    /// Batches under way: objects that arrive meanwhile are kept until the last one ends, so
    /// that no batch downloads one twice.
    pub(super) batches: Rc<Cell<usize>>,
    pub(super) pinned: Rc<RefCell<VecMap<String, (Rc<Vec<u8>>, u64)>>>,
    pub(super) last: LastWhole,
}

impl Wholes {
    /// The object at `url` if any holder has it under `stamp`.
    pub fn get(&self, url: &str, stamp: u64) -> Option<Rc<Vec<u8>>> {
        if let Some((w, _, s)) = self.held.borrow().get(url) {
            if *s == stamp {
                return Some(w.clone());
            }
        }
        if let Some((u, w, s)) = &*self.last.borrow() {
            if u == url && *s == stamp {
                return Some(w.clone());
            }
        }
        self.pinned.borrow().get(url).filter(|(_, s)| *s == stamp).map(|(w, _)| w.clone())
    }

    /// A whole object arrived (read under `stamp`): kept for the batches under way, and as the
    /// last one.
    pub(super) fn arrived(&self, url: &str, body: &Rc<Vec<u8>>, stamp: u64) {
        if self.batches.get() > 0 {
            self.pinned.borrow_mut().insert(url.to_string(), (body.clone(), stamp));
        }
        *self.last.borrow_mut() = Some((url.to_string(), body.clone(), stamp));
    }

    /// One more guard on `url`, with its bytes (read under `stamp`) when no guard holds it
    /// under that stamp yet; `None` without them.
    pub(super) fn guard(&self, url: &str, bytes: Option<Rc<Vec<u8>>>, stamp: u64) -> Option<HeldWhole> {
        let mut held = self.held.borrow_mut();
        match (held.get_mut(url), bytes) {
            (Some((_, n, s)), _) if *s == stamp => *n += 1,
            // Held as of an older version: these bytes replace them (its guards hold these).
            (Some((b, n, s)), Some(new)) => {
                (*b, *s) = (new, stamp);
                *n += 1;
            }
            (Some(_), None) | (None, None) => return None,
            (None, Some(b)) => {
                held.insert(url.to_string(), (b, 1, stamp));
            }
        }
        Some(HeldWhole { url: url.to_string(), held: self.held.clone() })
    }

    pub(super) fn forget(&self, url: &str) {
        let mut last = self.last.borrow_mut();
        if last.as_ref().is_some_and(|(u, _, _)| u == url) {
            *last = None;
        }
    }
}

/// Serves reads of one object from its whole bytes until dropped.
pub struct HeldWhole {
    url: String,
    held: Held,
}

impl Drop for HeldWhole {
    fn drop(&mut self) {
        let mut held = self.held.borrow_mut();
        if let Some((_, n, _)) = held.get_mut(&self.url) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.url);
            }
        }
    }
}

/// Holds whole objects for a batch of reads; the last one dropped lets them go.
pub struct Pin {
    pub(super) batches: Rc<Cell<usize>>,
    pub(super) pinned: Rc<RefCell<VecMap<String, (Rc<Vec<u8>>, u64)>>>,
}

impl Drop for Pin {
    fn drop(&mut self) {
        self.batches.set(self.batches.get().saturating_sub(1));
        if self.batches.get() == 0 {
            self.pinned.borrow_mut().clear();
        }
    }
}

//! [`Kept`]: what a layer keeps of the object it reads (a directory, an index), with the stamp
//! of the version it was read from (see `transport::versions`): served only while that version
//! is the object's, and kept only if it still is when the read that made it ends.
use core::cell::RefCell;

#[derive(Debug)]
pub struct Kept<T>(RefCell<Option<(u64, T)>>);

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Kept(RefCell::new(None))
    }
}

impl<T: Clone> Kept<T> {
    /// The value, if kept under `stamp` (the object's current one).
    pub fn get(&self, stamp: u64) -> Option<T> {
        self.0.borrow().as_ref().filter(|(s, _)| *s == stamp).map(|(_, v)| v.clone())
    }

    /// The value kept, whatever its version (for hints and listings, not for reads).
    pub fn any(&self) -> Option<T> {
        self.0.borrow().as_ref().map(|(_, v)| v.clone())
    }

    /// Keep `v`, made from what was read under `stamp`, if `now` (the object's stamp now) is
    /// still that.
    pub fn set(&self, stamp: u64, now: u64, v: T) {
        if stamp == now {
            *self.0.borrow_mut() = Some((stamp, v));
        }
    }
}

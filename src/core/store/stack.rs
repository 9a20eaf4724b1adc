//! The layers a store reads through, outermost first ([`Stack`]).
use super::registry::Layer;
use crate::core::transport::{LastWhole, Versions};
use alloc::rc::Rc;
use alloc::vec::Vec;

/// The layers of a store, outermost first, and what the transports reading through them share:
/// the last whole object, and the versions of the objects read (the layers' own caches are
/// stamped with them).
#[derive(Clone, Default)]
pub struct Stack {
    pub layers: Vec<Layer>,
    pub(super) last_whole: LastWhole,
    pub(super) versions: Option<Rc<Versions>>,
}

impl core::fmt::Debug for Stack {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.layers.iter().map(|l| (l.name(), l.url()))).finish()
    }
}

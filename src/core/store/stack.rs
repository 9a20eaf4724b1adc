//! The layers a store reads through, outermost first ([`Stack`]).
use super::registry::Layer;
use crate::core::transport::LastWhole;
use alloc::vec::Vec;

/// The layers of a store, outermost first, and what the transports reading through them share.
#[derive(Clone, Default)]
pub struct Stack {
    pub layers: Vec<Layer>,
    pub(super) last_whole: LastWhole,
}

impl core::fmt::Debug for Stack {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.layers.iter().map(|l| (l.name(), l.url()))).finish()
    }
}

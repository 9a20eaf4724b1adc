//! A map kept as a vector: for the store's small maps (reads in flight, objects held for a
//! batch, origins), where a linear scan costs nothing and a `BTreeMap` instance costs kilobytes
//! of wasm per key type.
use alloc::vec::Vec;

#[derive(Debug)]
pub struct VecMap<K, V>(Vec<(K, V)>);

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap(Vec::new())
    }
}

impl<K: PartialEq, V> VecMap<K, V> {
    pub const fn new() -> Self {
        VecMap(Vec::new())
    }
    fn at<Q: ?Sized + PartialEq>(&self, k: &Q) -> Option<usize>
    where
        K: core::borrow::Borrow<Q>,
    {
        self.0.iter().position(|(key, _)| key.borrow() == k)
    }
    pub fn get<Q: ?Sized + PartialEq>(&self, k: &Q) -> Option<&V>
    where
        K: core::borrow::Borrow<Q>,
    {
        self.at(k).map(|i| &self.0[i].1)
    }
    pub fn get_mut<Q: ?Sized + PartialEq>(&mut self, k: &Q) -> Option<&mut V>
    where
        K: core::borrow::Borrow<Q>,
    {
        self.at(k).map(|i| &mut self.0[i].1)
    }
    pub fn contains_key<Q: ?Sized + PartialEq>(&self, k: &Q) -> bool
    where
        K: core::borrow::Borrow<Q>,
    {
        self.at(k).is_some()
    }
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        match self.at(&k) {
            Some(i) => Some(core::mem::replace(&mut self.0[i].1, v)),
            None => {
                self.0.push((k, v));
                None
            }
        }
    }
    pub fn remove<Q: ?Sized + PartialEq>(&mut self, k: &Q) -> Option<V>
    where
        K: core::borrow::Borrow<Q>,
    {
        self.at(k).map(|i| self.0.swap_remove(i).1)
    }
    /// The value of `k`, inserted as `make()` first when absent.
    pub fn get_or_insert_with(&mut self, k: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.at(&k) {
            Some(i) => i,
            None => {
                self.0.push((k, make()));
                self.0.len() - 1
            }
        };
        &mut self.0[i].1
    }
    pub fn clear(&mut self) {
        self.0.clear()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.0.iter().map(|(k, _)| k)
    }
    pub fn into_vec(self) -> Vec<(K, V)> {
        self.0
    }
}

//! A byte-bounded least-recently-used cache.
use alloc::collections::{BTreeMap, VecDeque};

pub struct Lru<K: Ord + Clone, V: Clone> {
    map: BTreeMap<K, (V, usize, u64)>,
    /// Keys by the tick they were last used at, oldest first; an entry whose tick is not its
    /// key's current one is stale, skipped (and dropped when stale ones are half of them).
    order: VecDeque<(u64, K)>,
    tick: u64,
    bytes: usize,
    capacity: usize,
}

impl<K: Ord + Clone, V: Clone> Lru<K, V> {
    pub fn new(capacity: usize) -> Self {
        Lru { map: BTreeMap::new(), order: VecDeque::new(), tick: 0, bytes: 0, capacity }
    }

    pub fn get(&mut self, k: &K) -> Option<V> {
        let tick = self.tick + 1;
        let (v, _, t) = self.map.get_mut(k)?;
        *t = tick;
        let v = v.clone();
        self.tick = tick;
        self.used(tick, k.clone());
        Some(v)
    }

    /// `k` used at `tick`.
    fn used(&mut self, tick: u64, k: K) {
        self.order.push_back((tick, k));
        if self.order.len() > 2 * self.map.len() + 16 {
            let map = &self.map;
            self.order.retain(|(t, k)| map.get(k).is_some_and(|e| e.2 == *t));
        }
    }

    /// Insert, evicting the least recently used entries; an entry larger than the whole
    /// capacity is not kept.
    pub fn put(&mut self, k: K, v: V, size: usize) {
        self.remove(&k);
        if size > self.capacity {
            return;
        }
        while self.bytes + size > self.capacity {
            let Some((t, old)) = self.order.pop_front() else { break };
            if self.map.get(&old).is_some_and(|e| e.2 == t) {
                if let Some((_, s, _)) = self.map.remove(&old) {
                    self.bytes -= s;
                }
            }
        }
        self.tick += 1;
        self.map.insert(k.clone(), (v, size, self.tick));
        self.used(self.tick, k);
        self.bytes += size;
    }

    /// The entry with the greatest key in `lo..=hi` for which `keep(key, value)` holds
    /// (marked as used), with its key.
    pub fn find_below(&mut self, lo: &K, hi: &K, keep: impl Fn(&K, &V) -> bool) -> Option<(K, V)> {
        let found = self.map.range(lo.clone()..=hi.clone()).rev().find(|(k, (v, _, _))| keep(k, v))?.0.clone();
        self.get(&found).map(|v| (found, v))
    }

    /// Keys from `lo` upwards, in order (not marked as used).
    pub fn keys_from<'a>(&'a self, lo: &K) -> impl Iterator<Item = &'a K> + 'a {
        self.map.range(lo.clone()..).map(|(k, _)| k)
    }

    /// Entries from `lo` upwards, in order (not marked as used).
    pub fn entries_from<'a>(&'a self, lo: &K) -> impl Iterator<Item = (&'a K, &'a V)> + 'a {
        self.map.range(lo.clone()..).map(|(k, (v, _, _))| (k, v))
    }

    pub fn remove(&mut self, k: &K) {
        if let Some((_, s, _)) = self.map.remove(k) {
            self.bytes -= s;
        }
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::Lru;

    #[test]
    fn evicts_least_recent_by_bytes() {
        let mut c = Lru::new(10);
        c.put(1, 'a', 4);
        c.put(2, 'b', 4);
        assert_eq!(c.get(&1), Some('a'));
        c.put(3, 'c', 4); // evicts 2, the least recently used
        assert_eq!(c.get(&2), None);
        assert_eq!(c.get(&1), Some('a'));
        assert_eq!(c.bytes(), 8);
        c.put(4, 'd', 11); // too large to keep
        assert_eq!(c.get(&4), None);
        assert_eq!(c.len(), 2);
        assert_eq!(c.find_below(&0, &2, |_, _| true), Some((1, 'a')));
        assert_eq!(c.find_below(&0, &9, |_, v| *v == 'a'), Some((1, 'a')), "skips keys that do not qualify");
        assert_eq!(c.find_below(&2, &2, |_, _| true), None);
    }

    #[test]
    fn uses_in_between_keep_the_order_bounded_and_right() {
        let mut c = Lru::new(30);
        for k in 0..3 {
            c.put(k, k, 10);
        }
        for _ in 0..1000 {
            assert_eq!(c.get(&0), Some(0));
            assert_eq!(c.get(&2), Some(2));
        }
        assert!(c.order.len() <= 2 * c.len() + 16, "{}", c.order.len());
        c.put(3, 3, 10); // evicts 1: used least recently
        assert_eq!((c.get(&1), c.get(&0), c.get(&2), c.get(&3)), (None, Some(0), Some(2), Some(3)));
        c.remove(&0);
        c.put(4, 4, 20); // evicts 2 (0 is gone): 3 and 4 remain
        assert_eq!((c.get(&2), c.get(&3), c.get(&4), c.bytes()), (None, Some(3), Some(4), 30));
    }
}

//! A byte-bounded least-recently-used cache.
use alloc::collections::BTreeMap;

pub struct Lru<K: Ord + Clone, V: Clone> {
    map: BTreeMap<K, (V, usize, u64)>,
    order: BTreeMap<u64, K>,
    tick: u64,
    bytes: usize,
    capacity: usize,
}

impl<K: Ord + Clone, V: Clone> Lru<K, V> {
    pub fn new(capacity: usize) -> Self {
        Lru { map: BTreeMap::new(), order: BTreeMap::new(), tick: 0, bytes: 0, capacity }
    }

    pub fn get(&mut self, k: &K) -> Option<V> {
        let tick = self.tick + 1;
        let (v, _, t) = self.map.get_mut(k)?;
        self.order.remove(t);
        *t = tick;
        self.tick = tick;
        self.order.insert(tick, k.clone());
        Some(v.clone())
    }

    /// Insert, evicting the least recently used entries; an entry larger than the whole
    /// capacity is not kept.
    pub fn put(&mut self, k: K, v: V, size: usize) {
        self.remove(&k);
        if size > self.capacity {
            return;
        }
        while self.bytes + size > self.capacity {
            let Some((_, old)) = self.order.pop_first() else { break };
            if let Some((_, s, _)) = self.map.remove(&old) {
                self.bytes -= s;
            }
        }
        self.tick += 1;
        self.order.insert(self.tick, k.clone());
        self.map.insert(k, (v, size, self.tick));
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

    pub fn remove(&mut self, k: &K) {
        if let Some((_, s, t)) = self.map.remove(k) {
            self.order.remove(&t);
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
}

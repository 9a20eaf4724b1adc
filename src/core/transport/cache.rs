//! A byte-bounded least-recently-used cache ([`Lru`]), alone or sharing a page-wide budget
//! ([`Pool`]) with the caches of other arrays: least recently used out across all of them.
use alloc::collections::{BTreeMap, VecDeque};
use alloc::rc::{Rc, Weak};
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

/// Kinds of entries a pool counts apart (what each cache's `kind` function names).
pub const KINDS: usize = 3;

/// A byte budget shared by caches (one per page): each insertion that would pass it evicts the
/// least recently used entry of whichever cache holds it. Also `outside`: bytes held elsewhere
/// (decoded chunks kept by the wrapper) that count against it.
pub struct Pool {
    capacity: Cell<usize>,
    outside: Cell<usize>,
    bytes: Cell<usize>,
    tick: Cell<u64>,
    evictions: Cell<u64>,
    ids: Cell<u64>,
    owners: RefCell<Vec<(u64, Weak<dyn Owner>)>>,
}

impl core::fmt::Debug for Pool {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Pool({} of {})", self.held(), self.capacity.get())
    }
}

/// A cache seen from its pool.
trait Owner {
    /// The tick its least recently used entry was last used at (`None`: empty, or busy).
    fn oldest(&self) -> Option<u64>;
    /// Evict that entry; false when there is none (or the cache is busy).
    fn evict_oldest(&self) -> bool;
    /// Its bytes by kind of entry.
    fn kinds(&self) -> [usize; KINDS];
}

impl Pool {
    pub fn new(capacity: usize) -> Rc<Pool> {
        Rc::new(Pool {
            capacity: Cell::new(capacity),
            outside: Cell::new(0),
            bytes: Cell::new(0),
            tick: Cell::new(0),
            evictions: Cell::new(0),
            ids: Cell::new(0),
            owners: RefCell::default(),
        })
    }
    pub fn capacity(&self) -> usize {
        self.capacity.get()
    }
    /// A new budget, evicting down to it at once.
    pub fn set_capacity(&self, capacity: usize) {
        self.capacity.set(capacity);
        self.trim(0);
    }
    /// Bytes held elsewhere that count against the budget.
    pub fn set_outside(&self, bytes: usize) {
        self.outside.set(bytes);
    }
    /// Bytes the caches hold, by kind.
    pub fn by_kind(&self) -> [usize; KINDS] {
        let mut sum = [0; KINDS];
        for (_, w) in self.owners.borrow().iter() {
            let kinds = w.upgrade().map_or([0; KINDS], |o| o.kinds());
            sum.iter_mut().zip(kinds).for_each(|(s, k)| *s += k);
        }
        sum
    }
    /// Bytes the caches hold and those held elsewhere.
    pub fn held(&self) -> usize {
        self.bytes.get() + self.outside.get()
    }
    /// Entries evicted to stay within the budget.
    pub fn evictions(&self) -> u64 {
        self.evictions.get()
    }
    fn add(&self, n: usize, more: bool) {
        let b = self.bytes.get();
        self.bytes.set(if more { b.saturating_add(n) } else { b.saturating_sub(n) });
    }
    /// The cache (other than `except`) holding the least recently used entry, with its tick.
    fn oldest(&self, except: u64) -> Option<(u64, Rc<dyn Owner>)> {
        let mut owners = self.owners.borrow_mut();
        owners.retain(|(_, w)| w.strong_count() > 0);
        let mut best: Option<(u64, Rc<dyn Owner>)> = None;
        for (id, w) in owners.iter() {
            let Some(o) = w.upgrade().filter(|_| *id != except) else { continue };
            if let Some(t) = o.oldest().filter(|t| best.as_ref().is_none_or(|b| *t < b.0)) {
                best = Some((t, o));
            }
        }
        best
    }
    /// Evict from caches other than `except` while more than `room` bytes short of the budget
    /// and their entries are older than `mine`'s oldest; true when that made the room.
    fn trim_others(&self, except: u64, room: usize, mine: Option<u64>) -> bool {
        while self.held().saturating_add(room) > self.capacity.get() {
            let Some((t, owner)) = self.oldest(except) else { return false };
            if mine.is_some_and(|m| m < t) || !owner.evict_oldest() {
                return false;
            }
            self.evictions.set(self.evictions.get() + 1);
        }
        true
    }
    /// Evict page-wide until `room` more bytes fit.
    fn trim(&self, room: usize) {
        self.trim_others(u64::MAX, room, None);
    }
}

pub struct Lru<K: Ord + Clone, V: Clone> {
    map: BTreeMap<K, (V, usize, u64)>,
    /// Keys by the tick they were last used at, oldest first; an entry whose tick is not its
    /// key's current one is stale, skipped (and dropped when stale ones are half of them).
    order: VecDeque<(u64, K)>,
    tick: u64,
    bytes: usize,
    capacity: usize,
    /// The page's budget this cache shares, and its name there.
    pool: Option<(Rc<Pool>, u64)>,
    kind: fn(&K) -> usize,
    /// Bytes by kind of entry.
    kinds: [usize; KINDS],
    evicted: u64,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> Lru<K, V> {
    /// A cache of at most `capacity` bytes; `kind` names each key's kind of entry in a pool.
    pub fn shared(capacity: usize, kind: fn(&K) -> usize) -> Rc<RefCell<Self>> {
        let mut lru = Lru::new(capacity);
        lru.kind = kind;
        Rc::new(RefCell::new(lru))
    }

    /// Share `pool`'s budget from now on (a cache joins one pool once), evicting for it at once.
    pub fn join(this: &Rc<RefCell<Self>>, pool: &Rc<Pool>) {
        let Ok(mut lru) = this.try_borrow_mut() else { return };
        if lru.pool.is_some() {
            return;
        }
        let id = pool.ids.get() + 1;
        pool.ids.set(id);
        lru.pool = Some((pool.clone(), id));
        pool.add(lru.bytes, true);
        drop(lru);
        let weak: Weak<dyn Owner> = Rc::downgrade(&(this.clone() as Rc<dyn Owner>));
        pool.owners.borrow_mut().push((id, weak));
        pool.trim(0);
    }
}

impl<K: Ord + Clone, V: Clone> Owner for RefCell<Lru<K, V>> {
    fn oldest(&self) -> Option<u64> {
        self.try_borrow_mut().ok()?.oldest()
    }
    fn evict_oldest(&self) -> bool {
        self.try_borrow_mut().is_ok_and(|mut c| c.evict_one())
    }
    fn kinds(&self) -> [usize; KINDS] {
        self.try_borrow().map_or([0; KINDS], |c| c.kinds)
    }
}

impl<K: Ord + Clone, V: Clone> Drop for Lru<K, V> {
    fn drop(&mut self) {
        if let Some((p, _)) = &self.pool {
            p.add(self.bytes, false);
        }
    }
}

impl<K: Ord + Clone, V: Clone> Lru<K, V> {
    pub fn new(capacity: usize) -> Self {
        Lru {
            map: BTreeMap::new(),
            order: VecDeque::new(),
            tick: 0,
            bytes: 0,
            capacity,
            pool: None,
            kind: |_| 0,
            kinds: [0; KINDS],
            evicted: 0,
        }
    }

    fn count(&mut self, k: &K, n: usize, more: bool) {
        if let Some(b) = self.kinds.get_mut((self.kind)(k)) {
            *b = if more { *b + n } else { b.saturating_sub(n) };
        }
    }

    /// The tick after the last one (page-wide in a pool), set as the last by `set_tick`.
    fn next_tick(&self) -> u64 {
        self.pool.as_ref().map_or(self.tick, |(p, _)| p.tick.get()) + 1
    }
    fn set_tick(&mut self, tick: u64) {
        self.tick = tick;
        if let Some((p, _)) = &self.pool {
            p.tick.set(tick);
        }
    }

    pub fn get(&mut self, k: &K) -> Option<V> {
        let tick = self.next_tick();
        let (v, _, t) = self.map.get_mut(k)?;
        *t = tick;
        let v = v.clone();
        self.set_tick(tick);
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

    /// The tick of the least recently used entry (stale order entries dropped on the way).
    fn oldest(&mut self) -> Option<u64> {
        while let Some((t, k)) = self.order.front() {
            if self.map.get(k).is_some_and(|e| e.2 == *t) {
                return Some(*t);
            }
            self.order.pop_front();
        }
        None
    }

    /// Evict the least recently used entry, if any.
    fn evict_one(&mut self) -> bool {
        if self.oldest().is_none() {
            return false;
        }
        let Some((_, k)) = self.order.pop_front() else { return false };
        self.remove(&k);
        self.evicted += 1;
        true
    }

    /// Insert, evicting the least recently used entries (this cache's to stay within its
    /// capacity; the page's, whichever cache holds them, to stay within the pool's budget); an
    /// entry larger than either is not kept.
    pub fn put(&mut self, k: K, v: V, size: usize) {
        self.remove(&k);
        let pool = self.pool.clone();
        if size > self.capacity || pool.as_ref().is_some_and(|(p, _)| size > p.capacity()) {
            return;
        }
        while self.bytes + size > self.capacity && self.evict_one() {}
        if let Some((p, id)) = pool {
            // Older entries of other caches go first, then this one's.
            while !p.trim_others(id, size, self.oldest()) && self.evict_one() {
                p.evictions.set(p.evictions.get() + 1);
            }
        }
        let tick = self.next_tick();
        self.set_tick(tick);
        if let Some((p, _)) = &self.pool {
            p.add(size, true);
        }
        self.count(&k, size, true);
        self.map.insert(k.clone(), (v, size, tick));
        self.used(tick, k);
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
            if let Some((p, _)) = &self.pool {
                p.add(s, false);
            }
            self.count(k, s, false);
        }
    }

    /// Entries evicted from this cache (for its capacity or the pool's budget).
    pub fn evicted(&self) -> u64 {
        self.evicted
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

    #[test]
    fn a_pool_evicts_least_recent_across_caches_within_each_cap() {
        use super::Pool;
        let pool = Pool::new(30);
        let kind = |k: &u32| (*k as usize) % 2;
        let (a, b) = (Lru::shared(100, kind), Lru::shared(15, kind));
        Lru::join(&a, &pool);
        Lru::join(&b, &pool);
        a.borrow_mut().put(1, 'a', 10);
        b.borrow_mut().put(2, 'b', 10);
        a.borrow_mut().put(3, 'c', 10);
        assert_eq!(a.borrow_mut().get(&1), Some('a')); // 2 (b's) is now the page's oldest
        a.borrow_mut().put(5, 'e', 10);
        assert_eq!((b.borrow_mut().get(&2), pool.held(), pool.evictions()), (None, 30, 1));
        // Then a's own oldest (3), not b's newer entry.
        b.borrow_mut().put(4, 'd', 10);
        let three = a.borrow_mut().get(&3);
        let one = a.borrow_mut().get(&1);
        assert_eq!((three, one, b.borrow_mut().get(&4)), (None, Some('a'), Some('d')));
        assert_eq!(pool.by_kind(), [10, 20, 0]);
        // b's own cap (15): its older entry goes, whatever the pool.
        b.borrow_mut().put(6, 'f', 10);
        assert_eq!((b.borrow().len(), b.borrow().evicted()), (1, 2));
        // A smaller budget evicts at once; bytes held elsewhere count; a closed cache gives its bytes back.
        pool.set_capacity(20);
        assert!(pool.held() <= 20, "{}", pool.held());
        pool.set_outside(10);
        a.borrow_mut().put(7, 'g', 10);
        assert!(pool.held() <= 20, "{}", pool.held());
        drop(a);
        assert_eq!(pool.held(), 10 + b.borrow().bytes());
        pool.set_outside(0);
        drop(b);
        assert_eq!((pool.held(), pool.by_kind()), (0, [0, 0, 0]));
    }
}

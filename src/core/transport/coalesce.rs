//! Coalescing byte ranges of one object into few requests.
//!
//! Writers do not store chunks in index order (zarr-python writes Morton order), so spans
//! are sorted by offset first; neighbours closer than `gap` bytes join one run, as long as the
//! run stays within `max` bytes. A request saved is worth far more than a few unread bytes.
use alloc::vec::Vec;

/// One request: `len` bytes at `offset`, serving `members` (input index, offset inside the run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub offset: u64,
    pub len: u64,
    pub members: Vec<(usize, u64)>,
}

/// Group `spans` (offset, length) into runs. `bridge(a, b)` says whether the gap `[a, b)`
/// between two spans may be read (not if those bytes are already on their way).
pub fn coalesce(spans: &[(u64, u64)], gap: u64, max: u64, bridge: &dyn Fn(u64, u64) -> bool) -> Vec<Run> {
    let order = crate::core::nd::order(spans.len(), &|a, b| spans[a] < spans[b]);
    let mut runs: Vec<Run> = Vec::new();
    let mut end = 0u64;
    for i in order {
        let (offset, len) = spans[i];
        let span_end = offset.saturating_add(len);
        if let Some(run) = runs.last_mut() {
            let new_end = end.max(span_end);
            if offset <= end.saturating_add(gap)
                && new_end - run.offset <= max
                && (offset <= end || bridge(end, offset))
            {
                run.members.push((i, offset - run.offset));
                run.len = new_end - run.offset;
                end = new_end;
                continue;
            }
        }
        runs.push(Run { offset, len, members: alloc::vec![(i, 0)] });
        end = span_end;
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_and_merges_within_gap_and_cap() {
        // Out of order, one duplicate, one far away.
        let spans = [(100, 10), (0, 50), (60, 30), (0, 50), (10_000, 5)];
        let runs = coalesce(&spans, 20, 1000, &|_, _| true);
        assert_eq!(runs.len(), 2);
        assert_eq!((runs[0].offset, runs[0].len), (0, 110));
        let mut m = runs[0].members.clone();
        m.sort();
        assert_eq!(m, [(0, 100), (1, 0), (2, 60), (3, 0)]);
        assert_eq!(runs[1], Run { offset: 10_000, len: 5, members: alloc::vec![(4, 0)] });
        // The cap splits a contiguous stretch.
        let contiguous: Vec<(u64, u64)> = (0..10).map(|i| (i * 100, 100)).collect();
        let runs = coalesce(&contiguous, 0, 300, &|_, _| true);
        assert_eq!(runs.iter().map(|r| r.len).collect::<Vec<_>>(), [300, 300, 300, 100]);
        // No gap allowed: separate requests.
        assert_eq!(coalesce(&[(0, 10), (11, 10)], 0, 1000, &|_, _| true).len(), 2);
        assert_eq!(coalesce(&[(0, 10), (10, 10)], 0, 1000, &|_, _| true).len(), 1);
        assert!(coalesce(&[], 10, 10, &|_, _| true).is_empty());
        // A gap that may not be read splits the run; touching spans need no bridge.
        let no = |a: u64, b: u64| !(a < 40 && 30 < b);
        assert_eq!(coalesce(&[(0, 20), (50, 10)], 100, 1000, &no).len(), 2);
        assert_eq!(coalesce(&[(0, 20), (25, 20), (60, 10)], 100, 1000, &no).len(), 1);
        assert_eq!(coalesce(&[(0, 30), (30, 10)], 0, 1000, &|_, _| false).len(), 1);
    }
}

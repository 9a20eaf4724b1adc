//! How a transport behaves ([`Config`], [`Retry`]) and what it counts ([`Stats`]).

/// How transient failures are retried: exponential backoff with full jitter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Retry {
    /// Tries in all (1: no retry).
    pub attempts: u32,
    /// The first backoff ceiling, doubled at each retry…
    pub base_ms: f64,
    /// …up to this.
    pub max_ms: f64,
    /// A request without an answer or body progress for this long is given up (and retried).
    pub stall_ms: f64,
    /// No retry starts later than this after the first try (with a clock).
    pub budget_ms: f64,
}

impl Default for Retry {
    fn default() -> Self {
        Retry { attempts: 5, base_ms: 200.0, max_ms: 5_000.0, stall_ms: 10_000.0, budget_ms: 30_000.0 }
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    /// Bytes of derived values (shard indexes), whole objects and held merged reads kept.
    pub cache_bytes: usize,
    /// S3 answers 403 for a missing key when listing is not allowed.
    pub treat403_as_missing: bool,
    /// Spans of one object wanted together are read in one request when the bytes between
    /// them are fewer than this…
    pub merge_gap: u64,
    /// …and the request stays within this many bytes.
    pub merge_max: u64,
    /// The most bytes a whole-object answer may have (a ranged one has its range).
    pub max_body: u64,
    /// The most bytes a document read with `read_document` may have.
    pub max_document: u64,
    pub retry: Retry,
    /// How long what was read is trusted before it is checked again.
    pub recheck: super::Recheck,
    /// Whether ranged reads ask the server to refuse a changed object.
    pub conditional: super::Conditional,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cache_bytes: 64 << 20,
            treat403_as_missing: false,
            merge_gap: 256 << 10,
            merge_max: 16 << 20,
            max_body: crate::core::error::MAX_DECODED as u64,
            max_document: crate::core::error::MAX_METADATA as u64,
            retry: Retry::default(),
            recheck: super::Recheck::Open,
            conditional: super::Conditional::None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub requests: u64,
    pub bytes: u64,
    /// Spans served by `read_spans` (absent ones not counted).
    pub spans: u64,
    /// Requests that served more than one span.
    pub merged_requests: u64,
    /// Spans served from the held bytes of an earlier merged read (no request; also in `spans`).
    pub held_hits: u64,
    /// Derived values (`memo`) found in the cache, and computed.
    pub memo_hits: u64,
    pub memo_fills: u64,
    /// Requests sent again after a transient failure.
    pub retries: u64,
    /// Objects asked again whether they changed (`recheck` after a time).
    pub revalidations: u64,
    /// Changes of an object seen under an open array (each read resolved again, or `Changed`).
    pub changes: u64,
    /// Bytes the cache holds now, and entries it evicted (for `cache_bytes` or the page's budget).
    pub cached_bytes: u64,
    pub evictions: u64,
}

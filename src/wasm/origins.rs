//! Requests in flight per origin: one limit per origin, shared by every array of this instance
//! (option `maxInFlight`), and its default, which depends on what the origin speaks.
//!
//! A browser keeps at most 6 connections to an HTTP/1.1 origin and queues the rest itself,
//! first come first served and unmerged: past 6, requests wait there instead of here, where
//! they would merge with their neighbours and start by priority. Measured over a 40 ms link
//! (BENCHMARKS.md, "Requests in flight per origin"): tile sweeps 1.07–1.78× faster with 6 than
//! with 16 over HTTP/1.1, and 1.01–1.24× slower over HTTP/2, where one connection carries them
//! all. So in a browser the wrapper sets the default to 6 ([`requests_per_origin`]) and tells
//! which origins answer over HTTP/2 or 3 ([`origin_speaks`]), which then get 16.
use crate::core::transport::limit::Limiter;
use crate::core::transport::vecmap::VecMap;
use crate::core::urls::origin;
use alloc::rc::Rc;
use alloc::string::String;
use core::cell::{Cell, RefCell};
use wasm_bindgen::prelude::*;

/// Requests in flight per origin where nothing holds them back.
const MANY: usize = 16;

struct Origin {
    limiter: Rc<Limiter>,
    /// Set by the caller (`maxInFlight`) or by what the origin speaks: the default no longer applies.
    settled: Cell<bool>,
}

std::thread_local! {
    static ORIGINS: RefCell<VecMap<String, Rc<Origin>>> = const { RefCell::new(VecMap::new()) };
    static DEFAULT: Cell<usize> = const { Cell::new(MANY) };
}

fn entry(url: &str) -> Rc<Origin> {
    ORIGINS.with(|m| {
        m.borrow_mut()
            .get_or_insert_with(origin(url).into(), || {
                let n = DEFAULT.with(Cell::get);
                Rc::new(Origin { limiter: Rc::new(Limiter::new(n)), settled: Cell::new(false) })
            })
            .clone()
    })
}

/// The request limit of `url`'s origin.
pub fn limiter(url: &str) -> Rc<Limiter> {
    entry(url).limiter.clone()
}

/// The caller's `maxInFlight` for `url`'s origin: it applies from now on, whatever the origin
/// speaks (the last value set applies).
pub fn set_max(url: &str, n: usize) {
    let o = entry(url);
    o.settled.set(true);
    o.limiter.set_max(n);
}

/// The default of origins whose protocol is not known (a browser's wrapper: 6), applied to
/// those not settled yet.
#[wasm_bindgen(js_name = requestsPerOrigin)]
pub fn requests_per_origin(n: usize) {
    DEFAULT.with(|d| d.set(n)); // (the limiter keeps at least 1)
    ORIGINS.with(|m| m.borrow().iter().filter(|(_, o)| !o.settled.get()).for_each(|(_, o)| o.limiter.set_max(n)));
}

/// `url`'s origin was seen answering over HTTP/2 or 3 (`multiplexed`), or over HTTP/1: its
/// limit is 16, or the default; unless the caller set one.
#[wasm_bindgen(js_name = originSpeaks)]
pub fn origin_speaks(url: &str, multiplexed: bool) {
    let o = entry(url);
    if !o.settled.get() {
        o.settled.set(true);
        o.limiter.set_max(if multiplexed { MANY } else { DEFAULT.with(Cell::get) });
    }
}

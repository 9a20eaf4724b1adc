//! The thin JS binding (wasm-bindgen): everything here converts; the logic lives in `core`.
//! `fetch` behind the core's `HttpClient` ([`fetch`]), JS values in and out ([`convert`]),
//! the exported classes ([`array`], [`group`], [`decoder`]) and the TypeScript contract they
//! are declared with ([`contract`]).
//!
//! May import: `core` (any layer).
extern crate std;

pub mod array;
pub mod contract;
pub mod convert;
pub mod decoder;
pub mod fetch;
pub mod group;
pub mod origins;

pub use array::{WasmArray, WasmRegion};
pub use decoder::WasmDecoder;
pub use fetch::FetchClient;
pub use group::WasmGroup;

use crate::core::open::{self, Opened};
use crate::core::transport::cache::Pool;
use crate::core::urls::join_paths;
use alloc::string::String;
use convert::{parse_options, to_js};
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

/// Open the array or group at `url`: resolves to a `WasmArray` or a `WasmGroup`.
#[wasm_bindgen(js_name = openNode, unchecked_return_type = "Promise<WasmArray | WasmGroup>")]
pub fn open_node(url: String, #[wasm_bindgen(unchecked_param_type = "WasmOptions")] options: JsValue) -> Promise {
    open_with(url, options, None, None)
}

/// [`open_node`], with documents known without a request (a group's consolidated metadata).
pub(crate) fn open_with(
    url: String,
    options: JsValue,
    known: Option<alloc::rc::Rc<crate::core::store::Known>>,
    stack: Option<crate::core::store::Stack>,
) -> Promise {
    future_to_promise(async move {
        let mut o = parse_options(&options).map_err(to_js)?;
        o.open.known = known;
        o.open.stack = stack;
        if let Some(n) = o.max_in_flight {
            origins::set_max(&url, n);
        }
        let opening = o.client.with_signal(o.signal);
        match open::open(&opening, &url, o.open).await.map_err(to_js)? {
            Opened::Array(a) => Ok(WasmArray::new(*a, o.client, o.strings).into()),
            Opened::Group(g) => Ok(WasmGroup::new(g).into()),
        }
    })
}

/// The array `WasmArray.state()` described (by an earlier instance of this module), rebuilt
/// without a request.
#[wasm_bindgen(js_name = reopenArray)]
pub fn reopen_array(
    state: &str,
    #[wasm_bindgen(unchecked_param_type = "WasmOptions")] options: JsValue,
) -> Result<WasmArray, JsValue> {
    let o = parse_options(&options).map_err(to_js)?;
    let a = open::reopen(state, o.open).map_err(to_js)?;
    if let Some(n) = o.max_in_flight {
        origins::set_max(a.url(), n);
    }
    Ok(WasmArray::new(a, o.client, o.strings))
}

std::thread_local! {
    /// The page's memory budget, shared by every array's cache.
    static POOL: alloc::rc::Rc<Pool> = Pool::new(256 << 20);
}

/// The budget the arrays opened here share.
pub(crate) fn pool() -> alloc::rc::Rc<Pool> {
    POOL.with(alloc::rc::Rc::clone)
}

/// Set the page's budget for every array's caches, in bytes (evicting down to it at once), and
/// the bytes the wrapper holds elsewhere against it (decoded chunks), if given; returns what the
/// caches hold: `[budget, indexes, held reads, whole objects, evictions]`.
#[wasm_bindgen(js_name = memoryBudget)]
pub fn memory_budget(budget: Option<f64>, outside: Option<f64>) -> alloc::vec::Vec<f64> {
    let p = pool();
    if let Some(b) = outside {
        p.set_outside(b.clamp(0.0, 1e15) as usize);
    }
    if let Some(b) = budget {
        p.set_capacity(b.clamp(0.0, 1e15) as usize);
    }
    let [d, h, o] = p.by_kind();
    alloc::vec![p.capacity() as f64, d as f64, h as f64, o as f64, p.evictions() as f64]
}

/// Stops this instance of the module with a trap, as a bug would (`unreachable`): for the
/// wrapper's test that a trapped module is replaced and its arrays reopened. `later`: from
/// inside a future polled by the executor (where real traps happen) rather than at once.
#[wasm_bindgen(js_name = trapForTest, unchecked_return_type = "Promise<void>")]
pub fn trap_for_test(later: bool) -> Promise {
    if !later {
        core::arch::wasm32::unreachable();
    }
    future_to_promise(async move {
        fetch::sleep_ms(1.0).await;
        core::arch::wasm32::unreachable()
    })
}

/// A child's path under a group's path (`a/b` + `c` → `a/b/c`).
#[wasm_bindgen(js_name = childPath)]
pub fn child_path(group: &str, child: &str) -> String {
    join_paths(group, child)
}

/// The OME-Zarr multiscale image a group's attributes (JSON text) describe, or `undefined`
/// when they describe none; `ndim`: the first level's dimensions (for OME ≤ 0.3, which writes
/// no axes).
#[wasm_bindgen(js_name = omeMultiscale, unchecked_return_type = "WasmMultiscale | undefined")]
pub fn ome_multiscale(attributes: &str, ndim: Option<u32>) -> Result<JsValue, JsValue> {
    let m =
        crate::core::metadata::multiscale::ome_in(attributes.as_bytes(), ndim.map(|n| n as usize)).map_err(to_js)?;
    Ok(m.map_or(JsValue::UNDEFINED, |m| convert::multiscale_to_js(&m)))
}

/// The multiscale image of a Neuroglancer precomputed `info` (JSON text).
#[wasm_bindgen(js_name = precomputedMultiscale, unchecked_return_type = "WasmMultiscale")]
pub fn precomputed_multiscale(info: &str) -> Result<JsValue, JsValue> {
    let info = crate::core::metadata::json::parse_object(info.as_bytes(), "precomputed info").map_err(to_js)?;
    let m = crate::core::metadata::multiscale::precomputed(&info.into()).map_err(to_js)?;
    Ok(convert::multiscale_to_js(&m))
}

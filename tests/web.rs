//! wasm-bindgen tests in headless Chromium: `wasm-pack test --headless --chrome` (what `npm
//! test` runs too), or `cargo test --target wasm32-unknown-unknown --test web` with the
//! wasm-bindgen runner.
//!
//! With no environment, the fixtures are embedded in the test module (`build.rs` lists them) and
//! served from memory by the in-memory `ObjectServer` (the same core read path, no network).
//! With `SHARDFETCH_FIXTURES_URL` set at compile time (the URL of a server of `tests/fixtures/`,
//! as `npm test` does), each manifest's test also reads its fixtures over HTTP through the real
//! `fetch` binding.
//!
//! One test per manifest, each a few seconds at most. `wasm-bindgen-test-runner` runs every test
//! of this file in one page, and its time limit (`WASM_BINDGEN_TEST_TIMEOUT`, 20 s by default;
//! `.cargo/config.toml` raises it for a loaded machine) is for that page as a whole, not per
//! test: the whole embedded run must stay well under 20 s (5-10 s on a shared 2-core machine).
#![cfg(target_arch = "wasm32")]
mod common;

use common::{built_with, check_case, check_group, fetch_all, manifest_names, parse_manifest};
use js_sys::{Function, Object, Promise, Reflect};
use shardfetch::core::transport::memory::ObjectServer;
use shardfetch::core::transport::{HttpClient, Method, Request};
use shardfetch::FetchClient;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

include!(concat!(env!("OUT_DIR"), "/fixtures_embedded.rs"));

/// Where the embedded fixtures are served (nothing leaves the page: `.invalid` never resolves).
const EMBEDDED: &str = "https://fixtures.invalid";

/// The embedded fixtures as a static server (`.` and `..` resolved, as `fetch` resolves them).
fn embedded() -> ObjectServer {
    ObjectServer::with_source(|url| {
        let rel = url.strip_prefix(EMBEDDED)?.trim_start_matches('/');
        FIXTURES.iter().find(|(p, _)| *p == rel).map(|(_, b)| b.to_vec())
    })
}

/// The fixture base URL and the open options of the JS-facing tests: the fixture server, or a
/// `fetch` option answered by the embedded fixtures' server.
fn api_base() -> (String, JsValue) {
    if let Some(base) = option_env!("SHARDFETCH_FIXTURES_URL") {
        return (base.to_string(), Object::new().into());
    }
    let server = embedded();
    // The server's answer to (url, Range header or null, whether a HEAD): status, Content-Range,
    // Content-Length, body.
    let answer = move |url: String, range: JsValue, head: bool| {
        let method = if head { Method::Head } else { Method::Get };
        let range = range.as_string();
        let r = server.answer(&Request::new(method, &url, range));
        let length = r.content_length.map_or(JsValue::UNDEFINED, |n| JsValue::from(n as f64));
        let range = r.content_range.map_or(JsValue::UNDEFINED, JsValue::from);
        js_sys::Array::of4(&r.status.into(), &range, &length, &js_sys::Uint8Array::from(r.body.as_slice()))
    };
    let answer = Closure::<dyn Fn(String, JsValue, bool) -> js_sys::Array>::new(answer);
    let serve = Function::new_with_args(
        "answer, url, init",
        r#"
        const range = new Headers(init && init.headers).get("range");
        const [status, contentRange, contentLength, body] = answer(String(url), range, (init && init.method) === "HEAD");
        const headers = {};
        if (contentRange !== undefined) headers["Content-Range"] = contentRange;
        if (contentLength !== undefined) headers["Content-Length"] = String(contentLength);
        return Promise.resolve(new Response(body.length ? body : null, { status, headers }));
        "#,
    );
    let fetch = serve.bind1(&JsValue::NULL, &answer.into_js_value());
    let options = Object::new();
    Reflect::set(&options, &"fetch".into(), &fetch).unwrap();
    (EMBEDDED.to_string(), options.into())
}

/// Every case (that this build reads) and group of the manifest `name`, read through `c` from
/// `base`: the failures, each naming its case (or group) and where it was read from.
async fn check_manifest<C: HttpClient>(c: &C, base: &str, name: &str) -> Vec<String> {
    let (cases, groups) = parse_manifest(&fetch_all(c, &format!("{base}/{name}")).await);
    let cases: Vec<_> = cases.into_iter().filter(|k| k.needs_feature().is_none_or(built_with)).collect();
    assert!(!cases.is_empty(), "{name}: no case to read");
    let mut failures = Vec::new();
    for k in &cases {
        if let Err(e) = check_case(c, base, k).await {
            failures.push(format!("{base}: {e}"));
        }
    }
    for g in &groups {
        if let Err(e) = check_group(c, base, g).await {
            failures.push(format!("{base}: group {}: {e}", g["path"]));
        }
    }
    failures
}

/// The manifest `name` read from the embedded fixtures and, when a fixture server was given at
/// compile time, through the browser's `fetch` from that server.
async fn read_manifest(name: &str) {
    let mut failures = check_manifest(&embedded(), EMBEDDED, name).await;
    if let Some(base) = option_env!("SHARDFETCH_FIXTURES_URL") {
        failures.extend(check_manifest(&FetchClient::global().unwrap(), base, name).await);
    }
    assert!(failures.is_empty(), "{name}: {} failed:\n{}", failures.len(), failures.join("\n"));
}

/// A test per manifest (`manifest_tests_cover_manifests_json` checks that none is left out).
macro_rules! manifest_tests {
    ($($test:ident: $file:literal,)*) => {
        /// The manifests the tests below read.
        const TESTED: &[&str] = &[$($file),*];
        $(
            #[wasm_bindgen_test]
            async fn $test() {
                read_manifest($file).await;
            }
        )*
    };
}

manifest_tests! {
    fixtures_zarr_v3: "manifest.json",
    fixtures_zarr_v2: "manifest-zp2.json",
    fixtures_zarr_v3_draft_sharding: "manifest-draft.json",
    fixtures_mdio: "manifest-mdio.json",
    fixtures_precomputed: "manifest-precomputed.json",
    fixtures_strings_zarr_v3: "manifest-strings.json",
    fixtures_strings_zarr_v2: "manifest-strings-zp2.json",
    fixtures_cloudvolume: "manifest-cloudvolume.json",
    fixtures_numcodecs_filters: "manifest-filters.json",
    fixtures_zarrita: "manifest-zarrita.json",
    fixtures_containers: "manifest-containers.json",
    fixtures_icechunk: "manifest-icechunk.json",
    fixtures_datetimes: "manifest-time.json",
    fixtures_nested_containers: "manifest-nested.json",
    fixtures_tiff: "manifest-tiff.json",
    fixtures_tiff_fax: "manifest-tiff-fax.json",
    fixtures_tiff_classes: "manifest-tiff-classes.json",
    fixtures_hdf5: "manifest-hdf5.json",
    fixtures_netcdf3: "manifest-netcdf3.json",
}

/// Every manifest `manifests.json` lists has its test above, and the fixtures are embedded.
#[wasm_bindgen_test]
fn manifest_tests_cover_manifests_json() {
    assert!(FIXTURES.len() > 100, "{} fixture files embedded", FIXTURES.len());
    let index = FIXTURES.iter().find(|(p, _)| *p == "manifests.json").expect("manifests.json embedded").1;
    let mut listed = manifest_names(index);
    let mut tested: Vec<String> = TESTED.iter().map(|s| s.to_string()).collect();
    listed.sort();
    tested.sort();
    assert_eq!(listed, tested, "manifests.json against the manifests tests/web.rs has a test for");
}

async fn call(obj: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let f: Function = Reflect::get(obj, &method.into()).unwrap().dyn_into().unwrap();
    let p = f.apply(obj, &args.iter().collect())?;
    JsFuture::from(Promise::from(p)).await
}

/// `readChunks` of one chunk, decoded here: the chunk, or its error.
async fn get_chunk(arr: &JsValue, coords: JsValue) -> Result<JsValue, JsValue> {
    let got = std::rc::Rc::new(std::cell::RefCell::new(JsValue::UNDEFINED));
    let keep = got.clone();
    let on = Closure::<dyn FnMut(JsValue, JsValue)>::new(move |_: JsValue, item: JsValue| *keep.borrow_mut() = item);
    let list = js_sys::Array::of1(&coords);
    let args = [list.into(), true.into(), JsValue::UNDEFINED, JsValue::UNDEFINED, on.as_ref().clone()];
    call(arr, "readChunks", &args).await?;
    let item = got.borrow().clone();
    match Reflect::get(&item, &"error".into()) {
        Ok(e) if !e.is_undefined() => Err(e),
        _ => Ok(item),
    }
}

/// A region read decoded here: `region(sel)`, `read`, `finish`.
async fn get(arr: &JsValue, sel: JsValue, signal: JsValue) -> Result<JsValue, JsValue> {
    let region: Function = Reflect::get(arr, &"region".into()).unwrap().dyn_into().unwrap();
    let r = region.call1(arr, &sel)?;
    let noop = Function::new_no_args("");
    call(&r, "read", &[true.into(), signal, JsValue::UNDEFINED, noop.into()]).await?;
    let finish: Function = Reflect::get(&r, &"finish".into()).unwrap().dyn_into().unwrap();
    finish.call0(&r)
}

/// The exported JS-facing functions: a chunk, a region, and typed errors after which the
/// module keeps working.
#[wasm_bindgen_test]
async fn exported_api_and_errors() {
    let (base, options) = api_base();
    let url = format!("{base}/data/zp/shard_gzip_end");
    let arr = JsFuture::from(shardfetch::wasm::open_node(url.clone(), options.clone())).await.unwrap();
    let meta = Reflect::get(&arr, &"meta".into()).unwrap().dyn_into::<Function>().unwrap().call0(&arr).unwrap();
    assert_eq!(Reflect::get(&meta, &"dtype".into()).unwrap().as_string().unwrap(), "uint16");

    let chunk = get_chunk(&arr, js_sys::Array::of2(&0.into(), &0.into()).into()).await.unwrap();
    let bytes: js_sys::Uint8Array = Reflect::get(&chunk, &"bytes".into()).unwrap().dyn_into().unwrap();
    assert_eq!(bytes.length(), 16 * 16 * 2);

    for (path, code) in [("data/nowhere", "NotFound"), ("data/zp/shard_gzip_end/c", "NotFound")] {
        let e = JsFuture::from(shardfetch::wasm::open_node(format!("{base}/{path}"), options.clone()))
            .await
            .unwrap_err();
        assert_eq!(Reflect::get(&e, &"code".into()).unwrap().as_string().unwrap(), code);
        let msg = Reflect::get(&e, &"message".into()).unwrap().as_string().unwrap();
        assert!(msg.contains(path), "{msg}");
    }
    let bad = get_chunk(&arr, js_sys::Array::of2(&99.into(), &0.into()).into()).await.unwrap_err();
    assert_eq!(Reflect::get(&bad, &"code".into()).unwrap().as_string().unwrap(), "InvalidSelection");
    let bad = get_chunk(&arr, JsValue::from(1.5)).await.unwrap_err();
    assert_eq!(Reflect::get(&bad, &"code".into()).unwrap().as_string().unwrap(), "InvalidSelection");

    // An aborted signal rejects with Aborted.
    let ctl = web_sys::AbortController::new().unwrap();
    ctl.abort();
    let sel = js_sys::Array::of2(&JsValue::NULL, &JsValue::NULL);
    let e = get(&arr, sel.clone().into(), ctl.signal().into()).await.unwrap_err();
    assert_eq!(Reflect::get(&e, &"code".into()).unwrap().as_string().unwrap(), "Aborted");

    // Still alive after all of that.
    let region = get(&arr, sel.into(), JsValue::UNDEFINED).await.unwrap();
    let bytes: js_sys::Uint8Array = Reflect::get(&region, &"bytes".into()).unwrap().dyn_into().unwrap();
    assert_eq!(bytes.length(), 100 * 120 * 2);
}

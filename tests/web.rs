//! wasm-bindgen tests in headless Chromium (`wasm-pack test --headless --chrome`, or `cargo
//! test --target wasm32-unknown-unknown --test web` with the wasm-bindgen runner).
//! With no environment, the fixtures are embedded in the test module and served from memory by
//! the in-memory `ObjectServer` (the same core read path, no network). With
//! `SHARDFETCH_FIXTURES_URL` set at compile time (the URL of a server of `tests/fixtures/`, as
//! `npm test` does), they are also fetched over HTTP through the real `fetch` binding.
#![cfg(target_arch = "wasm32")]
mod common;

use common::{all_cases, check_case, check_group, fetch_all};
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

/// Every case and group of every manifest, read through `c` from `base`.
async fn every_fixture<C: HttpClient>(c: &C, base: &str) {
    let (cases, groups) = all_cases(|name| {
        let url = format!("{base}/{name}");
        async move { fetch_all(c, &url).await }
    })
    .await;
    assert!(cases.len() >= 30);
    let mut failures = Vec::new();
    for k in &cases {
        if let Err(e) = check_case(c, base, k).await {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{} of {} failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    for g in &groups {
        check_group(c, base, g).await.unwrap();
    }
}

#[wasm_bindgen_test]
async fn every_fixture_embedded() {
    assert!(FIXTURES.len() > 100, "{} fixture files embedded", FIXTURES.len());
    every_fixture(&embedded(), EMBEDDED).await;
}

/// Through the browser's `fetch`, when a fixture server was given at compile time.
#[wasm_bindgen_test]
async fn every_fixture_over_http() {
    let Some(base) = option_env!("SHARDFETCH_FIXTURES_URL") else {
        console_log!("SHARDFETCH_FIXTURES_URL not set: the fetch path is tested by npm test");
        return;
    };
    every_fixture(&FetchClient::global().unwrap(), base).await;
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

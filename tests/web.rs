//! wasm-bindgen tests in headless Chromium (`wasm-pack test --headless --chrome`, or `cargo
//! test --target wasm32-unknown-unknown --test web` with the wasm-bindgen runner).
//! With no environment, the fixtures are embedded in the test module and served from memory by
//! a Range-honouring `HttpClient` (the same core read path, no network). With
//! `SHARDFETCH_FIXTURES_URL` set at compile time (the URL of a server of `tests/fixtures/`, as
//! `npm test` does), they are also fetched over HTTP through the real `fetch` binding.
#![cfg(target_arch = "wasm32")]
mod common;

use common::{all_cases, check_case, check_group, fetch_all, static_answer};
use js_sys::{Function, Object, Promise, Reflect};
use shardfetch::core::transport::{HttpClient, Request, Response};
use shardfetch::core::Result as CoreResult;
use shardfetch::FetchClient;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

include!(concat!(env!("OUT_DIR"), "/fixtures_embedded.rs"));

/// Where the embedded fixtures are served (nothing leaves the page: `.invalid` never resolves).
const EMBEDDED: &str = "https://fixtures.invalid";

/// The fixture base URL and the open options of the JS-facing tests: the fixture server, or a
/// `fetch` option answering from the embedded fixtures as a static server would.
fn api_base() -> (String, JsValue) {
    if let Some(base) = option_env!("SHARDFETCH_FIXTURES_URL") {
        return (base.to_string(), Object::new().into());
    }
    let files = js_sys::Map::new();
    for (path, bytes) in FIXTURES {
        files.set(&JsValue::from_str(path), &js_sys::Uint8Array::from(*bytes).into());
    }
    let serve = Function::new_with_args(
        "files, base, url, init",
        r#"
        const rel = String(url).slice(base.length + 1).split("/").reduce((a, s) => (s === ".." ? a.slice(0, -1) : s === "." ? a : [...a, s]), []);
        const body = files.get(rel.join("/"));
        if (!body) return Promise.resolve(new Response(null, { status: 404 }));
        const size = body.length;
        const range = new Headers(init && init.headers).get("range");
        if (!range) return Promise.resolve(new Response(body, { status: 200, headers: { "Content-Length": String(size) } }));
        const [a, b] = range.slice(6).split("-");
        const start = a === "" ? Math.max(0, size - Number(b)) : Number(a);
        const end = a === "" || b === "" ? size : Math.min(size, Number(b) + 1);
        if (start >= size) return Promise.resolve(new Response(null, { status: 416, headers: { "Content-Range": `bytes */${size}` } }));
        return Promise.resolve(new Response(body.slice(start, end), {
            status: 206,
            headers: { "Content-Range": `bytes ${start}-${end - 1}/${size}`, "Content-Length": String(end - start) },
        }));
        "#,
    );
    let fetch = serve.bind2(&JsValue::NULL, &files, &JsValue::from_str(EMBEDDED));
    let options = Object::new();
    Reflect::set(&options, &"fetch".into(), &fetch).unwrap();
    (EMBEDDED.to_string(), options.into())
}

/// The embedded fixtures as a static server.
#[derive(Clone, Copy)]
struct Embedded;

impl HttpClient for Embedded {
    async fn send(&self, req: Request<'_>) -> CoreResult<Response> {
        let rel = req.url.strip_prefix(EMBEDDED).unwrap_or(req.url).trim_start_matches('/');
        // `..` segments resolved, as `fetch` resolves them (a reference file's relative targets).
        let mut parts: Vec<&str> = Vec::new();
        for seg in rel.split('/') {
            match seg {
                ".." => {
                    parts.pop();
                }
                "." => {}
                s => parts.push(s),
            }
        }
        let rel = parts.join("/");
        let body = FIXTURES.iter().find(|(p, _)| *p == rel).map(|(_, b)| *b);
        Ok(static_answer(req.method, req.range.as_deref(), body))
    }
}

/// Every case and group of every manifest, read through `c` from `base`.
async fn every_fixture<C: HttpClient + Clone + 'static>(c: &C, base: &str) {
    let (cases, groups) = all_cases(|name| {
        let c = c.clone();
        let url = format!("{base}/{name}");
        async move { fetch_all(&c, &url).await }
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
    every_fixture(&Embedded, EMBEDDED).await;
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

//! wasm-bindgen tests in headless Chromium: the fixtures fetched over HTTP from the local
//! Range/CORS test server, through the real `fetch` binding.
//! `SHARDFETCH_FIXTURES_URL` (at compile time) is the URL of the `tests/fixtures/` folder.
#![cfg(target_arch = "wasm32")]
mod common;

use common::{all_cases, check_case, check_group, fetch_all};
use js_sys::{Function, Object, Promise, Reflect};
use shardfetch::FetchClient;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn base() -> &'static str {
    option_env!("SHARDFETCH_FIXTURES_URL").expect("build with SHARDFETCH_FIXTURES_URL set")
}

#[wasm_bindgen_test]
async fn every_fixture_over_http() {
    let c = FetchClient::global().unwrap();
    let (cases, groups) = all_cases(|name| {
        let c = c.clone();
        async move { fetch_all(&c, &format!("{}/{name}", base())).await }
    })
    .await;
    assert!(cases.len() >= 30);
    let mut failures = Vec::new();
    for k in &cases {
        if let Err(e) = check_case(&c, base(), k).await {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{} of {} failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    for g in &groups {
        check_group(&c, base(), g).await.unwrap();
    }
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
    let url = format!("{}/data/zp/shard_gzip_end", base());
    let arr = JsFuture::from(shardfetch::wasm::open_node(url.clone(), Object::new().into())).await.unwrap();
    let meta = Reflect::get(&arr, &"meta".into()).unwrap().dyn_into::<Function>().unwrap().call0(&arr).unwrap();
    assert_eq!(Reflect::get(&meta, &"dtype".into()).unwrap().as_string().unwrap(), "uint16");

    let chunk = get_chunk(&arr, js_sys::Array::of2(&0.into(), &0.into()).into()).await.unwrap();
    let bytes: js_sys::Uint8Array = Reflect::get(&chunk, &"bytes".into()).unwrap().dyn_into().unwrap();
    assert_eq!(bytes.length(), 16 * 16 * 2);

    for (path, code) in [("data/nowhere", "NotFound"), ("data/zp/shard_gzip_end/c", "NotFound")] {
        let e = JsFuture::from(shardfetch::wasm::open_node(format!("{}/{path}", base()), Object::new().into()))
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

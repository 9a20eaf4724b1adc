//! `fetch` as the core's [`HttpClient`]: the platform's global `fetch` (window, worker, Node)
//! or the caller's, with extra headers, an abort signal, and a per-origin limit on requests in
//! flight with priorities.
use crate::core::storage::limit::Limiter;
use crate::core::storage::{origin, HttpClient, Method, Request, Response};
use crate::core::{Error, ErrorCode, Result};
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use js_sys::{Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

/// Default requests in flight per origin (option `maxInFlight`).
const MAX_IN_FLIGHT: usize = 16;

std::thread_local! {
    /// One limit per origin, shared by every array of this instance.
    static LIMITS: RefCell<BTreeMap<String, Rc<Limiter>>> = const { RefCell::new(BTreeMap::new()) };
}

/// The request limit of `url`'s origin.
pub fn limiter(url: &str) -> Rc<Limiter> {
    LIMITS.with(|m| {
        m.borrow_mut().entry(origin(url).into()).or_insert_with(|| Rc::new(Limiter::new(MAX_IN_FLIGHT))).clone()
    })
}

#[derive(Clone)]
pub struct FetchClient {
    fetch: Function,
    this: JsValue,
    headers: Rc<Vec<(String, String)>>,
    signal: Option<AbortSignal>,
    /// Requests of this caller start before lower ones when the origin's limit is reached.
    priority: i64,
}

impl FetchClient {
    /// The global `fetch`.
    pub fn global() -> Result<FetchClient> {
        let g: JsValue = js_sys::global().into();
        let f = Reflect::get(&g, &"fetch".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
        let f = f.ok_or_else(|| Error::new(ErrorCode::Network, "this platform has no global fetch"))?;
        Ok(FetchClient { fetch: f, this: g, headers: Rc::new(Vec::new()), signal: None, priority: 0 })
    }

    /// A caller-supplied `fetch`.
    pub fn with_fetch(f: Function) -> FetchClient {
        FetchClient { fetch: f, this: JsValue::UNDEFINED, headers: Rc::new(Vec::new()), signal: None, priority: 0 }
    }

    pub fn with_headers(self, headers: Vec<(String, String)>) -> FetchClient {
        FetchClient { headers: Rc::new(headers), ..self }
    }

    pub fn with_signal(&self, signal: Option<AbortSignal>) -> FetchClient {
        FetchClient { signal, ..self.clone() }
    }

    pub fn with_priority(&self, priority: f64) -> FetchClient {
        FetchClient { priority: priority.clamp(-1e15, 1e15) as i64, ..self.clone() }
    }
}

fn js_error_to_core(e: JsValue, url: &str) -> Error {
    let name = Reflect::get(&e, &"name".into()).ok().and_then(|n| n.as_string()).unwrap_or_default();
    let msg = Reflect::get(&e, &"message".into()).ok().and_then(|n| n.as_string()).unwrap_or_else(|| format!("{e:?}"));
    if name == "AbortError" {
        return Error::new(ErrorCode::Aborted, format!("{url}: aborted"));
    }
    Error::new(
        ErrorCode::Network,
        format!("{url}: fetch failed ({msg}); a CORS refusal or an unreachable host looks like this"),
    )
}

impl HttpClient for FetchClient {
    async fn send(&self, req: Request<'_>) -> Result<Response> {
        let limit = limiter(req.url);
        let _slot = limit.acquire(self.priority).await;
        if self.is_aborted() {
            return Err(Error::new(ErrorCode::Aborted, format!("{}: aborted", req.url)));
        }
        let init = Object::new();
        let headers = Object::new();
        for (k, v) in self.headers.iter() {
            Reflect::set(&headers, &k.into(), &v.into()).ok();
        }
        if let Some(r) = &req.range {
            Reflect::set(&headers, &"Range".into(), &r.into()).ok();
            // Chrome serialises concurrent range reads of one URL through its cache otherwise.
            Reflect::set(&init, &"cache".into(), &"no-store".into()).ok();
        }
        let method = match req.method {
            Method::Get => "GET",
            Method::Head => "HEAD",
        };
        Reflect::set(&init, &"method".into(), &method.into()).ok();
        Reflect::set(&init, &"headers".into(), &headers).ok();
        if let Some(s) = &self.signal {
            Reflect::set(&init, &"signal".into(), s).ok();
        }
        let p = self.fetch.call2(&self.this, &req.url.into(), &init).map_err(|e| js_error_to_core(e, req.url))?;
        let p: Promise = p.dyn_into().map_err(|_| Error::new(ErrorCode::Network, "fetch did not return a promise"))?;
        let resp = JsFuture::from(p).await.map_err(|e| js_error_to_core(e, req.url))?;
        let resp: web_sys::Response = resp
            .dyn_into()
            .map_err(|_| Error::new(ErrorCode::Network, format!("{}: fetch did not resolve to a Response", req.url)))?;
        let h = resp.headers();
        let content_range = h.get("content-range").ok().flatten();
        let content_length = h.get("content-length").ok().flatten().and_then(|v| v.trim().parse().ok());
        let status = resp.status();
        let body = if req.method == Method::Get {
            let buf = resp.array_buffer().map_err(|e| js_error_to_core(e, req.url))?;
            let buf = JsFuture::from(buf).await.map_err(|e| js_error_to_core(e, req.url))?;
            Uint8Array::new(&buf).to_vec()
        } else {
            Vec::new()
        };
        Ok(Response { status, content_range, content_length, body })
    }

    fn is_aborted(&self) -> bool {
        self.signal.as_ref().is_some_and(AbortSignal::aborted)
    }
}

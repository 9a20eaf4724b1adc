//! shardfetch: read chunked, sharded arrays from static HTTP storage.
//!
//! [`core`] is pure (no JS, `core` + `alloc` only, no `unsafe`) and is tested natively;
//! `wasm` is the thin wasm-bindgen layer that supplies `fetch` and promises.
#![no_std]
#![allow(async_fn_in_trait)]

extern crate alloc;
#[cfg(any(test, target_arch = "wasm32"))]
extern crate std;

pub mod contract;
pub mod core;

#[cfg(target_arch = "wasm32")]
pub mod wasm;
#[cfg(target_arch = "wasm32")]
pub use wasm::FetchClient;

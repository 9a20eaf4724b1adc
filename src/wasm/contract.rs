//! Emits the contract (`crate::contract`) into the generated `shardfetch.d.ts`; the bindings'
//! signatures name its types (`unchecked_*_type`).
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const CODES: &str = crate::contract::ERROR_CODES_TS;

#[wasm_bindgen(typescript_custom_section)]
const SHAPES: &str = crate::contract::CONTRACT;

#[wasm_bindgen(typescript_custom_section)]
const STORES: &str = crate::contract::STORES_TS;

//! `WasmDecoder`: decoding without the network, for a Web Worker — an array rebuilt from the
//! documents it was opened from (`WasmArray.documents()`), through the code the opener used.
use super::array::coords_for;
use super::convert::{chunk_to_js, to_js, JsDecoders};
use crate::core::metadata::Documents;
use crate::core::read::assemble::cut;
use crate::core::read::Array;
use crate::core::store::Store;
use crate::core::transport::Config;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
pub struct WasmDecoder {
    inner: Array,
}

#[wasm_bindgen]
impl WasmDecoder {
    /// `decoders`: the wrapper's runner of external decoders (see `WasmOptions.decoders`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        documents: &str,
        #[wasm_bindgen(unchecked_param_type = "WasmDecoders | undefined")] decoders: Option<js_sys::Function>,
    ) -> std::result::Result<WasmDecoder, JsValue> {
        let docs = Documents::from_json(documents).map_err(to_js)?;
        let store = Rc::new(Store::new(Config::default()));
        let a = Array::new(String::new(), String::new(), docs, store).map_err(to_js)?;
        Ok(WasmDecoder { inner: a.with_decoders(decoders.map(JsDecoders::rc)) })
    }

    /// Decode the stored bytes of chunk `coords`.
    #[wasm_bindgen(unchecked_return_type = "WasmChunk")]
    pub fn decode(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number[]")] coords: JsValue,
        bytes: Vec<u8>,
    ) -> std::result::Result<JsValue, JsValue> {
        let coords = coords_for(&self.inner, &coords)?;
        let d = self.inner.decode(&coords, bytes).map_err(to_js)?;
        // (Arrays of text and bytes are never decoded in a worker: `costlyDecode` is false for them.)
        Ok(chunk_to_js(self.inner.chunk_of(&coords, d), self.inner.dtype(), Default::default()))
    }

    /// Decode chunk `coords` and return its box `[lo, hi)` (array coordinates), C-ordered,
    /// for `WasmRegion.paste`.
    pub fn cut(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number[]")] coords: JsValue,
        bytes: Vec<u8>,
        #[wasm_bindgen(unchecked_param_type = "number[]")] lo: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number[]")] hi: JsValue,
    ) -> std::result::Result<Uint8Array, JsValue> {
        let a = &self.inner;
        let coords = coords_for(a, &coords)?;
        let (lo, hi) = (coords_for(a, &lo)?, coords_for(a, &hi)?);
        let d = a.decode(&coords, bytes).map_err(to_js)?;
        let b = cut(&d, &a.grid().origin(&coords), &lo, &hi, a.dtype().size()).map_err(to_js)?;
        Ok(Uint8Array::from(&b[..]))
    }
}

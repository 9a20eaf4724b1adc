//! `WasmGroup`: an opened group's metadata.
use super::convert::set;
use crate::core::open::Group;
use js_sys::Object;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
pub struct WasmGroup {
    inner: Group,
}

impl WasmGroup {
    pub fn new(inner: Group) -> WasmGroup {
        WasmGroup { inner }
    }
}

#[wasm_bindgen]
impl WasmGroup {
    #[wasm_bindgen(unchecked_return_type = "WasmGroupMeta")]
    pub fn meta(&self) -> JsValue {
        let g = &self.inner;
        let o = Object::new();
        set(&o, "url", g.url());
        set(&o, "root", g.root.as_str());
        set(&o, "path", g.path.as_str());
        set(&o, "format", g.format.name());
        // JSON text: the wrapper parses it when first asked.
        set(&o, "attributes", g.attributes.as_str());
        o.into()
    }
}

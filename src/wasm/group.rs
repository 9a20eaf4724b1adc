//! `WasmGroup`: an opened group's metadata.
use super::convert::set;
use crate::core::open::Group;
use alloc::string::String;
use js_sys::{Array, Object, Promise};
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
        let children: Array = g
            .children
            .iter()
            .map(|(name, array)| {
                let c = Object::new();
                set(&c, "name", name.as_str());
                set(&c, "kind", if *array { "array" } else { "group" });
                JsValue::from(c)
            })
            .collect();
        set(&o, "children", children);
        set(&o, "consolidated", g.known.is_some());
        set(&o, "container", super::convert::container_to_js(g.container.as_ref()));
        o.into()
    }

    /// Open a node under this group (`url` and `options.path` as for `openNode`), its metadata
    /// from the group's consolidated metadata where that holds it (no request), else read.
    #[wasm_bindgen(js_name = openChild, unchecked_return_type = "Promise<WasmArray | WasmGroup>")]
    pub fn open_child(&self, url: String, #[wasm_bindgen(unchecked_param_type = "WasmOptions")] options: JsValue) -> Promise {
        super::open_with(url, options, self.inner.known.clone(), self.inner.stack.clone())
    }
}

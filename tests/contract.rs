//! One contract between the core, the binding, the TypeScript wrapper and the README: the
//! lists each of them spells are compared here (the wrapper's TypeScript is read as text; the
//! shapes crossing the JS↔wasm boundary are `shardfetch::contract`, emitted into the generated
//! `shardfetch.d.ts` that the wrapper compiles against).
#![cfg(not(target_arch = "wasm32"))]
use serde_json::Value;
use shardfetch::contract::{CONTRACT, STORES_TS};
use shardfetch::core::store::registry;
use shardfetch::core::open::first_request;
use shardfetch::core::ErrorCode;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn read(rel: &str) -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

/// The field names of TypeScript interface `name` in `text` (its own, not inherited).
fn fields(text: &str, name: &str) -> BTreeSet<String> {
    let start = text.find(&format!("interface {name} ")).unwrap_or_else(|| panic!("no interface {name}"));
    let body = &text[start..];
    let body = &body[body.find('{').unwrap() + 1..];
    let (mut depth, mut end) = (0i32, 0);
    for (k, c) in body.char_indices() {
        match c {
            '{' | '(' => depth += 1,
            '}' | ')' if depth == 0 => {
                end = k;
                break;
            }
            '}' | ')' => depth -= 1,
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    let mut depth = 0i32;
    for line in body[..end].lines() {
        let t = line.trim();
        if depth == 0 && !t.starts_with('*') && !t.starts_with("/*") && !t.starts_with("//") {
            if let Some(k) = t.find(|c: char| c == ':' || c == '?') {
                let name = &t[..k];
                if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    out.insert(name.to_string());
                }
            }
        }
        depth += t.matches(['{', '(']).count() as i32 - t.matches(['}', ')']).count() as i32;
    }
    out
}

/// The first column (backticked names) of the README table under the heading line `after`.
fn readme_table(readme: &str, after: &str) -> BTreeSet<String> {
    let at = readme.find(after).unwrap_or_else(|| panic!("README has no {after:?}"));
    readme[at..]
        .lines()
        .skip_while(|l| !l.trim_start().starts_with('|'))
        .take_while(|l| l.trim_start().starts_with('|'))
        .skip(2)
        .flat_map(|l| {
            let first = l.trim_start().trim_start_matches('|').split('|').next().unwrap_or("").to_string();
            first.split('`').skip(1).step_by(2).map(String::from).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn readme_options_are_the_wrappers_options() {
    let readme = read("README.md");
    let types = read("pkg-template/src/types.ts");
    let documented = readme_table(&readme, "| option | meaning |");
    // The options store kinds take come from the registry, through the contract.
    let stores = fields(STORES_TS, "WasmStoreOptions");
    let declared = &fields(&types, "OpenOptions") | &stores;
    assert!(declared.len() >= 13, "{declared:?}");
    assert_eq!(documented, declared, "README option table vs OpenOptions in types.ts");
    // What the module takes is what the wrapper takes, less what the wrapper handles itself.
    let module: BTreeSet<String> = &fields(CONTRACT, "WasmOptions") | &stores;
    let wrapper_only: BTreeSet<String> = ["workers", "chunkCacheBytes"].map(String::from).into();
    // What the wrapper adds of its own: its runner of the external decoders.
    let module_only: BTreeSet<String> = ["decoders"].map(String::from).into();
    assert_eq!(&module - &module_only, &declared - &wrapper_only, "WasmOptions (contract) vs OpenOptions");
}

#[test]
fn readme_stats_are_the_arrays_stats() {
    let readme = read("README.md");
    let documented = readme_table(&readme, "| stat | counts |");
    let mut declared = fields(CONTRACT, "WasmStats");
    declared.extend(fields(&read("pkg-template/src/types.ts"), "ArrayStats"));
    assert!(declared.len() >= 10, "{declared:?}");
    assert_eq!(documented, declared, "README stats table vs WasmStats (contract) + ArrayStats (types.ts)");
}

#[test]
fn error_codes_agree_everywhere() {
    let readme = read("README.md");
    let section = &readme[readme.find("### Errors").unwrap()..];
    let section = &section[..section[4..].find("\n#").map_or(section.len(), |k| k + 4)];
    let documented: BTreeSet<String> = section.split('`').skip(1).step_by(2).map(String::from).collect();
    let wrapper = ["Closed", "Internal", "Unknown"];
    for c in ErrorCode::ALL.iter().map(|c| c.as_str()).chain(wrapper) {
        assert!(documented.contains(c), "README's Errors section lacks {c}");
    }
    // …and names no code that does not exist.
    let known: BTreeSet<String> = ErrorCode::ALL.iter().map(|c| c.as_str()).chain(wrapper).map(String::from).collect();
    for d in &documented {
        let code_like = d.chars().next().is_some_and(char::is_uppercase) && d.chars().all(char::is_alphanumeric);
        assert!(
            !code_like || d == "ShardfetchError" || known.contains(d),
            "README's Errors section names {d}, no such code"
        );
    }
    let errors_ts = read("pkg-template/src/errors.ts");
    assert!(errors_ts.contains("export type ErrorCode = CoreErrorCode | \"Closed\" | \"Internal\" | \"Unknown\";"));
}

#[test]
fn first_request_follows_the_shared_table() {
    let table: Value = serde_json::from_str(&read("tests/tables/first-metadata-url.json")).unwrap();
    let cases = table["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    for c in cases {
        let (url, path, want) =
            (c["url"].as_str().unwrap(), c["path"].as_str().unwrap(), c["expect"].as_str().unwrap());
        let (range, reader) = (c["range"].as_str().unwrap_or(""), c["reader"].as_str().unwrap_or(""));
        let (u, r, m) = first_request(url, path);
        assert_eq!((u.as_str(), r.as_str(), m), (want, range, reader), "{url} + {path:?}");
    }
    // Every extension of a kind whose first read is certain has its case: the wrapper's copy of
    // the rule (which the same table pins) cannot miss a kind the registry gains.
    for (extensions, n, _) in shardfetch::core::store::registry::FIRST_READS.iter().filter(|k| k.1 > 0) {
        for e in *extensions {
            let found = cases.iter().any(|c| {
                let u = c["url"].as_str().unwrap().split('?').next().unwrap().to_ascii_lowercase();
                u.ends_with(e) && c["range"].as_str() == Some(&format!("bytes=0-{}", n - 1))
            });
            assert!(found, "tests/tables/first-metadata-url.json has no case for a {e} file");
        }
    }
}

#[test]
fn the_field_reader_reads_fields() {
    let ts = "export interface A extends B {\n  /** x: y */\n  a?: number;\n  b: (i: number) => void;\n  c: { d: string };\n}";
    assert_eq!(fields(ts, "A"), ["a", "b", "c"].map(String::from).into());
}

/// The string keys between `from` and the next `until` in `text` that follow `call` (e.g. the
/// `"x"` of `set(&o, "x", …)`).
fn keys_after(text: &str, from: &str, until: &str, call: &str) -> BTreeSet<String> {
    let at = text.find(from).unwrap_or_else(|| panic!("no {from:?}"));
    let body = &text[at..];
    let body = &body[..body.find(until).unwrap_or_else(|| panic!("no {until:?} after {from:?}"))];
    body.split(call).skip(1).filter_map(|s| s.split('"').next().map(String::from)).collect()
}

/// The binding reads and writes the shapes of the contract by their keys, spelled by hand:
/// they are the contract's, every one of them.
#[test]
fn the_binding_spells_the_contracts_keys() {
    let convert = read("src/wasm/convert.rs");
    let array = read("src/wasm/array.rs");
    let group = read("src/wasm/group.rs");
    let options = keys_after(&convert, "pub fn parse_options(", "\n}\n", "get(options, \"");
    // (The store kinds' options are read by the registry's names.)
    let kinds: BTreeSet<String> = registry::OPTIONS.iter().flat_map(|(_, n)| n.iter()).map(|n| n.to_string()).collect();
    assert_eq!(&options | &kinds, &fields(CONTRACT, "WasmOptions") | &fields(STORES_TS, "WasmStoreOptions"), "parse_options vs WasmOptions");
    let retry = keys_after(&convert, "pub fn parse_options(", "\n}\n", "num(\"");
    assert_eq!(retry, fields(CONTRACT, "WasmRetry"), "parse_options' retry vs WasmRetry");
    let stats = keys_after(&array, "pub fn stats(", "o.into()", "set(&o, \"");
    assert_eq!(stats, fields(CONTRACT, "WasmStats"), "WasmArray.stats vs WasmStats");
    let meta = keys_after(&array, "pub fn meta(", "o.into()", "set(&o, \"");
    assert_eq!(meta, fields(CONTRACT, "WasmArrayMeta"), "WasmArray.meta vs WasmArrayMeta");
    let scale = keys_after(&array, "fn scales_of(", "\n}\n", "\"");
    let scale: BTreeSet<String> =
        scale.into_iter().filter(|k| k.chars().all(char::is_alphanumeric) && !k.is_empty()).collect();
    assert_eq!(scale, fields(CONTRACT, "WasmScale"), "scales_of vs WasmScale");
    let group_meta = keys_after(&group, "pub fn meta(", "o.into()", "set(&o, \"");
    assert_eq!(group_meta, fields(CONTRACT, "WasmGroupMeta"), "WasmGroup.meta vs WasmGroupMeta");
}

/// The contract's store kinds are the registry's: their names, and each kind's options
/// declared as it takes them.
#[test]
fn the_contracts_store_kinds_are_the_registrys() {
    let options: BTreeSet<String> = registry::OPTIONS.iter().flat_map(|(_, n)| n.iter()).map(|n| n.to_string()).collect();
    assert_eq!(fields(STORES_TS, "WasmStoreOptions"), options);
    let union = STORES_TS.split("export type WasmStoreKind = never").nth(1).unwrap().split(';').next().unwrap();
    let names: BTreeSet<String> = union.split('|').map(|s| s.trim().trim_matches('"').to_string()).filter(|s| !s.is_empty()).collect();
    assert_eq!(names, registry::NAMES.iter().map(|n| n.to_string()).collect());
}

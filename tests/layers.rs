//! The structure of `src/`, checked: no import cycle between modules, each layer of the core
//! imports only the layers below it, and each layer's module doc says what it may import (and
//! nothing it imports is missing from that list); in the crates beside it (`decoders/*`,
//! `kernels`): no import cycle either, sizes as in `src/`, and no dependency on the core.
//!
//! Modules are files. Module A depends on module B when A's code names a path into B (`use`,
//! an inline `crate::`/`super::`/`self::` path, or a bare path into one of A's child
//! modules), resolved to the longest module prefix and then through re-exports to the file
//! that defines the item. A `mod.rs` re-exporting its own descendants (`pub use`) and `mod`
//! declarations are namespace plumbing, not dependencies; any other `pub use` is one.
#![cfg(not(target_arch = "wasm32"))]
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The core's layers, bottom up; a layer may import the ones before it.
const LAYERS: &[&[&str]] =
    &[&["error", "nd", "json", "zstd", "crc", "urls", "bytes", "external"], &["transport"], &["store"], &["metadata"], &["codec"], &["shard"], &["layout"], &["read"], &["open"]];

/// `src/`, or another tree to check (`SHARDFETCH_LAYERS_SRC`, e.g. an older checkout).
fn src() -> PathBuf {
    match std::env::var_os("SHARDFETCH_LAYERS_SRC") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src"),
    }
}

/// `src/core/codec/gzip.rs` → `["core", "codec", "gzip"]`; `mod.rs` and `lib.rs` name their folder.
fn module_of(path: &Path) -> Vec<String> {
    module_in(&src(), path)
}

/// The module of `path` in the crate whose source folder is `root`.
fn module_in(root: &Path, path: &Path) -> Vec<String> {
    let rel = path.strip_prefix(root).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    match last.as_str() {
        "mod.rs" | "lib.rs" => {}
        f => parts.push(f.trim_end_matches(".rs").to_string()),
    }
    parts
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code without comments, string and char literals (kept: line breaks).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if b[i..].starts_with(b"r#\"") {
            i += 3;
            while i < b.len() && !b[i..].starts_with(b"\"#") {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A char literal ('x', '\n'); lifetimes ('a) are left alone.
            i += if b[i + 1] == b'\\' { 4 } else { 3 };
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Expand `a::{b, c::{d, e}}` into full paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else { return vec![tree.to_string()] };
    let prefix = tree[..open].trim_end_matches("::");
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let (mut depth, mut start, mut items) = (0, 0, Vec::new());
    for (k, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items
        .into_iter()
        .filter(|s| !s.trim().is_empty())
        .flat_map(expand)
        .map(|p| if p == "self" { prefix.to_string() } else { format!("{prefix}::{p}") })
        .collect()
}

/// `a::b as c` → (`a::b`, the name it is known by: `c`).
fn alias(p: &str) -> (String, String) {
    let (path, name) = match p.split_once(" as ") {
        Some((path, name)) => (path.trim(), name.trim()),
        None => (p.trim(), p.trim().rsplit("::").next().unwrap_or("")),
    };
    (path.to_string(), name.to_string())
}

/// The `use` statements of the code: (public, path, name it is known by).
fn uses(code: &str) -> Vec<(bool, String, String)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(k) = rest.find("use ") {
        let before = &rest[..k];
        let word_start = k == 0 || !rest.as_bytes()[k - 1].is_ascii_alphanumeric() && rest.as_bytes()[k - 1] != b'_';
        let line_start = before.rfind('\n').map_or(0, |n| n + 1);
        let head = before[line_start..].trim();
        let end = rest[k..].find(';').map_or(rest.len(), |e| k + e);
        let public = head.starts_with("pub");
        if word_start && (head.is_empty() || head.starts_with('#') || public) {
            for p in expand(&rest[k + 4..end]) {
                let (path, name) = alias(&p);
                out.push((public, path, name));
            }
        }
        rest = &rest[end.min(rest.len())..];
        if rest.starts_with(';') {
            rest = &rest[1..];
        }
    }
    out
}

/// Every path the code names: `use` trees (not `pub use`), inline `crate::`, `super::`,
/// `self::` paths, and inline paths into the module's own children (`child::f()`).
fn paths(code: &str, children: &[String]) -> Vec<String> {
    let mut out: Vec<String> = uses(code).into_iter().filter(|u| !u.0).map(|u| u.1).collect();
    let code = &without_uses(code);
    let roots: Vec<String> =
        ["crate", "super", "self"].iter().map(|r| r.to_string()).chain(children.iter().cloned()).collect();
    for root in &roots {
        let root = format!("{root}::");
        let mut at = 0;
        while let Some(k) = code[at..].find(&root) {
            let k = at + k;
            let before = k.checked_sub(1).map(|j| code.as_bytes()[j]);
            let ok = before.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == b'_' || c == b':'));
            let end =
                code[k..].find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).map_or(code.len(), |e| k + e);
            if ok {
                out.push(code[k..end].trim_end_matches(':').to_string());
            }
            at = end.max(k + 1);
        }
    }
    out
}

/// The code without its `use` statements (public or not).
fn without_uses(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(k) = rest.find("use ") {
        let line_start = rest[..k].rfind('\n').map_or(0, |n| n + 1);
        let head = rest[line_start..k].trim();
        let word_start = k == 0 || !(rest.as_bytes()[k - 1].is_ascii_alphanumeric() || rest.as_bytes()[k - 1] == b'_');
        if word_start && (head.is_empty() || head.starts_with("pub") || head.starts_with('#')) {
            out.push_str(&rest[..k]);
            let end = rest[k..].find(';').map_or(rest.len(), |e| k + e + 1);
            rest = &rest[end..];
        } else {
            out.push_str(&rest[..k + 4]);
            rest = &rest[k + 4..];
        }
    }
    out.push_str(rest);
    out
}

/// The modules of `src/` and what each re-exports (`pub use`): name → path, from that module.
struct Tree {
    modules: BTreeSet<Vec<String>>,
    reexports: BTreeMap<Vec<String>, Vec<(String, String)>>,
}

/// The module a path leads into, from `me`: the longest prefix that is a module — followed
/// through re-exports to the module that defines the item (`crate::core::storage::Store` →
/// `core::storage::store`). A path starting with a child module's name is relative (Rust
/// 2018); other bare paths are extern crates or local names: `None`.
fn resolve(path: &str, me: &[String], tree: &Tree) -> Option<Vec<String>> {
    resolve_at(path, me, tree, 0)
}

fn resolve_at(path: &str, me: &[String], tree: &Tree, depth: usize) -> Option<Vec<String>> {
    let mut parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
    // `self` is the module itself (a mod.rs file is its folder's module).
    let mut base: Vec<String> = me.to_vec();
    match parts.first().copied() {
        Some("crate") => {
            base.clear();
            parts.remove(0);
        }
        Some("super") => {
            while parts.first() == Some(&"super") {
                base.pop();
                parts.remove(0);
            }
        }
        Some("self") => {
            parts.remove(0);
        }
        Some(first) if tree.modules.contains(&[me, &[first.to_string()]].concat()) => {}
        // Extern crates (alloc, core, serde_json, …) and local names.
        _ => return None,
    }
    let mut full = base;
    full.extend(parts.iter().map(|p| p.to_string()));
    let n = (0..=full.len()).rev().find(|&n| tree.modules.contains(&full[..n].to_vec()))?;
    let m = full[..n].to_vec();
    // An item the module re-exports: where it comes from.
    if let (Some(item), true) = (full.get(n), depth < 8) {
        let found = tree.reexports.get(&m).and_then(|r| r.iter().find(|(name, _)| name == item));
        if let Some((_, from)) = found {
            let rest: Vec<&str> = full[n + 1..].iter().map(String::as_str).collect();
            let target = if rest.is_empty() { from.clone() } else { format!("{from}::{}", rest.join("::")) };
            if let Some(t) = resolve_at(&target, &m, tree, depth + 1) {
                return Some(t);
            }
        }
    }
    Some(m)
}

struct Graph {
    /// Module → the modules it depends on.
    deps: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    docs: BTreeMap<Vec<String>, String>,
}

fn graph() -> Graph {
    graph_in(&src())
}

/// The module graph of the crate whose source folder is `root`.
fn graph_in(root: &Path) -> Graph {
    let module_of = |p: &Path| module_in(root, p);
    let mut list = Vec::new();
    files(root, &mut list);
    let modules: BTreeSet<Vec<String>> = list.iter().map(|p| module_of(p)).collect();
    // Test modules may reach anywhere.
    let code = |p: &PathBuf| code_only(std::fs::read_to_string(p).unwrap().split("#[cfg(test)]").next().unwrap());
    let reexports = list
        .iter()
        .map(|p| (module_of(p), uses(&code(p)).into_iter().filter(|u| u.0).map(|u| (u.2, u.1)).collect()))
        .collect();
    let tree = Tree { modules, reexports };
    let mut deps = BTreeMap::new();
    let mut docs = BTreeMap::new();
    for p in &list {
        let me = module_of(p);
        let text = std::fs::read_to_string(p).unwrap();
        let doc: String = text.lines().take_while(|l| l.starts_with("//!")).collect::<Vec<_>>().join("\n");
        docs.insert(me.clone(), doc);
        let code = code(p);
        let children: Vec<String> = tree
            .modules
            .iter()
            .filter(|m| m.len() == me.len() + 1 && m.starts_with(&me))
            .map(|m| m[me.len()].clone())
            .collect();
        let mut set = BTreeSet::new();
        for path in paths(&code, &children) {
            match resolve(&path, &me, &tree) {
                Some(m) if m != me => {
                    set.insert(m);
                }
                _ => {}
            }
        }
        // A re-export of the module's own descendants is namespace plumbing; of anything
        // else, a dependency (a lower layer re-exporting an upper layer's item is caught).
        for (_, path, _) in uses(&code).into_iter().filter(|u| u.0) {
            match resolve(&path, &me, &tree) {
                Some(m) if !m.starts_with(&me) => {
                    set.insert(m);
                }
                _ => {}
            }
        }
        deps.insert(me, set);
    }
    Graph { deps, docs }
}

fn name(m: &[String]) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

/// The import cycles of `g`, each as "a -> b -> a".
fn cycles(g: &Graph) -> Vec<String> {
    // Depth-first search for a back edge.
    fn visit(
        m: &Vec<String>,
        g: &Graph,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
        cycles: &mut Vec<String>,
    ) {
        state.insert(m.clone(), 1);
        stack.push(m.clone());
        for d in g.deps.get(m).into_iter().flatten() {
            match state.get(d).copied().unwrap_or(0) {
                0 => visit(d, g, state, stack, cycles),
                1 => {
                    let from = stack.iter().position(|s| s == d).unwrap();
                    let cycle: Vec<String> = stack[from..].iter().map(|s| name(s)).collect();
                    cycles.push(format!("{} -> {}", cycle.join(" -> "), name(d)));
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(m.clone(), 2);
    }
    let (mut state, mut cycles) = (BTreeMap::new(), Vec::new());
    for m in g.deps.keys() {
        if !state.contains_key(m) {
            visit(m, g, &mut state, &mut Vec::new(), &mut cycles);
        }
    }
    cycles
}

#[test]
fn no_module_depends_on_itself_through_others() {
    let g = graph();
    assert!(g.deps.len() > 30, "{} modules found", g.deps.len());
    let cycles = cycles(&g);
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

/// The crates beside the core (`decoders/*`, `kernels`): the source folder of each.
fn side_crates() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out: Vec<PathBuf> = std::fs::read_dir(root.join("decoders")).unwrap().flatten().map(|e| e.path()).collect();
    out.push(root.join("kernels"));
    out.retain(|p| p.join("src").is_dir() && p.join("Cargo.toml").is_file());
    out.sort();
    out
}

/// The decoder modules' crates and the kernels have no import cycle between their modules either.
#[test]
fn no_module_of_the_side_crates_depends_on_itself_through_others() {
    let crates = side_crates();
    assert!(crates.len() > 15, "{} crates beside the core", crates.len());
    let mut all = Vec::new();
    for c in &crates {
        let g = graph_in(&c.join("src"));
        all.extend(cycles(&g).into_iter().map(|x| format!("{}: {x}", c.display())));
    }
    assert!(all.is_empty(), "import cycles:\n{}", all.join("\n"));
}

/// The crates beside the core sit below it: none depends on the core's crate (the module ABI,
/// the kernels and the TIFF directory reader are what both sides share), and the shared crates
/// (`abi`, `kernels`, `tiff-ifd`) depend on no decoder module's crate.
#[test]
fn the_side_crates_depend_only_downward() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).canonicalize().unwrap();
    let shared = ["abi", "kernels", "tiff-ifd"];
    let mut bad = Vec::new();
    let mut seen = 0;
    for c in side_crates() {
        let c = c.canonicalize().unwrap();
        let toml = std::fs::read_to_string(c.join("Cargo.toml")).unwrap();
        let me = c.file_name().unwrap().to_string_lossy().into_owned();
        for line in toml.lines() {
            let Some(at) = line.find("path = \"") else { continue };
            let rel = &line[at + 8..];
            let dep = c.join(&rel[..rel.find('"').unwrap()]).canonicalize().unwrap();
            seen += 1;
            let name = dep.file_name().unwrap().to_string_lossy().into_owned();
            if dep == root {
                bad.push(format!("{me} depends on the core's crate"));
            } else if shared.contains(&me.as_str()) && !shared.contains(&name.as_str()) {
                bad.push(format!("the shared crate {me} depends on {name}"));
            }
        }
    }
    assert!(seen > 15, "{seen} path dependencies read");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn layer_of(m: &[String]) -> Option<usize> {
    if m.first().map(String::as_str) != Some("core") {
        return None;
    }
    let top = m.get(1)?;
    LAYERS.iter().position(|l| l.contains(&top.as_str()))
}

#[test]
fn each_layer_imports_only_those_below_it() {
    let g = graph();
    let mut wrong = Vec::new();
    for (m, deps) in &g.deps {
        let from = layer_of(m);
        for d in deps {
            let to = layer_of(d);
            match (from, to) {
                // The core never reaches out of itself (the binding, the contract).
                (Some(_), None) if d.first().map(String::as_str) != Some("core") && !d.is_empty() => {
                    wrong.push(format!("{} -> {}", name(m), name(d)))
                }
                (Some(a), Some(b)) if b > a => wrong.push(format!("{} -> {} (upward)", name(m), name(d))),
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layering:\n{}", wrong.join("\n"));
    // Every core module belongs to a layer.
    let stray: Vec<String> =
        g.deps.keys().filter(|m| m.len() >= 2 && m[0] == "core" && layer_of(m).is_none()).map(|m| name(m)).collect();
    assert!(stray.is_empty(), "modules outside every layer: {stray:?}");
}

#[test]
fn each_layer_says_what_it_may_import() {
    let g = graph();
    for layer in LAYERS.iter().flat_map(|l| l.iter()) {
        let m = vec!["core".to_string(), layer.to_string()];
        let doc = g.docs.get(&m).unwrap_or_else(|| panic!("no module core::{layer}"));
        let line = doc
            .lines()
            .skip_while(|l| !l.contains("May import:"))
            .take_while(|l| l.trim() != "//!")
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            !line.is_empty() || ["error", "nd"].contains(layer),
            "core::{layer}: its doc does not say what it may import"
        );
        if ["error", "nd", "open"].contains(layer) {
            continue;
        }
        let allowed: BTreeSet<&str> = line.split('`').skip(1).step_by(2).collect();
        let used: BTreeSet<String> = g
            .deps
            .iter()
            .filter(|(k, _)| k.starts_with(&m))
            .flat_map(|(_, d)| d.iter())
            .filter(|d| d.len() >= 2 && d[0] == "core" && d[1] != *layer)
            .map(|d| d[1].clone())
            .collect();
        for u in &used {
            assert!(
                allowed.contains(u.as_str()),
                "core::{layer} imports core::{u}, which its doc does not list: {line}"
            );
        }
    }
}

#[test]
fn the_checker_sees_paths() {
    assert_eq!(expand("super::{a, b::{c, d}, e as f}"), ["super::a", "super::b::c", "super::b::d", "super::e as f"]);
    let code = code_only(
        "use crate::x::Y; // crate::z\npub use self::w;\nfn f() { super::q::r(); kid::g(); other::h(); let s = \"crate::no\"; }",
    );
    assert_eq!(paths(&code, &["kid".to_string()]), ["crate::x::Y", "super::q::r", "kid::g"]);
    assert_eq!(uses(&code)[1], (true, "self::w".to_string(), "w".to_string()));
}

/// The blind spots the checker once had, each shown to be seen now: a path through a parent's
/// re-export leads to the defining file; a bare path into a child module is relative; a
/// `pub use` of another layer's item is a dependency.
#[test]
fn the_checker_resolves_reexports_and_relative_paths() {
    let m = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    let tree = Tree {
        modules: ["", "core", "core::a", "core::a::inner", "core::b"]
            .iter()
            .map(|s| if s.is_empty() { vec![] } else { m(s) })
            .collect(),
        reexports: [(m("core::a"), vec![("Thing".to_string(), "inner::Thing".to_string())])].into_iter().collect(),
    };
    assert_eq!(resolve("crate::core::a::Thing", &m("core::b"), &tree), Some(m("core::a::inner")));
    assert_eq!(resolve("super::a::Thing::new", &m("core::b"), &tree), Some(m("core::a::inner")));
    assert_eq!(resolve("crate::core::a::Other", &m("core::b"), &tree), Some(m("core::a")));
    assert_eq!(resolve("inner::f", &m("core::a"), &tree), Some(m("core::a::inner")));
    assert_eq!(resolve("serde_json::Value", &m("core::a"), &tree), None);
}

/// The store kinds' folders under `core::store` (the registry's kinds, and the consolidated
/// overlay): each one alone knows its internals.
fn kind_folders() -> Vec<String> {
    let dir = src().join("core/store");
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// The kind folder a module is in, if any.
fn kind_of(m: &[String], kinds: &[String]) -> Option<String> {
    match m {
        [core, store, kind, ..] if core == "core" && store == "store" && kinds.contains(kind) => Some(kind.clone()),
        _ => None,
    }
}

/// A store kind reads its container through the store below it (`transport::Objects`), never
/// through another kind's internals; transport knows no kind; above the stores, only the
/// store layer's shared modules (the façade, the registry, the pipeline, the overlay) are named.
#[test]
fn store_kinds_are_apart() {
    let g = graph();
    let kinds = kind_folders();
    assert!(kinds.len() >= 4 && kinds.contains(&"zip".to_string()), "{kinds:?}");
    let mut bad = Vec::new();
    // (Test modules may reach anywhere.)
    for (m, deps) in g.deps.iter().filter(|(m, _)| !m.iter().any(|p| p == "tests")) {
        let mine = kind_of(m, &kinds);
        for d in deps {
            let Some(theirs) = kind_of(d, &kinds) else { continue };
            let in_store = m.len() >= 2 && m[0] == "core" && m[1] == "store";
            let shared_overlay = theirs == "consolidated" && d.len() == 3;
            match (&mine, in_store) {
                // A kind's own modules, and the overlay's public face.
                (Some(k), _) if *k == theirs => {}
                (Some(k), _) => bad.push(format!("kind {k}: {} reaches into {}", name(m), name(d))),
                // The registry lists each kind by its type, and nothing else in the store layer
                // names one.
                (None, true) if m.len() == 3 && m[2] == "registry" && d.len() == 3 => {}
                (None, _) if shared_overlay => {}
                (None, _) => bad.push(format!("{} names the store kind {theirs} ({})", name(m), name(d))),
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The registry's kind names, as they appear in the registry line of each kind (`NAME`).
fn kind_names() -> Vec<String> {
    let mut names = Vec::new();
    for k in kind_folders() {
        let text = std::fs::read_to_string(src().join(format!("core/store/{k}/mod.rs"))).unwrap();
        if let Some(at) = text.find("const NAME: &'static str = \"") {
            let rest = &text[at + 28..];
            names.push(rest[..rest.find('"').unwrap()].to_string());
        }
    }
    names
}

/// Nothing above the stores spells a store kind's name: the open path, the binding and the
/// TypeScript wrapper take kinds from the registry (the contract's `WasmStoreKind`).
#[test]
fn nothing_above_the_stores_spells_a_kind() {
    let names = kind_names();
    assert!(names.len() >= 4 && names.contains(&"zip".to_string()), "{names:?}");
    let mut files_seen = 0;
    let mut bad = Vec::new();
    let mut check = |path: &Path, text: &str| {
        files_seen += 1;
        for n in &names {
            for quoted in [format!("\"{n}\""), format!("'{n}'")] {
                if text.contains(&quoted) {
                    bad.push(format!("{}: {quoted}", path.display()));
                }
            }
        }
    };
    let mut list = Vec::new();
    files(&src(), &mut list);
    for p in &list {
        let m = module_of(p);
        let above = match m.as_slice() {
            [core, top, ..] if core == "core" => !["transport", "store", "error", "nd", "json", "zstd", "crc", "urls", "bytes", "external"].contains(&top.as_str()),
            [wasm, ..] if wasm == "wasm" => true,
            _ => false,
        };
        if above {
            // Literals kept, comments dropped: `code_only` drops literals, so strip comments alone.
            let text = std::fs::read_to_string(p).unwrap();
            let code: String = text.split("#[cfg(test)]").next().unwrap().lines().map(|l| l.split("//").next().unwrap()).collect::<Vec<_>>().join("\n");
            check(p, &code);
        }
    }
    let ts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("pkg-template/src");
    for e in std::fs::read_dir(&ts).unwrap().flatten() {
        let p = e.path();
        // (`meta-url.ts` is the wrapper's copy of the core's first-request rule, needed before the
        // module loads: pinned to the registry by `tests/tables/first-metadata-url.json`, which
        // `tests/contract.rs` checks has a case for every extension of every kind it covers.)
        if p.extension().is_some_and(|x| x == "ts") && !p.ends_with("meta-url.ts") {
            let text = std::fs::read_to_string(&p).unwrap();
            check(&p, &text);
        }
    }
    assert!(files_seen > 40, "looked at {files_seen} files");
    assert!(bad.is_empty(), "store kinds spelled above the stores:\n{}", bad.join("\n"));
}

/// Lines of `text` before its tests (`#[cfg(test)]` at the start of a line).
fn before_tests(text: &str) -> &str {
    match text.find("\n#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// Files that do one job: none over 800 lines, no function over 120 (tests apart) — in `src/`,
/// the decoder modules' crates (`decoders/*/src`) and `kernels/src`.
#[test]
fn files_and_functions_are_small() {
    let mut list = Vec::new();
    files(&src(), &mut list);
    assert!(list.len() > 100);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let before = list.len();
    for e in std::fs::read_dir(root.join("decoders")).unwrap().flatten() {
        if e.path().join("src").is_dir() {
            files(&e.path().join("src"), &mut list);
        }
    }
    files(&root.join("kernels/src"), &mut list);
    assert!(list.len() > before + 30, "{} files of decoders/ and kernels/", list.len() - before);
    let mut bad = Vec::new();
    for p in &list {
        let text = std::fs::read_to_string(p).unwrap();
        let code = before_tests(&text);
        let n = code.lines().count();
        if n > 800 {
            bad.push(format!("{}: {n} lines", p.display()));
        }
        for (name, lines) in functions(&code_only(code)) {
            if lines > 120 {
                bad.push(format!("{}: fn {name} is {lines} lines", p.display()));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Every source file is its crate's own: none compiled into another by `#[path]` (a file shared
/// that way is invisible to Cargo and to these checks; a crate both sides depend on is not).
#[test]
fn no_file_is_compiled_into_another_crate() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut list = Vec::new();
    files(&src(), &mut list);
    for e in std::fs::read_dir(root.join("decoders")).unwrap().flatten() {
        if e.path().join("src").is_dir() {
            files(&e.path().join("src"), &mut list);
        }
    }
    files(&root.join("kernels/src"), &mut list);
    assert!(list.len() > 150, "looked at {} files", list.len());
    let bad: Vec<String> = list
        .iter()
        .filter(|p| code_only(&std::fs::read_to_string(p).unwrap()).contains("#[path"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(bad.is_empty(), "files including another by #[path]:\n{}", bad.join("\n"));
}

/// Each function of `code` (comments and literals removed) and its length in lines, from its
/// `fn` to its closing brace.
fn functions(code: &str) -> Vec<(String, usize)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(k) = code[at..].find("fn ") {
        let k = at + k;
        at = k + 3;
        if k > 0 && (b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_') {
            continue;
        }
        let name: String = code[k + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        // The body: the first `{` before any `;` (a declaration without a body has none).
        let Some(open) = code[k..].find(['{', ';']).map(|o| k + o).filter(|&o| b[o] == b'{') else { continue };
        let mut depth = 0;
        let mut end = open;
        for (i, &c) in b[open..].iter().enumerate() {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push((name, code[k..=end].lines().count()));
    }
    out
}

#[test]
fn the_size_checks_see_functions() {
    let f = functions("fn a() {\n  if x { y }\n}\nfn b();\npub fn c(x: u8) -> u8 {\n x\n}\n");
    assert_eq!(f, [("a".to_string(), 3), ("c".to_string(), 3)]);
}

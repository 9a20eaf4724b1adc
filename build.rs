//! Lists the test fixtures for `tests/web.rs`, which embeds them when no fixture server is given
//! (so that `wasm-pack test --headless --chrome` runs with no environment). Nothing else uses
//! the list; the library does not depend on it.
use std::fmt::Write as _;
use std::path::Path;

fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            walk(&p, root, out);
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    println!("cargo:rerun-if-changed=tests/fixtures");
    println!("cargo:rerun-if-changed=build.rs");
    let mut files = Vec::new();
    for sub in ["data", "expected"] {
        println!("cargo:rerun-if-changed=tests/fixtures/{sub}");
        walk(&root.join(sub), &root, &mut files);
    }
    if let Ok(entries) = std::fs::read_dir(&root) {
        let mut json: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("manifest") && n.ends_with(".json"))
            .collect();
        json.sort();
        files.extend(json);
    }
    let mut src = String::from("/// Every fixture file: (path under tests/fixtures, bytes).\npub static FIXTURES: &[(&str, &[u8])] = &[\n");
    for f in &files {
        let abs = root.join(f);
        writeln!(src, "    ({f:?}, include_bytes!({:?})),", abs.to_string_lossy()).unwrap();
    }
    src.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("fixtures_embedded.rs");
    std::fs::write(out, src).unwrap();
}

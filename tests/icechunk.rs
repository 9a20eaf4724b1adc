//! Icechunk repositories (issue 22), natively, over the fixtures `generate_icechunk.py` wrote:
//! the requests each read costs, virtual chunks, groups, a rebuilt array, and every hostile
//! repository a typed error. (Every case of `manifest-icechunk.json` is also read by the shared
//! suites: `tests/native.rs`, `tests/web.rs`, Node and the browser.)
#![cfg(not(target_arch = "wasm32"))]
mod common;

use common::{check_case, parse_manifest};
use futures_executor::block_on;
use serde_json::Value;
use shardfetch::core::open::{open, reopen, OpenOptions, Opened};
use shardfetch::core::read::plan::Sel;
use shardfetch::core::read::{read_chunk, read_region, Array};
use shardfetch::core::transport::memory::ObjectServer;
use shardfetch::core::{ErrorCode, Result};
use std::path::PathBuf;

const BASE: &str = "mem://fixtures";
/// Where the virtual chunks' bucket is served from, as a browser would reach it.
const BUCKET: &str = "https://fixture-bucket.s3.amazonaws.com/";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn manifest() -> Value {
    serde_json::from_slice(&std::fs::read(root().join("manifest-icechunk.json")).unwrap()).unwrap()
}

/// A fixture's path under `tests/fixtures` from its URL: under `BASE`, or in the bucket.
fn fixture(url: &str) -> Option<String> {
    match (url.strip_prefix(BASE), url.strip_prefix(BUCKET)) {
        (Some(r), _) => Some(r.trim_start_matches('/').to_string()),
        (_, Some(r)) => Some(format!("data/icechunk/external/{r}")),
        _ => None,
    }
}

/// The fixtures as a static server (and the bucket of the virtual chunks).
fn server() -> ObjectServer {
    ObjectServer::with_source(|url| std::fs::read(root().join(fixture(url)?)).ok())
}

/// The requests since the last take, each as its path under `data/icechunk/` (a URL outside
/// the fixtures as it is) and its range.
fn take(c: &ObjectServer) -> Vec<String> {
    let log = c.log().into_iter().map(|l| {
        let path = fixture(&l.url).map_or(l.url, |p| p.trim_start_matches("data/icechunk/").to_string());
        format!("{path}{}", l.range.map(|r| format!(" {r}")).unwrap_or_default())
    });
    let log = log.collect();
    c.reset();
    log
}

/// Open options of a repository's node at `path`, at `version` (`("tag", "v1")`; none: `main`).
fn options(path: &str, version: Option<(&str, &str)>) -> OpenOptions {
    let store_settings = version.map(|(k, v)| (k.to_string(), v.to_string())).into_iter().collect();
    OpenOptions { store: Some("icechunk".into()), path: path.into(), store_settings, ..OpenOptions::default() }
}

fn array(c: &ObjectServer, url: &str, o: OpenOptions) -> Result<Array> {
    match block_on(open(c, url, o))? {
        Opened::Array(a) => Ok(*a),
        Opened::Group(_) => panic!("{url}: a group"),
    }
}

fn repo(name: &str) -> String {
    format!("{BASE}/data/icechunk/{name}")
}

fn is_file(entry: &str, dir: &str) -> bool {
    entry.starts_with(&format!("v2.icechunk/{dir}/")) && !entry.contains(' ')
}

#[test]
fn the_repo_file_the_snapshot_one_manifest_then_chunks() {
    let c = server();
    let a = array(&c, &repo("v2.icechunk"), options("raw", None)).unwrap();
    let log = take(&c);
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0], "v2.icechunk/repo");
    assert!(is_file(&log[1], "snapshots"), "{log:?}");
    // The first chunk: its manifest, then the chunk file (whole: one chunk per file).
    block_on(read_chunk(&a, &c, &[0, 0])).unwrap();
    let log = take(&c);
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(is_file(&log[0], "manifests") && log[1].starts_with("v2.icechunk/chunks/"), "{log:?}");
    // Every other chunk: its own file only; the missing chunk (2, 3): no request at all.
    block_on(read_chunk(&a, &c, &[1, 1])).unwrap();
    assert_eq!(take(&c).len(), 1);
    block_on(read_chunk(&a, &c, &[2, 3])).unwrap();
    assert_eq!(take(&c), Vec::<String>::new());
}

#[test]
fn a_shards_chunks_wanted_together_are_one_request() {
    let c = server();
    let a = array(&c, &repo("v2.icechunk"), options("sharded", Some(("branch", "main")))).unwrap();
    take(&c);
    // Shard (0, 0) holds 4x3 inner chunks of 8x8: its index (a small shard comes whole with
    // it), then at most one merged range of its chunk file.
    let sel = [Sel::Range(0, 32), Sel::Range(0, 24)];
    block_on(read_region(&a, &c, &sel)).unwrap();
    let log = take(&c);
    assert!(is_file(&log[0], "manifests"), "{log:?}");
    assert!(log[1..].iter().all(|l| l.starts_with("v2.icechunk/chunks/") && l.contains("bytes=")), "{log:?}");
    assert!(log.len() <= 3, "manifest, shard index, one merged range: {log:?}");
}

#[test]
fn inline_chunks_need_no_request() {
    let c = server();
    let a = array(&c, &repo("v2.icechunk"), options("small", None)).unwrap();
    block_on(read_chunk(&a, &c, &[0])).unwrap();
    take(&c);
    block_on(read_region(&a, &c, &[Sel::All])).unwrap();
    assert_eq!(take(&c), Vec::<String>::new(), "inline chunks are in the manifest already read");
}

#[test]
fn spec_v1_refs_sit_at_fixed_paths() {
    let c = server();
    array(&c, &repo("v1.icechunk"), options("raw", Some(("tag", "v1")))).unwrap();
    let log = take(&c);
    assert_eq!(
        log[..3],
        ["v1.icechunk/repo", "v1.icechunk/refs/tag.v1/ref.json", "v1.icechunk/refs/tag.v1/ref.json.deleted"]
    );
    assert!(log[3].starts_with("v1.icechunk/snapshots/") && log.len() == 4, "{log:?}");
    let e = array(&c, &repo("v1.icechunk"), options("raw", Some(("branch", "nope")))).err().unwrap();
    assert_eq!(e.code, ErrorCode::NotFound);
    assert!(e.message.contains("spec v1") && e.message.contains("nope"), "{}", e.message);
}

#[test]
fn unknown_refs_and_nodes_are_not_found() {
    let c = server();
    let e = array(&c, &repo("v2.icechunk"), options("raw", Some(("tag", "v9")))).err().unwrap();
    assert_eq!(e.code, ErrorCode::NotFound, "{}", e.message);
    let e = array(&c, &repo("v2.icechunk"), options("nope", None)).err().unwrap();
    assert_eq!(e.code, ErrorCode::NotFound, "{}", e.message);
    // Not a repository at all.
    let e = array(&c, &repo("nothing.icechunk"), options("raw", None)).err().unwrap();
    assert_eq!(e.code, ErrorCode::NotFound, "{}", e.message);
}

#[test]
fn pipeline_urls_open_branches_tags_and_snapshots() {
    let m = manifest();
    let first = m["snapshots"]["v2"]["first"].as_str().unwrap();
    let c = server();
    for url in [
        format!("{}|icechunk:raw", repo("v2.icechunk")),
        format!("{}|icechunk:@branch.main/raw|zarr3:", repo("v2.icechunk")),
        format!("{}|icechunk:@tag.v1/raw", repo("v2.icechunk")),
        format!("{}|icechunk:@{first}/raw", repo("v2.icechunk")),
    ] {
        let a = array(&c, &url, OpenOptions::default()).unwrap();
        assert_eq!(a.metadata().shape, [40, 50], "{url}");
        let container = a.container().unwrap();
        assert_eq!(container.kind, "icechunk");
        if url.contains("@tag") || url.contains(first) {
            assert_eq!((container.version.as_str(), container.comment.as_str()), (first, "first"));
        }
    }
}

#[test]
fn groups_list_their_children_from_the_snapshot() {
    let c = server();
    let Opened::Group(g) = block_on(open(&c, &repo("v2.icechunk"), options("", None))).unwrap() else { panic!() };
    let mut names: Vec<_> = g.children.iter().map(|(n, a)| format!("{n}:{a}")).collect();
    names.sort();
    assert_eq!(names, ["group:false", "raw:true", "sharded:true", "small:true"]);
    take(&c);
    // A child through the group's layers: no request (the snapshot is read).
    let child = OpenOptions { stack: g.stack.clone(), ..options("group/sub/f8", None) };
    array(&c, &repo("v2.icechunk"), child).unwrap();
    assert_eq!(take(&c), Vec::<String>::new());
}

#[test]
fn a_rebuilt_array_reads_the_same_snapshot() {
    let c = server();
    let a = array(&c, &repo("v2.icechunk"), options("raw", Some(("tag", "v1")))).unwrap();
    let state = a.state();
    let first = manifest()["snapshots"]["v2"]["first"].as_str().unwrap().to_string();
    assert!(state.contains(&first), "{state}");
    let b = reopen(&state, OpenOptions::default()).unwrap();
    take(&c);
    let x = block_on(read_chunk(&a, &c, &[0, 0])).unwrap();
    let y = block_on(read_chunk(&b, &c, &[0, 0])).unwrap();
    assert_eq!(x.bytes, y.bytes);
    assert!(take(&c).iter().all(|l| !l.ends_with("/repo")), "a rebuilt array does not read the branch again");
}

#[test]
fn virtual_chunks_in_a_container_read_others_are_refused() {
    let m = manifest();
    let v = &m["virtual"];
    let c = server();
    let mut all: Vec<Value> = v["cases"].as_array().unwrap().clone();
    // Spec v1: the container is declared in config.yaml.
    all.push(m["virtual_v1"].clone());
    for case in &all {
        let (cases, _) =
            parse_manifest(serde_json::to_string(&serde_json::json!({ "cases": [case] })).unwrap().as_bytes());
        block_on(check_case(&c, BASE, &cases[0])).unwrap();
    }
    assert!(take(&c).iter().any(|l| l.starts_with("external/virtual.bin bytes=")));
    let a = array(&c, &repo("virtual.icechunk"), options("refused", None)).unwrap();
    let e = block_on(read_chunk(&a, &c, &[0, 0])).unwrap_err();
    assert_eq!(e.code, ErrorCode::UnsupportedFormat);
    assert!(
        e.message.contains("s3://other-bucket/virtual.bin") && e.message.contains("s3://fixture-bucket/"),
        "{}",
        e.message
    );
    assert!(take(&c).iter().all(|l| !l.contains("other-bucket")));
}

#[test]
fn hostile_repositories_are_typed_errors() {
    let m = manifest();
    for h in m["hostile"].as_array().unwrap() {
        let name = h["name"].as_str().unwrap();
        let url = format!("{BASE}/data/{}", h["path"].as_str().unwrap());
        let c = server();
        let got = array(&c, &url, options("a", None))
            .and_then(|a| block_on(read_region(&a, &c, &[Sel::All, Sel::All])).map(|_| ()));
        match h["code"].as_str() {
            None => assert!(got.is_ok(), "{name}: {:?}", got.err()),
            Some(code) => {
                let e = got.err().unwrap_or_else(|| panic!("{name}: read"));
                assert_eq!(e.code.as_str(), code, "{name}: {}", e.message);
                assert!(!take(&c).iter().any(|l| l.contains("bytes=0-1099511627775")), "{name}: a terabyte asked for");
            }
        }
    }
}

#[test]
fn random_corruption_of_every_file_is_a_typed_error() {
    // Every icechunk file of the small repository, a byte flipped at 64 places each (after the
    // header: inside the zstd frame, so the flatbuffer is damaged or the frame refused).
    let dir = root().join("data/icechunk/hostile/snapshot_cycle.icechunk");
    let mut files = Vec::new();
    for sub in ["repo", "snapshots", "manifests"] {
        let p = dir.join(sub);
        if p.is_file() {
            files.push(p);
        } else {
            files.extend(std::fs::read_dir(p).unwrap().map(|e| e.unwrap().path()));
        }
    }
    for f in files {
        let orig = std::fs::read(&f).unwrap();
        let rel = f.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
        for k in 0..64 {
            let mut b = orig.clone();
            let at = 39 + (k * 7919) % (b.len() - 39);
            b[at] ^= 1 << (k % 8);
            let c = server();
            c.put(&format!("{BASE}/{rel}"), b);
            let url = format!("{BASE}/data/icechunk/hostile/snapshot_cycle.icechunk");
            let got = match block_on(open(&c, &url, options("a", None))) {
                Ok(Opened::Array(a)) => block_on(read_region(&a, &c, &[Sel::All, Sel::All])).map(|_| ()),
                Ok(Opened::Group(_)) => Ok(()),
                Err(e) => Err(e),
            };
            // Either read (a flip the format does not notice) or a typed error; never a panic.
            if let Err(e) = got {
                assert!(!e.message.is_empty());
            }
        }
    }
}

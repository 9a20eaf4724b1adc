use super::build::parse;
use super::index::{text, Index, BASE64, INLINE, WHOLE};
use super::{join_url, References};
use crate::core::error::{Error, ErrorCode, Result};
use crate::core::store::kind::{Kind, Mounting, ResolveUrl};
use crate::core::store::{Layer, Stack, Store};
use crate::core::transport::memory::ObjectServer;
use crate::core::transport::{ByteRange, Config, Transport};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use futures_executor::block_on;

const FILE: &str = "https://h/d/refs.json";

/// Objects in memory; requests overlap as over a network.
fn server(files: &[(&str, &[u8])]) -> ObjectServer {
let s = ObjectServer::new();
s.yields.set(1);
for (url, body) in files {
    s.put(url, body.to_vec());
}
s
}

fn sent(s: &ObjectServer) -> Vec<(String, Option<String>)> {
s.log().into_iter().map(|l| (l.url, l.range)).collect()
}

fn detect(store: &Store, c: &ObjectServer, url: &str, forced: bool) -> Result<Option<References>> {
block_on(References::detect(store, c, url, &Mounting { forced, decoders: crate::core::external::linked(), ..Mounting::default() }))
}

fn index(text: &str) -> Result<Index> {
    index_with(text, None, 16 << 20)
}

fn index_with(text: &str, resolve: Option<&dyn ResolveUrl>, limit: u64) -> Result<Index> {
    Ok(parse(text.as_bytes(), FILE, resolve, limit, true)?.unwrap())
}

/// What a key holds, as text: `url@offset+len`, `url` (whole), `inline:…`, `base64:…`.
fn show(i: &Index, key: &str) -> Option<String> {
    let r = i.get(key)?;
    let url = text(&i.pool, r.url.into(), r.url_len.into());
    Some(match r.url {
        INLINE => format!("inline:{}", text(&i.pool, r.offset, r.len)),
        BASE64 => format!("base64:{}", text(&i.pool, r.offset, r.len)),
        _ if r.len == WHOLE => url.to_string(),
        _ => format!("{url}@{}+{}", r.offset, r.len),
    })
}

fn code(r: Result<Index>) -> ErrorCode {
    r.err().map(|e| e.code).expect("an error")
}

#[test]
fn version_0_is_a_plain_map() {
    let i = index(r#"{".zgroup": "{}", "a/0": ["x.h5", 10, 5], "a/1": ["s3://b/k.nc"], "a/2": "base64:AAEC", "a/.zarray": "{\"x\":1}"}"#)
        .unwrap();
    assert_eq!(i.len(), 5);
    assert_eq!(show(&i, "a/0").unwrap(), "https://h/d/x.h5@10+5");
    assert_eq!(show(&i, "a/1").unwrap(), "https://b.s3.amazonaws.com/k.nc");
    assert_eq!(show(&i, "a/2").unwrap(), "base64:AAEC");
    assert_eq!(show(&i, "a/.zarray").unwrap(), "inline:{\"x\":1}");
    assert!(i.get("a/3").is_none() && i.get("").is_none());
}

#[test]
fn version_1_templates_and_gen() {
    // The fixture refs_gen.json, and a template naming another.
    let text = r#"{"version": 1, "templates": {"u": "{{dir}}/grid_u16.raw", "dir": "gs://bk/p"},
      "refs": {"grid/0.0": ["{{u}}", 0, 160], "grid/2.1": "later gen entries win"},
      "gen": [{"key": "grid/{{i}}.{{j}}", "url": "{{u}}", "offset": "{{(i * 3 + j) * 160}}", "length": "160",
               "dimensions": {"i": {"start": 0, "stop": 3}, "j": [1, 2]}},
              {"key": "grid/{{ i }}.0", "url": "{{u}}", "offset": "{{i * 3 * 160}}", "length": 160,
               "dimensions": {"i": {"start": 1, "stop": 3, "step": 1}}},
              {"key": "v/{{name}}/{{t}}", "url": "f{{t}}.nc", "dimensions": {"name": ["tas", "pr"], "t": {"start": 4, "stop": 0, "step": -2}}}]}"#;
    let i = index(text).unwrap();
    let u = "https://storage.googleapis.com/bk/p/grid_u16.raw";
    assert_eq!(i.len(), 9 + 4);
    for (key, at) in
        [("0.0", 0), ("0.1", 1), ("0.2", 2), ("1.0", 3), ("1.1", 4), ("1.2", 5), ("2.0", 6), ("2.1", 7), ("2.2", 8)]
    {
        assert_eq!(show(&i, &format!("grid/{key}")).unwrap(), format!("{u}@{}+160", at * 160), "{key}");
    }
    assert_eq!(show(&i, "v/pr/2").unwrap(), "https://h/d/f2.nc");
    assert_eq!(show(&i, "v/tas/4").unwrap(), "https://h/d/f4.nc");
    assert!(i.get("v/tas/0").is_none(), "stop is excluded");
    // A target once per run of keys naming it: `{{u}}` in refs, its text in gen, then
    // f4, f2, f4, f2.
    let mut urls: Vec<u32> = i.refs.iter().filter(|r| r.url < BASE64).map(|r| r.url).collect();
    urls.sort();
    urls.dedup();
    assert_eq!(urls.len(), 6);
}

#[test]
fn expressions() {
    let value = |expr: &str| -> core::result::Result<String, Error> {
        let text = format!(
            r#"{{"version": 1, "gen": [{{"key": "k", "url": "{{{{{expr}}}}}", "dimensions": {{"i": [7], "j": [-3]}}}}]}}"#
        );
        let i = index(&text)?;
        Ok(show(&i, "k").unwrap().trim_start_matches("https://h/d/").to_string())
    };
    assert_eq!(value("1 + 2 * 3").unwrap(), "7");
    assert_eq!(value("(1 + 2) * 3").unwrap(), "9");
    assert_eq!(value("i // 2").unwrap(), "3");
    assert_eq!(value("-i // 2").unwrap(), "-4", "floor division rounds down");
    assert_eq!(value("i % -3").unwrap(), "-2", "modulo takes the divisor's sign");
    assert_eq!(value("j % 5").unwrap(), "2");
    assert_eq!(value("- - i").unwrap(), "7");
    assert_eq!(value("+i - 10 - 2").unwrap(), "-5", "left to right");
    assert_eq!(value("i*i*i % 100").unwrap(), "43");
    assert_eq!(value("((((i))))").unwrap(), "7");
    assert_eq!(value("i * 0 + 0 * j").unwrap(), "0");
    assert_eq!(value("-9223372036854775807 - 1").unwrap(), "-9223372036854775808");
    assert_eq!(value("2 * (3 + 4) % 5 - j // 2").unwrap(), "6", "(14 % 5) - (-3 // 2) = 4 + 2");
    for bad in [
        "i / 2",
        "i ** 2",
        "i | string",
        "9223372036854775807 + 1",
        "-9223372036854775807 - 2",
        "99999999999999999999",
        "i // 0",
        "i % 0",
        "k",
        "",
        "(i",
        "i)",
        "'a'",
        "i.j",
        "u ~ i",
    ] {
        let e = value(bad).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidMetadata, "{bad}: {e:?}");
        assert!(e.message.contains(FILE), "{}", e.message);
    }
    let deep = format!("{}i{}", "(".repeat(100), ")".repeat(100));
    assert_eq!(value(&deep).unwrap_err().code, ErrorCode::InvalidMetadata);
    // A template's text is text: no arithmetic on it.
    let text = r#"{"version": 1, "templates": {"a": "x"}, "refs": {"k": ["{{a + 1}}"]}}"#;
    assert_eq!(code(index(text)), ErrorCode::InvalidMetadata);
}

#[test]
fn urls_resolve_against_the_reference_file() {
    let b = "https://h/a/b/refs.json?sig=1";
    assert_eq!(join_url(b, "x.h5"), "https://h/a/b/x.h5");
    // Dot segments are fetch's to resolve (tests/js/containers.test.mjs: the server sees them resolved).
    assert_eq!(join_url(b, "../x.h5?t=1"), "https://h/a/b/../x.h5?t=1");
    assert_eq!(join_url(b, "/root/x.h5"), "https://h/root/x.h5");
    assert_eq!(join_url(b, "//cdn/x.h5"), "https://cdn/x.h5");
    assert_eq!(join_url(b, "s3://bucket/x.h5"), "s3://bucket/x.h5");
    assert_eq!(join_url(b, "sub/"), "https://h/a/b/sub/");
    assert_eq!(join_url("https://h", "x"), "https://h/x");
    // The caller's resolver sees relative targets resolved, s3:// as written; what it
    // returns is then mapped.
    #[derive(Debug)]
    struct Mine;
    impl ResolveUrl for Mine {
        fn resolve(&self, url: &str) -> Result<String> {
            match url.strip_prefix("s3://") {
                Some(rest) => Ok(format!("https://minio.local/{rest}")),
                None if url.contains("fail") => Err(Error::new(ErrorCode::InvalidSelection, "no signer for it")),
                None if url.starts_with("https://h/") => Ok(url.replace("/d/", "/signed/") + "?sig=2"),
                None => Ok(url.to_string()),
            }
        }
    }
    let text = r#"{"a": ["s3://b/x.nc", 0, 1], "b": ["y.h5"], "c": ["gs://g/z"]}"#;
    let i = index_with(text, Some(&Mine), 1 << 20).unwrap();
    assert_eq!(show(&i, "a").unwrap(), "https://minio.local/b/x.nc@0+1");
    assert_eq!(show(&i, "b").unwrap(), "https://h/signed/y.h5?sig=2");
    assert_eq!(show(&i, "c").unwrap(), "https://storage.googleapis.com/g/z");
    let e = code_and(index_with(r#"{"a": ["fail.h5"]}"#, Some(&Mine), 1 << 20));
    assert!(e.code == ErrorCode::InvalidSelection && e.message.contains(FILE), "{e:?}");
    // A local file cannot be read.
    let e = code_and(index(r#"{"a": ["file:///tmp/x.h5", 0, 4]}"#));
    assert!(e.code == ErrorCode::UnsupportedFormat && e.message.contains("resolveUrl"), "{e:?}");
}

#[test]
fn hostile_files_are_typed_errors_naming_the_file_and_key() {
    let cases: &[(&str, ErrorCode, &str)] = &[
        (r#"{"a/0": ["x", -1, 10]}"#, ErrorCode::InvalidMetadata, "a/0"),
        (r#"{"a/0": ["x", 0, -10]}"#, ErrorCode::InvalidMetadata, "a/0"),
        (r#"{"a/0": ["x", 1.5, 10]}"#, ErrorCode::InvalidMetadata, "a/0"),
        (r#"{"a/0": ["x", 18446744073709551615, 1]}"#, ErrorCode::InvalidMetadata, "a/0"),
        (r#"{"a/0": ["x", 18446744073709551616, 1]}"#, ErrorCode::InvalidMetadata, "a/0"),
        (r#"{"a/0": ["x", 9223372036854775808, 9223372036854775808]}"#, ErrorCode::InvalidMetadata, "a/0"),
        (r#"{"a/0": ["x", 0]}"#, ErrorCode::InvalidMetadata, "a/0"),
        (r#"{"a/0": [1, 0, 10]}"#, ErrorCode::InvalidMetadata, "a/0"),
        (r#"{"a/0": null}"#, ErrorCode::InvalidMetadata, "a/0"),
        (r#"{"a/0": 17}"#, ErrorCode::InvalidMetadata, "a/0"),
        (r#"{"a/0": {"url": "x"}}"#, ErrorCode::InvalidMetadata, "a/0"),
        (r#"{"version": 1, "refs": {"a/0": true}}"#, ErrorCode::InvalidMetadata, "a/0"),
        (r#"{"version": 1, "refs": []}"#, ErrorCode::InvalidMetadata, "not an object"),
        (r#"{"version": 2, "refs": {}}"#, ErrorCode::UnsupportedFormat, "version 2"),
        (
            r#"{"version": 1, "templates": {"a": "{{b}}", "b": "x{{c}}", "c": "{{a}}"}, "refs": {}}"#,
            ErrorCode::InvalidMetadata,
            "cycle",
        ),
        (r#"{"version": 1, "templates": {"a": "{{a}}"}, "refs": {}}"#, ErrorCode::InvalidMetadata, "cycle"),
        (r#"{"version": 1, "templates": {"a": 1}, "refs": {}}"#, ErrorCode::InvalidMetadata, "template"),
        (r#"{"version": 1, "refs": {"k": ["{{nope}}"]}}"#, ErrorCode::InvalidMetadata, "nope"),
        (r#"{"version": 1, "refs": {"k": ["{{u"]}}"#, ErrorCode::InvalidMetadata, "unclosed"),
        (
            r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "x", "offset": "0", "dimensions": {"i": [1]}}]}"#,
            ErrorCode::InvalidMetadata,
            "`gen` entry 0",
        ),
        (
            r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "x", "offset": "{{-i}}", "length": "1", "dimensions": {"i": [1]}}]}"#,
            ErrorCode::InvalidMetadata,
            "k1",
        ),
        (
            r#"{"version": 1, "gen": [{"key": "k", "url": "x", "dimensions": {"i": {"start": 0, "stop": 5, "step": 0}}}]}"#,
            ErrorCode::InvalidMetadata,
            "`gen` entry 0",
        ),
        (
            r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "x", "dimensions": {"i": [null]}}]}"#,
            ErrorCode::InvalidMetadata,
            "`gen` entry 0",
        ),
        (r#"{"version": 1, "gen": {}}"#, ErrorCode::InvalidMetadata, "gen"),
        // 10⁹ keys: refused before any is made.
        (
            r#"{"version": 1, "gen": [{"key": "k/{{i}}.{{j}}", "url": "x", "offset": "{{i}}", "length": "1",
               "dimensions": {"i": {"stop": 1000000}, "j": {"stop": 1000}}}]}"#,
            ErrorCode::TooLarge,
            "1000000000 keys",
        ),
        // Far beyond u64: saturates, still refused.
        (
            r#"{"version": 1, "gen": [{"key": "k", "url": "x", "dimensions": {"i": {"start": -9223372036854775808, "stop": 9223372036854775807},
               "j": {"start": -9223372036854775808, "stop": 9223372036854775807}}}]}"#,
            ErrorCode::TooLarge,
            "gen",
        ),
        // A template doubling at each step.
        (
            r#"{"version": 1, "templates": {"a": "{{b}}{{b}}", "b": "{{c}}{{c}}", "c": "{{d}}{{d}}", "d": "{{e}}{{e}}", "e": "{{f}}{{f}}",
               "f": "{{g}}{{g}}", "g": "{{h}}{{h}}", "h": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}, "refs": {}}"#,
            ErrorCode::InvalidMetadata,
            "65536",
        ),
        (r#"{"a": "b""#, ErrorCode::InvalidMetadata, "EOF"),
        (r#"[1, 2]"#, ErrorCode::InvalidMetadata, "not a JSON object"),
    ];
    for (text, want, names) in cases {
        let e = code_and(index(text));
        assert_eq!(e.code, *want, "{text}: {e:?}");
        assert!(e.message.contains(FILE) && e.message.contains(names), "{text}: {}", e.message);
    }
}

fn code_and(r: Result<Index>) -> Error {
    r.err().expect("an error")
}

#[test]
fn the_index_is_bounded() {
    // 4 × the document limit: a file of many tiny keys, or a gen just under the key count.
    let text = format!("{{{}\"z\": \"\"}}", (0..2000).map(|k| format!("\"{k}\": \"\", ")).collect::<String>());
    assert_eq!(code(index_with(&text, None, 16 << 10)), ErrorCode::TooLarge);
    assert_eq!(index_with(&text, None, 64 << 10).unwrap().len(), 2001);
    let gen = r#"{"version": 1, "gen": [{"key": "a-long-key-prefix-to-grow-the-pool/{{i}}", "url": "x", "dimensions": {"i": {"stop": 1500}}}]}"#;
    let e = code_and(index_with(gen, None, 16 << 10));
    assert!(e.code == ErrorCode::TooLarge && e.message.contains("maxMetadataBytes"), "{e:?}");
}

#[test]
fn detection_reads_the_document_once() {
    let store = Store::new(Config::default());
    let c = server(&[
        ("https://h/v0.json", br#"{"a/.zarray": "{}", "a/0": ["x", 0, 1]}"#),
        ("https://h/other.json", br#"{"version": 1, "name": "a package"}"#),
        ("https://h/cut.json", br#"{"refs": {"a"#),
    ]);
    let found = detect(&store, &c, "https://h/v0.json", false).unwrap().unwrap();
    assert_eq!(found.url(), "https://h/v0.json");
    assert!(detect(&store, &c, "https://h/other.json", false).unwrap().is_none());
    assert!(detect(&store, &c, "https://h/absent.json", false).unwrap().is_none());
    assert!(detect(&store, &c, "https://h/x.zarr", false).unwrap().is_none());
    assert_eq!(sent(&c).len(), 3, "one request per .json document, none for another URL");
    let forced = detect(&store, &c, "https://h/other.json", true).unwrap().unwrap();
    assert!(forced.held.any().is_some_and(|i| i.is_empty()), "a version-1 file without refs is empty");
    let code = |url: &str, forced| detect(&store, &c, url, forced).err().unwrap().code;
    assert_eq!(code("https://h/cut.json", false), ErrorCode::InvalidMetadata);
    assert_eq!(code("https://h/absent.json", true), ErrorCode::NotFound);
    // A Parquet reference set is a directory: its .zmetadata is read (the query kept).
    let before = sent(&c).len();
    assert_eq!(code("https://h/refs.parquet/", false), ErrorCode::NotFound);
    assert_eq!(code("https://h/refs.parq?x=1", true), ErrorCode::NotFound);
    let asked: Vec<String> = sent(&c)[before..].iter().map(|r| r.0.clone()).collect();
    assert_eq!(asked, ["https://h/refs.parquet/.zmetadata", "https://h/refs.parq/.zmetadata?x=1"]);
    // Too large for maxMetadataBytes: named.
    let small = Store::new(Config { max_document: 10, ..Config::default() });
    let e = detect(&small, &c, "https://h/v0.json", true).err().unwrap();
    assert!(e.code == ErrorCode::TooLarge && e.message.contains("https://h/v0.json"), "{e:?}");
}

/// A store with `text` mounted at [`FILE`], and targets beside it.
fn mounted(text: &str, targets: &[(&str, &[u8])]) -> (Store, ObjectServer) {
    // The targets written first, then the file referring to them (as kerchunk is run).
    let mut files = targets.to_vec();
    files.push((FILE, text.as_bytes()));
    let refs = References::new(FILE, &Mounting::default()).unwrap().unwrap();
    let stack = Stack { layers: vec![Layer::References(Rc::new(refs))], ..Stack::default() };
    (Store::over(Transport::new(Config::default()), stack), server(&files))
}

fn spans(store: &Store, c: &ObjectServer, keys: &[&str]) -> Vec<Result<Option<Vec<u8>>>> {
    let wanted: Vec<(String, ByteRange)> = keys.iter().map(|k| (format!("{FILE}/{k}"), ByteRange::Full)).collect();
    let mut out: Vec<Result<Option<Vec<u8>>>> = keys.iter().map(|_| Ok(None)).collect();
    block_on(store.read_spans(c, &wanted, false, |i, got| {
        out[i] = got;
        Ok(())
    }))
    .unwrap();
    out
}

#[test]
fn chunks_of_one_target_are_one_request_inline_ones_none() {
    let text = r#"{"a/0": ["t.bin", 2, 3], "a/1": ["t.bin", 6, 2], "a/2": "hi", "a/3": "base64:aGk=", "a/4": ["t.bin"],
                   "a/5": ["gone.bin", 0, 4], "a/6": ["t.bin", 9, 4], "a/7": "base64:a*b", "a/8": "base64:aGkx2"}"#;
    let (store, c) = mounted(text, &[("https://h/d/t.bin", b"0123456789")]);
    let got = spans(&store, &c, &["a/0", "a/1", "a/2", "a/3", "missing"]);
    let bytes: Vec<Option<Vec<u8>>> = got.into_iter().map(|g| g.unwrap()).collect();
    assert_eq!(
        bytes,
        [Some(b"234".to_vec()), Some(b"67".to_vec()), Some(b"hi".to_vec()), Some(b"hi".to_vec()), None]
    );
    let log = sent(&c);
    assert_eq!(log.len(), 2, "the reference file, then one merged range: {log:?}");
    assert_eq!(log[1], ("https://h/d/t.bin".to_string(), Some("bytes=2-7".to_string())));
    // Inline keys need no request, ever.
    assert!(spans(&store, &c, &["a/2", "a/3"]).iter().all(|g| g.as_ref().is_ok_and(Option::is_some)));
    assert_eq!(sent(&c).len(), 2);
    // A whole target; a range of a parent's subrange.
    assert_eq!(
        block_on(store.read(&c, &format!("{FILE}/a/4"), ByteRange::Range { offset: 1, len: 2 }))
            .unwrap()
            .unwrap()
            .bytes,
        b"12"
    );
    assert_eq!(block_on(store.read_document(&c, &format!("{FILE}/a/0"), 100)).unwrap().unwrap(), b"234");
    // A missing target is a missing chunk.
    assert!(spans(&store, &c, &["a/5"])[0].as_ref().unwrap().is_none());
    // Past the target's end: the server's 416, naming the reference file, the key and the target.
    let e = spans(&store, &c, &["a/6"]).remove(0).unwrap_err();
    assert_eq!(e.code, ErrorCode::CorruptShard);
    assert!(e.message.contains(&format!("{FILE}/a/6")) && e.message.contains("t.bin"), "{}", e.message);
    // Bad base64: that chunk alone fails.
    for key in ["a/7", "a/8"] {
        let e = spans(&store, &c, &[key]).remove(0).unwrap_err();
        assert!(e.code == ErrorCode::CorruptChunk && e.message.contains(FILE) && e.message.contains(key), "{e:?}");
    }
    assert_eq!(sent(&c).iter().filter(|r| r.0 == FILE).count(), 1, "the reference file is read once");
}

#[test]
fn reads_at_once_before_the_index_is_held_share_one_read_of_the_file() {
    let (store, c) = mounted(r#"{"a/0": "x", "a/1": "y"}"#, &[]);
    let (a, b) = (format!("{FILE}/a/0"), format!("{FILE}/a/1"));
    let both = futures_util::future::join(store.read_document(&c, &a, 10), store.read_document(&c, &b, 10));
    let (a, b) = block_on(both);
    assert_eq!((a.unwrap().unwrap(), b.unwrap().unwrap()), (b"x".to_vec(), b"y".to_vec()));
    assert_eq!(sent(&c).len(), 1);
}

#[test]
fn a_bad_reference_file_fails_every_read_and_the_store_stays_usable() {
    let (store, c) = mounted(r#"{"version": 1, "refs": {"a/0": ["x", -1, 2]}}"#, &[]);
    let e = spans(&store, &c, &["a/0"]).remove(0).unwrap_err();
    assert!(e.code == ErrorCode::InvalidMetadata && e.message.contains(FILE), "{e:?}");
    let e = block_on(store.read_document(&c, &format!("{FILE}/.zgroup"), 100)).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidMetadata);
    assert!(block_on(store.read_document(&c, "https://h/d/elsewhere", 100)).unwrap().is_none());
}


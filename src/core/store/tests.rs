//! The store layer alone, over the in-memory object server: each kind stacked on others to any
//! depth, ranges of ranges merged into one request of the outermost object, errors naming the
//! whole pipeline.
use super::zip::directory::tests::zip;
use super::{mount, pipeline, Opening, Store};
use crate::core::error::ErrorCode;
use crate::core::transport::memory::ObjectServer;
use crate::core::transport::{ByteRange, Config, Transport};
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use futures_executor::block_on;

fn opened(s: &ObjectServer, url: &str) -> (Store, String, String) {
    let pasted = pipeline::parse(url, &[]).unwrap();
    block_on(mount(s, Transport::new(Config::default()), &pasted, &Opening::default())).unwrap()
}

fn spans(store: &Store, s: &ObjectServer, wanted: &[(String, ByteRange)]) -> Vec<crate::core::error::Result<Option<Vec<u8>>>> {
    let mut out: Vec<_> = wanted.iter().map(|_| Ok(None)).collect();
    block_on(store.read_spans(s, wanted, false, |i, got| {
        out[i] = got;
        Ok(())
    }))
    .unwrap();
    out
}

/// Three archives deep: the innermost entries are ranges of ranges of ranges of the outer
/// object; two of them wanted together are one request of it.
#[test]
fn archives_inside_archives_to_any_depth() {
    let a: Vec<u8> = (0..200u8).collect();
    let b: Vec<u8> = (100..250u8).collect();
    let inner = zip(&[("raw/a", &a), ("raw/b", &b)], "inner");
    let middle = zip(&[("pad", &[7u8; 300]), ("inner.zip", &inner)], "");
    let outer = zip(&[("x", b"x"), ("middle.zip", &middle)], "");
    let s = ObjectServer::new();
    s.yields.set(1);
    s.put("https://h/outer.zip", outer);
    let (store, root, path) = opened(&s, "https://h/outer.zip|zip:middle.zip|zip:inner.zip|zip:raw");
    assert_eq!((root.as_str(), path.as_str()), ("https://h/outer.zip/middle.zip/inner.zip", "raw"));
    assert_eq!(store.stack().layers.len(), 3);
    // Nothing read yet: each layer reads its directory when first asked.
    assert_eq!(s.requests(), 0);
    let key = |k: &str| format!("{root}/raw/{k}");
    let got = spans(&store, &s, &[(key("a"), ByteRange::Full), (key("b"), ByteRange::Range { offset: 10, len: 5 })]);
    assert_eq!(got[0].as_ref().unwrap().as_deref(), Some(&a[..]));
    assert_eq!(got[1].as_ref().unwrap().as_deref(), Some(&b[10..15]));
    // The outer archive is small: its end and start reads hold all of it, every archive inside
    // it and every entry: two requests in all, both of the outer object.
    let log = s.log();
    assert!(log.len() == 2 && log.iter().all(|l| l.url == "https://h/outer.zip"), "{log:?}");
    // Past the end of an entry: an error naming the whole pipeline.
    let e = block_on(store.read(&s, &key("a"), ByteRange::Range { offset: 190, len: 20 })).err().unwrap();
    let e = store.name_error(e);
    assert_eq!(e.code, ErrorCode::CorruptShard);
    assert!(e.message.contains("https://h/outer.zip|zip:middle.zip|zip:inner.zip|zip:raw/a"), "{}", e.message);
    assert_eq!(store.stack_text(), "https://h/outer.zip|zip:middle.zip|zip:inner.zip|zip:");
    assert_eq!(store.display_node(&root), "https://h/outer.zip|zip:middle.zip|zip:inner.zip|zip:");
}

/// A zip inside a large outer archive: its directory and entries are read by range of the outer
/// object, neighbours merged.
#[test]
fn an_archive_read_by_ranges_of_its_container() {
    // Larger than the directory's reads: entries past the start are read by range.
    let chunks: Vec<Vec<u8>> = (0..4u8).map(|k| vec![k; 40 << 10]).collect();
    let names: Vec<String> = (0..4).map(|k| format!("c/{k}")).collect();
    let files: Vec<(&str, &[u8])> = names.iter().map(String::as_str).zip(chunks.iter().map(Vec::as_slice)).collect();
    let inner = zip(&files, "");
    let big = vec![0u8; 400 << 10];
    let outer = zip(&[("big", &big), ("inner.zip", &inner), ("tail", &big)], "");
    let s = ObjectServer::new();
    s.yields.set(1);
    s.put("https://h/o.zip", outer);
    let (store, root, _) = opened(&s, "https://h/o.zip|zip:inner.zip|zip:");
    // The directory: the inner archive's end and start, ranges of the outer one.
    let first = format!("{root}/{}", names[0]);
    let got = block_on(store.read(&s, &first, ByteRange::Full)).unwrap().unwrap();
    assert_eq!(got.bytes, chunks[0], "the first entry, from the start read");
    let log = s.log();
    assert!(log.iter().all(|l| l.url == "https://h/o.zip" && l.range.is_some()), "{log:?}");
    assert_eq!(log.len(), 4, "the outer directory (end, start), the inner one (end, start): {log:?}");
    s.reset();
    let wanted: Vec<(String, ByteRange)> = names.iter().map(|n| (format!("{root}/{n}"), ByteRange::Full)).collect();
    let got = spans(&store, &s, &wanted);
    for (k, g) in got.iter().enumerate() {
        assert_eq!(g.as_ref().unwrap().as_deref(), Some(&chunks[k][..]));
    }
    let log = s.log();
    assert_eq!(log.len(), 1, "the entries past the start: one request of the outer archive: {log:?}");
}

/// A zip named by a reference file (its key a whole target); a deflated archive inside an
/// archive (inflated whole, then read as bytes).
#[test]
fn an_archive_named_by_a_reference_file_and_a_deflated_one() {
    let a: Vec<u8> = (0..50u8).collect();
    let inner = zip(&[("a", &a)], "");
    let s = ObjectServer::new();
    s.yields.set(1);
    s.put("https://h/t/inner.zip", inner.clone());
    s.put("https://h/r/refs.json", br#"{"version": 1, "refs": {"data.zip": ["../t/inner.zip"]}}"#.to_vec());
    let (store, root, _) = opened(&s, "https://h/r/refs.json|references:data.zip|zip:");
    let got = block_on(store.read(&s, &format!("{root}/a"), ByteRange::Full)).unwrap().unwrap();
    assert_eq!(got.bytes, a);
    assert!(s.log().iter().all(|l| l.url != "https://h/r/refs.json/data.zip"), "targets are read, not keys");
    // Deflated: built by hand from a stored zip (method 8 over a raw deflate stream of the entry).
    let deflated = shardfetch_kernels_deflate(&inner);
    let outer = zip_with_method(&[("inner.zip", &inner)], &deflated);
    s.put("https://h/d.zip", outer);
    let (store, root, _) = opened(&s, "https://h/d.zip|zip:inner.zip|zip:");
    let got = block_on(store.read(&s, &format!("{root}/a"), ByteRange::Range { offset: 5, len: 3 })).unwrap().unwrap();
    assert_eq!(got.bytes, &a[5..8]);
}

/// A stored (level 0) deflate stream of `data`: blocks of at most 65,535 bytes.
fn shardfetch_kernels_deflate(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let chunks: Vec<&[u8]> = data.chunks(65_535).collect();
    for (k, c) in chunks.iter().enumerate() {
        out.push(u8::from(k + 1 == chunks.len()));
        out.extend_from_slice(&(c.len() as u16).to_le_bytes());
        out.extend_from_slice(&(!(c.len() as u16)).to_le_bytes());
        out.extend_from_slice(c);
    }
    out
}

/// A zip of one entry whose data is `stream` (method 8: deflate) standing for `files[0]`.
fn zip_with_method(files: &[(&str, &[u8])], stream: &[u8]) -> Vec<u8> {
    let (name, data) = files[0];
    let crc = crate::core::crc::crc32(data);
    let mut out = Vec::new();
    out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
    out.extend_from_slice(&[20, 0, 0, 0, 8, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&(stream.len() as u32).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(stream);
    let cd_at = out.len() as u32;
    let mut central = Vec::new();
    central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
    central.extend_from_slice(&[20, 0, 20, 0, 0, 0, 8, 0, 0, 0, 0, 0]);
    central.extend_from_slice(&crc.to_le_bytes());
    central.extend_from_slice(&(stream.len() as u32).to_le_bytes());
    central.extend_from_slice(&(data.len() as u32).to_le_bytes());
    central.extend_from_slice(&(name.len() as u16).to_le_bytes());
    central.extend_from_slice(&[0; 12]);
    central.extend_from_slice(&0u32.to_le_bytes());
    central.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0]);
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_at.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// A pipeline stage no kind has is refused before anything is read.
#[test]
fn stages_come_from_the_registry() {
    let e = pipeline::parse("https://h/x|ocdbt:", &[]).unwrap_err();
    assert_eq!(e.code, ErrorCode::UnsupportedFormat);
    for kind in super::registry::NAMES.iter().filter(|k| super::registry::stage(k, "").is_some()) {
        assert!(e.message.contains(&format!("|{kind}:")), "{}", e.message);
    }
}

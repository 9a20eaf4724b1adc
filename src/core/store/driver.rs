//! The core side of a store kind whose file is read through a metadata reader in a decoder
//! module (`hdf5`, `netcdf3`): one file, each dataset presented as a Zarr v3 array whose chunk
//! `c/…` is a range of the file, each group as a group. The reader is asked through one
//! protocol (`decoders/hdf5`'s): a request and the file's bytes held so far in, either an answer
//! or the ranges it needs out. This side fetches those ranges (read ahead to [`READ_AHEAD`],
//! merged, at once) and asks again; it keeps the bytes (within [`HELD`]), the answers for nodes
//! and the chunk locations each answer brings, all stamped with the file's version.
use super::kind::Mounting;
use super::place::Place;
use super::windows::{ask, reader_error};
use abi::{encode_request, held};
use crate::core::error::{too_large, Error, ErrorCode, Result};
use crate::core::external::Decoders;
use crate::core::json::{self, Value};
use crate::core::transport::{ByteRange, HttpClient, Objects};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use futures_util::stream::{self, StreamExt};

/// Bytes a needed range is read ahead to: the structures near it are often asked next.
pub const READ_AHEAD: u64 = 64 << 10;
/// Bytes of the file held for the reader at most.
const HELD: u64 = 32 << 20;
/// Rounds of a request at most (each reads what the one before found it needs).
const ROUNDS: usize = 32;
/// Chunk locations kept at most (each 40 bytes or so).
const LOCATIONS: usize = 1 << 20;

/// Which reader, and how errors name it.
pub struct Reader {
    /// The decoder module's name.
    pub name: &'static str,
    /// What it reads ("HDF5 and NetCDF-4 files"), for the error when it is not loaded.
    pub reads: &'static str,
    /// One such file ("HDF5 file"), for the errors of a file it cannot read.
    pub file: &'static str,
}

/// One file read through a reader.
pub struct Driver {
    pub url: String,
    reader: Reader,
    decoders: Option<Rc<dyn Decoders>>,
    state: RefCell<State>,
}

#[derive(Default)]
struct State {
    /// The stamp of the file's version all this was read from (see `transport::versions`).
    stamp: u64,
    /// The file's size, once an answer told it.
    size: Option<u64>,
    /// Bytes held: (offset, bytes), in the order read.
    windows: Vec<(u64, Rc<Vec<u8>>)>,
    /// Nodes answered: path → (its `zarr.json`, its children), or `None` (nothing there).
    nodes: Vec<(String, Node)>,
    /// Chunk locations answered: (dataset path, coordinates) → range, or `None` (not written).
    chunks: Locations,
}

type Node = Option<(Rc<Vec<u8>>, Vec<(String, bool)>)>;

/// `0/12` → `[0, 12]`; `` → `[]`.
fn coords(s: &str) -> Option<Vec<u64>> {
    s.split('/').filter(|p| !p.is_empty()).map(|p| p.parse::<u64>().ok()).collect()
}

/// The `[[offset, len], …]` of an answer's member `k`.
fn ranges(v: Option<&Value>) -> Vec<(u64, u64)> {
    let pair = |r: &Value| Some((r.get(0)?.as_u64()?, r.get(1)?.as_u64()?));
    v.and_then(Value::as_array).map(|a| a.iter().filter_map(pair).collect()).unwrap_or_default()
}

impl Driver {
    pub fn new(url: &str, how: &Mounting, reader: Reader) -> Driver {
        let mut state = State::default();
        if let Some(head) = &how.head {
            let (stamp, bytes, size) = &**head;
            state = State { stamp: *stamp, size: *size, windows: alloc::vec![(0, Rc::new(bytes.clone()))], ..state };
        }
        Driver { url: String::from(url), reader, decoders: how.decoders.clone(), state: RefCell::new(state) }
    }

    pub async fn place<S: Objects, C: HttpClient>(&self, below: &S, c: &C, key: &str) -> Result<Place> {
        self.fresh(below.stamp(&self.url));
        if let Some(path) = key.strip_suffix("zarr.json").map(|p| p.trim_end_matches('/')) {
            return Ok(match self.node(below, c, path).await? {
                Some((doc, _)) => Place::Bytes(doc),
                None => Place::Missing,
            });
        }
        // `<path>/c/i/j`: a chunk of the dataset at `path` (`<path>/c`: of a scalar one).
        let split = match key.strip_suffix("/c") {
            Some(path) => Some((path, "")),
            None => key.rsplit_once("/c/").or_else(|| Some(("", key.strip_prefix("c/")?))),
        };
        let Some((path, Some(coords))) = split.map(|(p, c)| (p, coords(c))) else { return Ok(Place::Missing) };
        Ok(match self.chunk(below, c, path, &coords).await? {
            // A chunk its writer stored with filters skipped: re-wrapped by the reader so that
            // the dataset's codecs read it as they read the others.
            Some((offset, len, Some(wrap))) => {
                let url = &self.url;
                let b = match self.held(offset, len) {
                    Some(b) => b,
                    None => below.read(c, url, ByteRange::Range { offset, len }).await?.ok_or_else(|| self.corrupt("a chunk is missing"))?.bytes,
                };
                let d = self.decoders.as_deref().ok_or_else(|| self.corrupt("no reader"))?;
                let input = encode_request(&format!("{{\"op\":\"wrap\",\"filters\":{wrap}}}"), [(0, &b[..])]);
                Place::Bytes(Rc::new(d.decode(self.reader.name, &input, &[]).map_err(|e| reader_error(url, e))?))
            }
            // Bytes read with the structures around them (a small file, coordinates beside their
            // header) are not asked for again.
            Some((offset, len, None)) => match self.held(offset, len) {
                Some(b) => Place::Bytes(Rc::new(b)),
                None => Place::Range { url: self.url.clone(), offset, len },
            },
            None => Place::Missing,
        })
    }

    pub fn children(&self, path: &str) -> Option<Vec<(String, bool)>> {
        let path = path.trim_matches('/');
        let state = self.state.borrow();
        let (_, node) = state.nodes.iter().find(|(p, _)| p == path)?;
        node.as_ref().map(|(_, kids)| kids.clone())
    }

    /// What the reader answers to `op` (a JSON object's members after `"op"`), fetching what
    /// it needs on the way.
    async fn ask<S: Objects, C: HttpClient>(&self, below: &S, c: &C, op: &str) -> Result<Value> {
        let mut last: Vec<(u64, u64)> = Vec::new();
        for _ in 0..ROUNDS {
            self.same_version(below)?;
            let size = self.state.borrow().size;
            let size = size.map_or(String::from("null"), |s| format!("{s}"));
            let state = self.state.borrow();
            let windows = state.windows.iter().map(|(w, b)| (*w, &b[..]));
            let r = &self.reader;
            let v = ask(self.decoders.as_deref(), (r.name, r.reads), &self.url, &format!("{{{op},\"size\":{size}}}"), windows)?;
            drop(state);
            let need = ranges(v.get("need"));
            if need.is_empty() {
                return Ok(v);
            }
            // Asked again for what was read: the file ends there.
            if need == last {
                return Err(self.corrupt("the file ends before what its structures point at"));
            }
            self.fetch(below, c, &need).await?;
            last = need;
        }
        Err(self.corrupt(&format!("still reading after {ROUNDS} rounds")))
    }

    /// What was read of another version of the file (`stamp` is the current one's) dropped.
    #[inline(never)]
    fn fresh(&self, stamp: u64) {
        if self.state.borrow().stamp != stamp {
            *self.state.borrow_mut() = State { stamp, ..State::default() };
        }
    }

    /// An error when the file changed since what is held was read (its bytes would mix two
    /// versions): the read is resolved again.
    fn same_version<S: Objects>(&self, below: &S) -> Result<()> {
        self.same_stamp(below.stamp(&self.url))
    }

    #[inline(never)]
    fn same_stamp(&self, stamp: u64) -> Result<()> {
        if self.state.borrow().stamp == stamp {
            return Ok(());
        }
        Err(Error::new(ErrorCode::Changed, format!("{}: changed while open (during a read of its structures)", self.url)))
    }

    /// Bytes `[at, at + len)` if a window holds them all.
    fn held(&self, at: u64, len: u64) -> Option<Vec<u8>> {
        let state = self.state.borrow();
        held(state.windows.iter().map(|(w, b)| (*w, &b[..])), at, len).map(<[u8]>::to_vec)
    }

    /// Read `need` (each range to [`READ_AHEAD`] at least, neighbours merged), at once.
    async fn fetch<S: Objects, C: HttpClient>(&self, below: &S, c: &C, need: &[(u64, u64)]) -> Result<()> {
        let size = self.state.borrow().size;
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for &(at, len) in need {
            let state = self.state.borrow();
            let windows = || state.windows.iter().map(|(w, b)| (*w, w + b.len() as u64));
            // What windows already hold at the range's start and end is not read again, and
            // reading ahead stops at the next window.
            let at2 = windows().filter(|&(w, e)| w <= at && at < e).map(|(_, e)| e).max().unwrap_or(at);
            let end = at.saturating_add(len);
            let end = windows().filter(|&(w, e)| at2 < w && w < end && end <= e).map(|(w, _)| w).min().unwrap_or(end);
            let (at, len) = (at2, end.saturating_sub(at2));
            if len == 0 {
                continue;
            }
            let next = windows().filter(|&(w, _)| w >= end).map(|(w, _)| w).min().unwrap_or(u64::MAX);
            drop(state);
            let end = at.saturating_add(len.max(READ_AHEAD)).min(next).max(at + len);
            let end = size.map_or(end, |s| end.min(s).max(at.saturating_add(len)));
            match runs.last_mut() {
                Some(r) if at <= r.1 => r.1 = r.1.max(end),
                _ => runs.push((at, end)),
            }
        }
        let held: u64 = self.state.borrow().windows.iter().map(|(_, b)| b.len() as u64).sum();
        let more: u64 = runs.iter().map(|r| r.1 - r.0).sum();
        if held + more > HELD {
            let what = format!("the bytes held for the {} reader", self.reader.name);
            return Err(too_large(&format!("{}: its structures", self.url), held + more, HELD, &what));
        }
        // (The file's start as a prefix: a file shorter than the read-ahead is no error.)
        let range = |at: u64, end: u64| match (at, size) {
            (0, None) => ByteRange::Prefix(end),
            _ => ByteRange::Range { offset: at, len: end - at },
        };
        // (At once; buffer_unordered as the read path uses it, not join_all: the module's size.)
        let reads = runs.iter().map(|&(at, end)| async move { (at, below.read(c, &self.url, range(at, end)).await) });
        let got: Vec<_> = stream::iter(reads).buffer_unordered(8).collect().await;
        for (at, r) in got {
            let at = &at;
            let r = r?.ok_or_else(|| Error::new(ErrorCode::NotFound, format!("{}: not found", self.url)))?;
            self.same_version(below)?;
            let mut state = self.state.borrow_mut();
            if r.object_size.is_some() {
                state.size = r.object_size;
            }
            // (Another request may have read the same meanwhile.)
            if !state.windows.iter().any(|(w, b)| w == at && b.len() >= r.bytes.len()) {
                state.windows.push((*at, Rc::new(r.bytes)));
            }
        }
        Ok(())
    }

    /// The node at `path` (`""`: the root): its `zarr.json` and children, or `None`.
    async fn node<S: Objects, C: HttpClient>(&self, below: &S, c: &C, path: &str) -> Result<Node> {
        if let Some((_, n)) = self.state.borrow().nodes.iter().find(|(p, _)| p == path) {
            return Ok(n.clone());
        }
        let mut op = String::from("\"op\":\"node\",\"path\":");
        json::write_str(&mut op, path);
        let v = self.ask(below, c, &op).await?;
        self.same_version(below)?;
        let node = match v.get("node") {
            Some(Value::Object(n)) => {
                let mut doc = String::new();
                n.get("zarr_json").ok_or_else(|| self.corrupt("a node without its zarr.json"))?.write(&mut doc);
                let kid = |k: &Value| Some((String::from(k.get(0)?.as_str()?), k.get(1)?.as_bool()?));
                let kids = n.get("children").and_then(Value::as_array).map(|a| a.iter().filter_map(kid).collect());
                Some((Rc::new(doc.into_bytes()), kids.unwrap_or_default()))
            }
            _ => None,
        };
        self.state.borrow_mut().nodes.push((String::from(path), node.clone()));
        Ok(node)
    }

    /// Where chunk `coords` of the dataset at `path` is (offset, length, and the filters to
    /// re-wrap it with when its writer skipped them), or `None` (never written).
    async fn chunk<S: Objects, C: HttpClient>(&self, below: &S, c: &C, path: &str, coords: &[u64]) -> Result<Option<(u64, u64, Option<String>)>> {
        let found = {
            let s = self.state.borrow();
            at(&s.chunks, path, coords).ok().and_then(|i| s.chunks.get(i)).map(|(_, r)| *r)
        };
        if let Some(r) = found {
            return Ok(r.map(|(o, n)| (o, n, None)));
        }
        let mut op = String::from("\"op\":\"chunk\",\"path\":");
        json::write_str(&mut op, path);
        op.push_str(",\"coords\":[");
        op.push_str(&coords.iter().map(|x| format!("{x}")).collect::<Vec<_>>().join(","));
        op.push(']');
        let v = self.ask(below, c, &op).await?;
        self.same_version(below)?;
        let this = v.get("chunk").and_then(|r| Some((r.get(0)?.as_u64()?, r.get(1)?.as_u64()?)));
        if let (Some((o, n)), Some(w)) = (this, v.get("wrap")) {
            let mut t = String::new();
            w.write(&mut t);
            return Ok(Some((o, n, Some(t))));
        }
        let mut state = self.state.borrow_mut();
        keep(&mut state.chunks, path, coords.to_vec(), this);
        // The other chunks the index nodes read hold: no call for them later.
        for m in v.get("more").and_then(Value::as_array).into_iter().flatten() {
            let k: Option<Vec<u64>> = m.get(0).and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_u64).collect());
            if let (Some(k), Some(o), Some(n)) = (k, m.get(1).and_then(Value::as_u64), m.get(2).and_then(Value::as_u64)) {
                keep(&mut state.chunks, path, k, Some((o, n)));
            }
        }
        Ok(this.map(|(o, n)| (o, n, None)))
    }

    fn corrupt(&self, why: &str) -> Error {
        Error::new(ErrorCode::CorruptShard, format!("{}: not a readable {}: {why}", self.url, self.reader.file))
    }
}

/// Chunk locations are kept sorted: a variable of 10^5 records or an index answer of as many
/// chunks is found by halving, not by a scan per chunk.
type Locations = Vec<((String, Vec<u64>), Option<(u64, u64)>)>;

fn at(chunks: &Locations, path: &str, coords: &[u64]) -> core::result::Result<usize, usize> {
    chunks.binary_search_by(|((p, k), _)| (p.as_str(), k.as_slice()).cmp(&(path, coords)))
}

fn keep(chunks: &mut Locations, path: &str, coords: Vec<u64>, this: Option<(u64, u64)>) {
    if chunks.len() < LOCATIONS {
        if let Err(i) = at(chunks, path, &coords) {
            chunks.insert(i, ((String::from(path), coords), this));
        }
    }
}

/// The `Kind` methods a kind read by a [`Driver`] (its `.0`) has alike: the reader's `name`,
/// its one decoder module; every chunk a range of the one file, presented as Zarr v3.
macro_rules! driven_kind {
    ($module:literal, $reader:expr) => {
        fn new(url: &str, how: &Mounting) -> Result<Option<Self>> {
            Ok(Some(Self(Driver::new(url, how, $reader))))
        }

        fn url(&self) -> &str {
            &self.0.url
        }

        fn decoders(&self) -> &'static [&'static str] {
            &[$module]
        }

        async fn place<S: Objects, C: HttpClient>(&self, below: &S, c: &C, key: &str) -> Result<Place> {
            self.0.place(below, c, key).await
        }

        async fn describe<S: Objects, C: HttpClient>(&self, _below: &S, _c: &C) -> Container {
            Container { kind: Self::NAME, url: self.0.url.clone(), comment: String::new(), version: String::new() }
        }

        fn children(&self, path: &str) -> Option<Vec<(String, bool)>> {
            self.0.children(path)
        }

        fn format(&self) -> Option<&'static str> {
            Some("zarr3")
        }

        /// Every chunk is a range of the one file: those wanted together merge.
        fn keys_share_objects(&self) -> bool {
            true
        }
    };
}
pub(crate) use driven_kind;

//! Icechunk repositories (spec v2, and v1 whose refs sit at fixed paths) as a store over a
//! store: the repository's nodes are Zarr v3 objects under its URL. `node/zarr.json` is the
//! node's metadata from the snapshot; a chunk key is found in the array's manifest — inline
//! bytes, a range of a chunk file (`chunks/<id>`; a shard's inner chunks merge like any
//! shard's), or a range of a virtual chunk's object where a virtual chunk container of the
//! repository allows it.
//!
//! Every file is read whole with one GET: the repo info (`repo`; v1: `refs/…/ref.json`), the
//! snapshot (kept by the mount), each manifest (cached within `cacheBytes`, the last one kept
//! too). Their headers are checked (magic, spec version, file type, compression), their zstd
//! payloads decoded within `maxMetadataBytes` (repo info, snapshots) or `maxDecodedBytes`
//! (manifests), their flatbuffers read in place with every offset checked. Parent snapshots
//! are never followed, so a cyclic history cannot loop.
use super::flatbuf::{root, Table, Vector};
use super::zip::Place;
use super::{ByteRange, HttpClient, Objects};
use crate::core::error::{Error, ErrorCode, Result};
use crate::core::json::{self, Value};
use crate::core::zstd;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::RefCell;
use core::cmp::Ordering;

const MAGIC: &[u8] = "ICE🧊CHUNK".as_bytes();
/// Magic, implementation name (24 bytes), spec version, file type, compression.
const HEADER: usize = 39;
const SNAPSHOT: u8 = 1;
const MANIFEST: u8 = 2;
const REPO_INFO: u8 = 6;

/// Memo keys of this store's derived values (the store keys them by URL too).
const KEY_FILE: u64 = 0x6963_6500;

/// Which version of the repository to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Version {
    Branch(String),
    Tag(String),
    /// A snapshot id (20 characters of Crockford base 32).
    Snapshot(String),
}

impl Version {
    /// Neuroglancer's spelling: `@branch.main`, `@tag.v1`, `@<snapshot id>`.
    pub fn parse(at: &str) -> Result<Version> {
        let v = match (at.strip_prefix("branch."), at.strip_prefix("tag.")) {
            (Some(b), _) => Version::Branch(b.to_string()),
            (_, Some(t)) => Version::Tag(t.to_string()),
            _ => Version::Snapshot(at.to_string()),
        };
        v.checked()
    }

    /// Names that are path segments, ids that are ids: nothing here can leave the repository.
    pub fn checked(self) -> Result<Version> {
        let ok = match &self {
            Version::Branch(n) | Version::Tag(n) => {
                !n.is_empty() && !n.contains(['/', '\\', '?', '#']) && n != ".." && n != "."
            }
            Version::Snapshot(id) => id.len() == 20 && id.bytes().all(|b| CROCKFORD.contains(&b.to_ascii_uppercase())),
        };
        if ok {
            return Ok(match self {
                Version::Snapshot(id) => Version::Snapshot(id.to_ascii_uppercase()),
                v => v,
            });
        }
        Err(Error::new(
            ErrorCode::InvalidSelection,
            format!("{}: not a branch, tag or snapshot id of an Icechunk repository", self.spelled()),
        ))
    }

    /// `@branch.main` (as Neuroglancer writes it).
    pub fn spelled(&self) -> String {
        match self {
            Version::Branch(b) => format!("@branch.{b}"),
            Version::Tag(t) => format!("@tag.{t}"),
            Version::Snapshot(s) => format!("@{s}"),
        }
    }
}

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// An object id as file names spell it: Crockford base 32, upper case, no padding.
pub fn base32(id: &[u8]) -> String {
    let (mut out, mut acc, mut bits) = (String::new(), 0u32, 0);
    for &b in id {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(CROCKFORD[(acc >> bits) as usize & 31]));
        }
    }
    if bits > 0 {
        out.push(char::from(CROCKFORD[(acc << (5 - bits)) as usize & 31]));
    }
    out
}

fn corrupt(url: &str, why: impl core::fmt::Display) -> Error {
    Error::new(ErrorCode::CorruptShard, format!("{url}: not a readable Icechunk file: {why}"))
}

/// The flatbuffer of an Icechunk file of type `kind`, its header checked; (spec version, bytes).
pub fn unpack(url: &str, file: &[u8], kind: u8, limit: u64) -> Result<(u8, Vec<u8>)> {
    if file.len() < HEADER || !file.starts_with(MAGIC) {
        return Err(corrupt(url, "no Icechunk header"));
    }
    let unsupported = |what: String| Error::new(ErrorCode::UnsupportedFormat, format!("{url}: {what}"));
    let (spec, t, compression) = (file[36], file[37], file[38]);
    if !(1..=2).contains(&spec) {
        return Err(unsupported(format!("Icechunk spec version {spec} (versions 1 and 2 are read)")));
    }
    if t != kind {
        let name = |t: u8| match t {
            SNAPSHOT => "a snapshot",
            MANIFEST => "a manifest",
            3 | 5 => "an attributes file",
            4 => "a transaction log",
            REPO_INFO => "a repo info file",
            _ => "an unknown file type",
        };
        return Err(unsupported(format!("Icechunk file type {t} ({}) where {} was expected", name(t), name(kind))));
    }
    let payload = &file[HEADER..];
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let fb = match compression {
        0 if payload.len() <= limit => payload.to_vec(),
        0 => return Err(crate::core::error::too_large(url, payload.len() as u64, limit as u64, "maxDecodedBytes")),
        1 => zstd::unzstd_unsized(payload, limit).map_err(|e| Error::new(e.code, format!("{url}: {}", e.message)))?,
        c => return Err(unsupported(format!("Icechunk compression {c} (none and zstd are read)"))),
    };
    Ok((spec, fb))
}

/// Binary search over `len` sorted items by a fallible comparison with the one wanted.
fn search(len: usize, cmp: &dyn Fn(usize) -> Result<Ordering>) -> Result<Option<usize>> {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match cmp(mid)? {
            Ordering::Less => lo = mid + 1,
            Ordering::Greater => hi = mid,
            Ordering::Equal => return Ok(Some(mid)),
        }
    }
    Ok(None)
}

/// A virtual chunk container: its name (for `vcc://name/…` locations) and URL prefix.
#[derive(Clone, Debug, PartialEq)]
pub struct Container {
    pub name: Option<String>,
    pub prefix: String,
}

/// A snapshot, read: its id, spec version, commit message and flatbuffer.
#[derive(Debug)]
pub struct Snapshot {
    pub id: String,
    pub message: String,
    /// (spec version, flatbuffer).
    file: Rc<(u8, Vec<u8>)>,
}

/// A node of a snapshot, as far as reading needs it.
pub struct Node<'a> {
    pub path: &'a str,
    pub zarr_json: &'a [u8],
    /// An array's node id and manifests (and dimensions); `None` for a group.
    array: Option<(&'a [u8], Vector<'a>, usize)>,
}

impl Snapshot {
    fn parse(url: &str, id: String, file: Rc<(u8, Vec<u8>)>) -> Result<Snapshot> {
        let t = root(&file.1).map_err(|e| corrupt(url, e.message))?;
        let message = t.str(4).map_err(|e| corrupt(url, e.message))?.unwrap_or("").to_string();
        Ok(Snapshot { id, message, file })
    }

    /// The spec version of the file.
    pub fn spec(&self) -> u8 {
        self.file.0
    }

    fn nodes(&self) -> Result<Vector<'_>> {
        root(&self.file.1)?.vector(2, 4)?.ok_or_else(|| Error::new(ErrorCode::CorruptShard, "a snapshot without nodes"))
    }

    /// Every node, in path order.
    pub fn each(&self, mut f: impl FnMut(Node<'_>)) -> Result<()> {
        let nodes = self.nodes()?;
        for i in 0..nodes.len {
            f(node(nodes.table(i)?)?);
        }
        Ok(())
    }

    /// The node at `path` (`/`, `/a/b`).
    pub fn node(&self, path: &str) -> Result<Option<Node<'_>>> {
        let nodes = self.nodes()?;
        let path_of = |i: usize| -> Result<&str> { Ok(nodes.table(i)?.str(1)?.unwrap_or("")) };
        let Some(i) = search(nodes.len, &|i| Ok(path_of(i)?.as_bytes().cmp(path.as_bytes())))? else { return Ok(None) };
        node(nodes.table(i)?).map(Some)
    }

    fn bytes(&self) -> usize {
        self.file.1.len() + 64
    }
}

impl Node<'_> {
    pub fn is_array(&self) -> bool {
        self.array.is_some()
    }
}

fn node(t: Table<'_>) -> Result<Node<'_>> {
    let missing = || Error::new(ErrorCode::CorruptShard, "a snapshot node without its id, path or metadata");
    let path = t.str(1)?.ok_or_else(missing)?;
    let zarr_json = t.blob(2)?.ok_or_else(missing)?;
    let array = match t.u8(3, 0)? {
        1 => {
            let data = t.table(4)?.ok_or_else(missing)?;
            let id = t.bytes(0, 8)?.ok_or_else(missing)?;
            let manifests = data.vector(2, 4)?.ok_or_else(missing)?;
            let ndim = match data.vector(3, 4)? {
                Some(v2) => v2.len,
                None => data.vector(0, 16)?.map_or(0, |v| v.len),
            };
            Some((id, manifests, ndim))
        }
        _ => None,
    };
    Ok(Node { path, zarr_json, array })
}

/// A repository mounted as a store: objects under `prefix` are its nodes' objects.
#[derive(Debug)]
pub struct Repo {
    /// The repository's URL, its query (a signed URL's token) kept.
    pub url: String,
    /// The URL without the query, then `/`.
    pub prefix: String,
    query: String,
    pub version: Version,
    /// Its snapshot, once read: shared by the stores of every node opened in it.
    snapshot: RefCell<Option<Rc<Snapshot>>>,
    containers: RefCell<Option<Rc<Vec<Container>>>>,
    /// The last manifest used (id, flatbuffer), kept even when the cache cannot hold it.
    manifest: RefCell<Option<([u8; 12], Rc<(u8, Vec<u8>)>)>>,
    /// The caller's mapping of virtual chunk locations (`resolveUrl`).
    resolve: Option<Rc<dyn super::url::ResolveUrl>>,
    pub(super) last_whole: super::objects::LastWhole,
}

impl PartialEq for Repo {
    fn eq(&self, other: &Repo) -> bool {
        self.url == other.url && self.version == other.version
    }
}

impl Repo {
    pub fn new(url: &str, version: Version) -> Repo {
        let (base, query) = super::split_url(url);
        let (snapshot, containers, manifest) = (RefCell::new(None), RefCell::new(None), RefCell::new(None));
        let resolve = None;
        Repo {
            url: String::from(url),
            prefix: format!("{base}/"),
            query,
            version,
            snapshot,
            containers,
            manifest,
            resolve,
            last_whole: Default::default(),
        }
    }

    /// Virtual chunk locations mapped by `resolve` (the `resolveUrl` option) before they are read.
    pub fn with_resolve(mut self, resolve: Option<Rc<dyn super::url::ResolveUrl>>) -> Repo {
        self.resolve = resolve;
        self
    }

    /// The key of an object URL under this repository, unless it is one of the repository's own
    /// files (`repo`, `refs/…/ref.json`, `config.yaml`, `snapshots/`, `manifests/`, `chunks/`
    /// `<id>`), which are read as themselves.
    pub fn key<'a>(&self, url: &'a str) -> Option<&'a str> {
        let rest = url.strip_prefix(self.prefix.as_str())?;
        let key = rest.split(['?', '#']).next().unwrap_or(rest);
        let id = |k: &str| k.len() == 20 && k.bytes().all(|b| CROCKFORD.contains(&b));
        let own = match key.split_once('/') {
            None => key == "repo" || key == "config.yaml",
            Some(("refs", r)) => r.ends_with("/ref.json") || r.ends_with("/ref.json.deleted"),
            Some(("snapshots" | "manifests" | "chunks" | "transactions", k)) => id(k),
            _ => false,
        };
        (!own).then_some(key)
    }

    fn file_url(&self, path: &str) -> String {
        format!("{}{path}{}", self.prefix, self.query)
    }

    /// The Icechunk file at `path`: (spec version, flatbuffer), cached within the store's
    /// budget; absent: `NotFound` (nothing else here says it).
    async fn file<C: HttpClient>(
        &self,
        store: &impl Objects,
        c: &C,
        path: &str,
        kind: u8,
        limit: u64,
    ) -> Result<Rc<(u8, Vec<u8>)>> {
        let url = self.file_url(path);
        let work = || async {
            match store.read_object(c, &url, ByteRange::Full).await? {
                Some(r) => unpack(&url, &r.bytes, kind, limit),
                None => Err(Error::new(ErrorCode::NotFound, format!("{url}: not found"))),
            }
        };
        store.memo(c, &url, alloc::vec![KEY_FILE], |f: &(u8, Vec<u8>)| f.1.len() + 64, work).await
    }

    /// The snapshot this mount reads, found once (from the branch or tag) and kept.
    pub async fn snapshot<C: HttpClient>(&self, store: &impl Objects, c: &C) -> Result<Rc<Snapshot>> {
        if let Some(s) = self.snapshot.borrow().clone() {
            return Ok(s);
        }
        let id = self.resolve(store, c).await?;
        let path = format!("snapshots/{id}");
        let url = self.file_url(&path);
        let f = self.file(store, c, &path, SNAPSHOT, store.max_document()).await.map_err(|e| match e.code {
            ErrorCode::NotFound => Error::new(
                ErrorCode::NotFound,
                format!("{url}: not found (no snapshot {id} in the Icechunk repository {})", self.url),
            ),
            _ => e,
        })?;
        let s = Rc::new(Snapshot::parse(&url, id, f)?);
        *self.snapshot.borrow_mut() = Some(s.clone());
        Ok(s)
    }

    /// The snapshot id the version names: from the repo info file (spec v2), else from
    /// `refs/branch.<name>/ref.json` (spec v1).
    async fn resolve<C: HttpClient>(&self, store: &impl Objects, c: &C) -> Result<String> {
        let (kind, name) = match &self.version {
            Version::Snapshot(id) => return Ok(id.clone()),
            Version::Branch(b) => ("branch", b.as_str()),
            Version::Tag(t) => ("tag", t.as_str()),
        };
        let not_found = |what: String| Error::new(ErrorCode::NotFound, format!("{}: {what}", self.url));
        let repo = match self.file(store, c, "repo", REPO_INFO, store.max_document()).await {
            Err(e) if e.code == ErrorCode::NotFound => None,
            got => Some(got?),
        };
        if let Some(f) = repo {
            let url = self.file_url("repo");
            let bad = |e: Error| corrupt(&url, e.message);
            let t = root(&f.1).map_err(bad)?;
            self.containers.replace(Some(Rc::new(containers(t.blob(9).map_err(bad)?.unwrap_or(&[])))));
            let refs =
                t.vector(if kind == "tag" { 1 } else { 2 }, 4).map_err(bad)?.ok_or_else(|| corrupt(&url, "no refs"))?;
            let name_of = |i: usize| -> Result<&str> { Ok(refs.table(i)?.str(0)?.unwrap_or("")) };
            let found = search(refs.len, &|i| Ok(name_of(i)?.as_bytes().cmp(name.as_bytes()))).map_err(bad)?;
            let Some(i) = found else {
                return Err(not_found(format!("the Icechunk repository has no {kind} \"{name}\"")));
            };
            let index = refs.table(i).and_then(|r| r.u32(1, 0)).map_err(bad)? as usize;
            let snapshots = t.vector(4, 4).map_err(bad)?.ok_or_else(|| corrupt(&url, "no snapshots"))?;
            if index >= snapshots.len {
                return Err(corrupt(&url, format!("{kind} \"{name}\" points at snapshot {index} of {}", snapshots.len)));
            }
            let id = snapshots
                .table(index)
                .and_then(|s| s.bytes(0, 12))
                .map_err(bad)?
                .ok_or_else(|| corrupt(&url, "a snapshot without an id"))?;
            return Ok(base32(id));
        }
        // Spec v1: refs at fixed paths; a deleted tag leaves a marker beside its ref.
        let path = format!("refs/{kind}.{name}/ref.json");
        let url = self.file_url(&path);
        let doc = store.read_object(c, &url, ByteRange::Full).await?;
        let Some(doc) = doc else {
            let why = format!(
                "no Icechunk repository here (neither `repo`, spec v2, nor `{path}`, spec v1: no {kind} \"{name}\")"
            );
            return Err(not_found(why));
        };
        if kind == "tag"
            && store.read_object(c, &self.file_url(&format!("{path}.deleted")), ByteRange::Full).await?.is_some()
        {
            return Err(not_found(format!("the tag \"{name}\" was deleted")));
        }
        let id = match json::parse(&doc.bytes) {
            Ok(Value::Object(o)) => o.get("snapshot").and_then(Value::as_str).map(String::from),
            _ => None,
        };
        match id.map(Version::Snapshot).map(Version::checked) {
            Some(Ok(Version::Snapshot(id))) => Ok(id),
            _ => Err(corrupt(&url, "not a ref: {\"snapshot\": \"<id>\"}")),
        }
    }

    /// The repository's virtual chunk containers: from the repo info file (v2), or the
    /// `url_prefix` lines of `config.yaml` (v1).
    async fn containers<C: HttpClient>(&self, store: &impl Objects, c: &C) -> Result<Rc<Vec<Container>>> {
        if let Some(v) = self.containers.borrow().clone() {
            return Ok(v);
        }
        let repo = match self.file(store, c, "repo", REPO_INFO, store.max_document()).await {
            Err(e) if e.code == ErrorCode::NotFound => None,
            got => Some(got?),
        };
        let list = match repo {
            Some(f) => containers(
                root(&f.1)
                    .and_then(|t| t.blob(9))
                    .map_err(|e| corrupt(&self.file_url("repo"), e.message))?
                    .unwrap_or(&[]),
            ),
            None => match store.read_object(c, &self.file_url("config.yaml"), ByteRange::Full).await? {
                Some(doc) => yaml_containers(&doc.bytes),
                None => Vec::new(),
            },
        };
        let list = Rc::new(list);
        self.containers.replace(Some(list.clone()));
        Ok(list)
    }

    /// Where object `key` of this repository is.
    pub async fn place<C: HttpClient>(&self, store: &impl Objects, c: &C, key: &str) -> Result<Place> {
        let snap = self.snapshot(store, c).await?;
        if key == "zarr.json" || key.ends_with("/zarr.json") {
            let path = format!("/{}", key[..key.len() - 9].trim_end_matches('/'));
            let node = snap.node(&path).map_err(|e| self.corrupt_snapshot(&snap, e))?;
            return Ok(node.map_or(Place::Missing, |n| Place::Bytes(Rc::new(n.zarr_json.to_vec()))));
        }
        let Some((path, coords)) = chunk_key(key) else { return Ok(Place::Missing) };
        let node = snap.node(&format!("/{path}")).map_err(|e| self.corrupt_snapshot(&snap, e))?;
        let Some((node_id, manifests, ndim)) = node.and_then(|n| n.array) else { return Ok(Place::Missing) };
        if ndim != coords.len() {
            return Ok(Place::Missing);
        }
        let Some(manifest) = manifest_for(manifests, &coords).map_err(|e| self.corrupt_snapshot(&snap, e))? else {
            return Ok(Place::Missing);
        };
        let id = base32(&manifest);
        let path = format!("manifests/{id}");
        let url = self.file_url(&path);
        let f = self.manifest(store, c, manifest, &path).await.map_err(|e| match e.code {
            ErrorCode::NotFound => corrupt(&url, format!("the manifest snapshot {} names is missing", snap.id)),
            _ => e,
        })?;
        self.chunk(store, c, &f.1, node_id, &coords).await.map_err(|e| match e.code {
            ErrorCode::CorruptShard => corrupt(&url, e.message),
            _ => e,
        })
    }

    fn corrupt_snapshot(&self, snap: &Snapshot, e: Error) -> Error {
        corrupt(&self.file_url(&format!("snapshots/{}", snap.id)), e.message)
    }

    /// A manifest (spec version, flatbuffer): the last one used, or cached, or read.
    async fn manifest<C: HttpClient>(
        &self,
        store: &impl Objects,
        c: &C,
        id: [u8; 12],
        path: &str,
    ) -> Result<Rc<(u8, Vec<u8>)>> {
        if let Some((last, f)) = &*self.manifest.borrow() {
            if *last == id {
                return Ok(f.clone());
            }
        }
        let f = self.file(store, c, path, MANIFEST, store.max_body()).await?;
        *self.manifest.borrow_mut() = Some((id, f.clone()));
        Ok(f)
    }

    /// Where the chunk at `coords` of array `node` is, from its manifest `fb`.
    async fn chunk<C: HttpClient>(
        &self,
        store: &impl Objects,
        c: &C,
        fb: &[u8],
        node: &[u8],
        coords: &[u32],
    ) -> Result<Place> {
        let m = root(fb)?;
        let none = || Error::new(ErrorCode::CorruptShard, "a manifest without its arrays or refs");
        let arrays = m.vector(1, 4)?.ok_or_else(none)?;
        let id_of = |i: usize| -> Result<&[u8]> { arrays.table(i)?.bytes(0, 8)?.ok_or_else(none) };
        let Some(a) = search(arrays.len, &|i| Ok(id_of(i)?.cmp(node)))? else { return Ok(Place::Missing) };
        let refs = arrays.table(a)?.vector(1, 4)?.ok_or_else(none)?;
        let index_cmp = |i: usize| -> Result<Ordering> {
            let index = refs.table(i)?.vector(0, 4)?.ok_or_else(none)?;
            for (k, &want) in coords.iter().enumerate() {
                if k >= index.len {
                    return Ok(Ordering::Less);
                }
                match index.u32(k)?.cmp(&want) {
                    Ordering::Equal => {}
                    o => return Ok(o),
                }
            }
            Ok(index.len.cmp(&coords.len()))
        };
        let Some(i) = search(refs.len, &index_cmp)? else { return Ok(Place::Missing) };
        let r = refs.table(i)?;
        if let Some(bytes) = r.blob(1)? {
            return Ok(Place::Bytes(Rc::new(bytes.to_vec())));
        }
        let (offset, len) = (r.u64(2, 0)?, r.u64(3, 0)?);
        if len == 0 || offset.checked_add(len).is_none() {
            return Err(Error::new(ErrorCode::CorruptShard, format!("a chunk reference of {len} bytes at {offset}")));
        }
        if let Some(id) = r.bytes(4, 12)? {
            return Ok(Place::Range { url: self.file_url(&format!("chunks/{}", base32(id))), offset, len });
        }
        let location = match (r.str(5)?, r.blob(8)?) {
            (Some(l), _) => l.to_string(),
            (None, Some(packed)) => {
                let dict = m.blob(2)?.unwrap_or(&[]);
                let l = zstd::unzstd_with_dict(packed, dict, 1024).map_err(|e| {
                    Error::new(ErrorCode::CorruptShard, format!("a compressed location: {}", e.message))
                })?;
                String::from_utf8(l).map_err(|_| Error::new(ErrorCode::CorruptShard, "a location that is not UTF-8"))?
            }
            (None, None) => {
                return Err(Error::new(
                    ErrorCode::CorruptShard,
                    "a chunk reference that is neither inline, native nor virtual",
                ))
            }
        };
        self.virtual_place(store, c, &location, offset, len).await
    }

    /// A virtual chunk's object, where a container of the repository allows its location
    /// (as Icechunk decides: the location starts with the container's URL prefix, or is
    /// `vcc://<container name>/…`).
    async fn virtual_place<C: HttpClient>(
        &self,
        store: &impl Objects,
        c: &C,
        location: &str,
        offset: u64,
        len: u64,
    ) -> Result<Place> {
        let containers = self.containers(store, c).await?;
        let absolute = match location.strip_prefix("vcc://") {
            Some(rest) => {
                let (name, path) = rest.split_once('/').unwrap_or((rest, ""));
                containers.iter().find(|k| k.name.as_deref() == Some(name)).map(|k| format!("{}{path}", k.prefix))
            }
            None => containers.iter().any(|k| location.starts_with(k.prefix.as_str())).then(|| location.to_string()),
        };
        let Some(absolute) = absolute else {
            let mut prefixes = String::new();
            for k in containers.iter() {
                prefixes.push_str(if prefixes.is_empty() { "" } else { ", " });
                prefixes.push_str(&k.prefix);
            }
            if prefixes.is_empty() {
                prefixes.push_str("it declares none");
            }
            let why = format!(
                "the virtual chunk at \"{location}\" is in none of the repository's virtual chunk containers ({prefixes}): not read"
            );
            return Err(Error::new(ErrorCode::UnsupportedFormat, why));
        };
        let absolute = match &self.resolve {
            Some(r) => r.resolve(&absolute)?,
            None => absolute,
        };
        let url = match absolute.split_once("://").map(|(s, _)| s) {
            Some("http" | "https" | "s3" | "gs") => super::url::public_https(&absolute),
            Some("gcs") => super::url::public_https(&format!("gs{}", &absolute[3..])),
            _ => {
                let why =
                    format!("the virtual chunk at \"{absolute}\": only http(s)://, s3:// and gs:// locations are read");
                return Err(Error::new(ErrorCode::UnsupportedFormat, why));
            }
        };
        Ok(Place::Range { url, offset, len })
    }

    /// What a caller may want to know of the snapshot read (id and commit message), if read.
    pub fn read_snapshot(&self) -> Option<Rc<Snapshot>> {
        self.snapshot.borrow().clone()
    }

    /// Bytes the mount holds (the snapshot, the last manifest).
    pub fn held_bytes(&self) -> usize {
        self.snapshot.borrow().as_ref().map_or(0, |s| s.bytes())
            + self.manifest.borrow().as_ref().map_or(0, |m| m.1 .1.len())
    }
}

/// A chunk key as Icechunk parses it (`path/c/0/1`, `c/0`; `c`, `path/c` for zero dimensions): the node's
/// path and the chunk's coordinates.
fn chunk_key(key: &str) -> Option<(&str, Vec<u32>)> {
    // (A byte search: `rsplit_once` with a string pattern costs 1.7 KB of module.)
    let (path, coords) = match key.as_bytes().windows(3).rposition(|w| w == b"/c/") {
        Some(i) => (&key[..i], &key[i + 3..]),
        None if key == "c" => return Some(("", Vec::new())),
        None if key.ends_with("/c") => return Some((&key[..key.len() - 2], Vec::new())),
        None => ("", key.strip_prefix("c/")?),
    };
    let mut out = Vec::new();
    for part in coords.split('/') {
        let digit = |v: u32, d: u8| v.checked_mul(10)?.checked_add(u32::from(d.checked_sub(b'0').filter(|d| *d < 10)?));
        out.push(Some(part).filter(|p| !p.is_empty())?.bytes().try_fold(0u32, digit)?);
    }
    Some((path, out))
}

/// The id of the manifest holding the chunk at `coords`: the one whose extents contain it.
fn manifest_for(manifests: Vector<'_>, coords: &[u32]) -> Result<Option<[u8; 12]>> {
    for i in 0..manifests.len {
        let m = manifests.table(i)?;
        let Some(id) = m.bytes(0, 12)? else { continue };
        let extents = m.vector(1, 8)?.map_or(0, |v| v.len);
        let covers = match m.vector(1, 8)? {
            // No extents: every chunk.
            None => true,
            Some(_) if extents == 0 => true,
            Some(v) if v.len != coords.len() => false,
            Some(v) => coords.iter().enumerate().all(|(k, &x)| {
                let r = v.item(k, 8);
                let from = r.get(..4).and_then(|b| b.try_into().ok()).map_or(u32::MAX, u32::from_le_bytes);
                let to = r.get(4..8).and_then(|b| b.try_into().ok()).map_or(0, u32::from_le_bytes);
                from <= x && x < to
            }),
        };
        if covers {
            let mut out = [0u8; 12];
            out.copy_from_slice(id);
            return Ok(Some(out));
        }
    }
    Ok(None)
}

/// The virtual chunk containers of a repository's configuration (FlexBuffers, serde's
/// layout of `RepositoryConfig`): each entry of the map `virtual_chunk_containers`, its
/// `url_prefix` and `name`. Anything unreadable: none (their chunks are then refused).
pub fn containers(config: &[u8]) -> Vec<Container> {
    let mut out = Vec::new();
    let _ = flex::containers(config, &mut out);
    out.into_iter().map(|(name, prefix)| Container { name, prefix }).collect()
}

/// `url_prefix:` (and `name:`) lines of a spec-v1 `config.yaml`'s containers.
fn yaml_containers(doc: &[u8]) -> Vec<Container> {
    let text = String::from_utf8_lossy(doc);
    let mut out: Vec<Container> = Vec::new();
    let mut name = None;
    let value = |line: &str, key: &str| -> Option<String> {
        let v = line.trim().strip_prefix(key)?.trim();
        let v = match v.as_bytes() {
            [q @ (b'\'' | b'"'), .., e] if e == q => &v[1..v.len() - 1],
            _ => v,
        };
        (!v.is_empty() && v != "null" && v != "~").then(|| v.to_string())
    };
    for line in text.lines() {
        if let Some(n) = value(line, "name:") {
            name = Some(n);
        } else if let Some(p) = value(line, "url_prefix:") {
            out.push(Container { name: name.take(), prefix: p });
        }
    }
    out
}

/// Just enough of FlexBuffers to find the containers, every read bounds-checked.
mod flex {
    use alloc::string::String;
    use alloc::vec::Vec;

    const MAP: u8 = 9;
    const STRING: u8 = 5;
    const KEY: u8 = 4;

    /// A value: where it is, the width of the slot holding it, its type and own width.
    #[derive(Clone, Copy)]
    struct Ref {
        at: usize,
        parent: usize,
        kind: u8,
        width: usize,
    }

    fn uint(b: &[u8], at: usize, w: usize) -> Option<usize> {
        let s = b.get(at..at.checked_add(w)?)?;
        let v = s.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x));
        usize::try_from(v).ok()
    }

    fn target(b: &[u8], r: Ref) -> Option<usize> {
        r.at.checked_sub(uint(b, r.at, r.parent)?)
    }

    fn text(b: &[u8], r: Ref) -> Option<String> {
        let t = target(b, r)?;
        let n = uint(b, t.checked_sub(r.width)?, r.width)?;
        Some(String::from_utf8_lossy(b.get(t..t.checked_add(n)?)?).into_owned())
    }

    fn key(b: &[u8], at: usize) -> Option<&[u8]> {
        let rest = b.get(at..)?;
        rest.get(..rest.iter().position(|&c| c == 0)?)
    }

    /// A map's entry named `name`.
    fn get(b: &[u8], map: Ref, name: &str) -> Option<Ref> {
        if map.kind != MAP {
            return None;
        }
        let (t, w) = (target(b, map)?, map.width);
        let n = uint(b, t.checked_sub(w)?, w)?;
        let keys_at = t.checked_sub(3 * w)?;
        let keys = keys_at.checked_sub(uint(b, keys_at, w)?)?;
        let kw = uint(b, t.checked_sub(2 * w)?, w)?;
        if n > b.len() || !matches!(kw, 1 | 2 | 4 | 8) {
            return None;
        }
        for i in 0..n {
            let slot = keys.checked_add(i * kw)?;
            let k = slot.checked_sub(uint(b, slot, kw)?)?;
            if key(b, k)? == name.as_bytes() {
                return entry(b, t, w, n, i);
            }
        }
        None
    }

    /// Element `i` of the vector at `t` (`n` elements of `w` bytes, their types after them).
    fn entry(b: &[u8], t: usize, w: usize, n: usize, i: usize) -> Option<Ref> {
        let packed = *b.get(t.checked_add(n.checked_mul(w)?)?.checked_add(i)?)?;
        Some(Ref { at: t.checked_add(i * w)?, parent: w, kind: packed >> 2, width: 1 << (packed & 3) })
    }

    /// (name, URL prefix) of each container.
    pub fn containers(b: &[u8], out: &mut Vec<(Option<String>, String)>) -> Option<()> {
        let (&w, rest) = b.split_last()?;
        let (&packed, _) = rest.split_last()?;
        let w = usize::from(w);
        let root = Ref { at: b.len().checked_sub(2 + w)?, parent: w, kind: packed >> 2, width: 1 << (packed & 3) };
        let all = get(b, root, "virtual_chunk_containers")?;
        if all.kind != MAP {
            return None;
        }
        let (t, w) = (target(b, all)?, all.width);
        let n = uint(b, t.checked_sub(w)?, w)?;
        for i in 0..n.min(b.len()) {
            let c = entry(b, t, w, n, i)?;
            let Some(p) = get(b, c, "url_prefix").filter(|r| r.kind == STRING || r.kind == KEY) else { continue };
            let name = get(b, c, "name").filter(|r| r.kind == STRING).and_then(|r| text(b, r));
            out.push((name, text(b, p)?));
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn ids_and_versions() {
        // The spec's example: the first snapshot's id.
        let first = [0x0b, 0x1c, 0xc8, 0xd6, 0x78, 0x75, 0x80, 0xf0, 0xe3, 0x3a, 0x65, 0x34];
        assert_eq!(base32(&first), "1CECHNKREP0F1RSTCMT0");
        assert_eq!(Version::parse("branch.main").unwrap(), Version::Branch("main".into()));
        assert_eq!(Version::parse("tag.v1").unwrap(), Version::Tag("v1".into()));
        assert_eq!(Version::parse("1cechnkrep0f1rstcmt0").unwrap(), Version::Snapshot("1CECHNKREP0F1RSTCMT0".into()));
        assert!(Version::parse("branch.../x").is_err());
        assert!(Version::parse("../../etc").is_err());
        assert!(Version::Tag("a/b".into()).checked().is_err());
    }

    #[test]
    fn chunk_keys() {
        assert_eq!(chunk_key("a/b/c/0/12"), Some(("a/b", vec![0, 12])));
        assert_eq!(chunk_key("a/c/b/c/3"), Some(("a/c/b", vec![3])));
        assert_eq!(chunk_key("c/4/5"), Some(("", vec![4, 5])));
        assert_eq!(chunk_key("c"), Some(("", vec![])));
        assert_eq!(chunk_key("g/zero_d/c"), Some(("g/zero_d", vec![])));
        assert_eq!(chunk_key("a/c/4294967295"), Some(("a", vec![u32::MAX])));
        for bad in ["a/c/4294967296", "a/c/-1", "a/c/1//2", "a/c/", "a/.zarray", "a/c/x", "cc/0"] {
            assert_eq!(chunk_key(bad), None, "{bad}");
        }
    }

    #[test]
    fn own_files_are_not_node_keys() {
        let r = Repo::new("https://h/r.icechunk?sig=1", Version::Branch("main".into()));
        assert_eq!(r.key("https://h/r.icechunk/a/zarr.json?sig=1"), Some("a/zarr.json"));
        assert_eq!(r.key("https://h/r.icechunk/chunks/c/0"), Some("chunks/c/0"));
        assert_eq!(r.key("https://h/r.icechunk/chunks/1CECHNKREP0F1RSTCMT0?sig=1"), None);
        assert_eq!(r.key("https://h/r.icechunk/repo"), None);
        assert_eq!(r.key("https://h/r.icechunk/refs/branch.main/ref.json"), None);
        assert_eq!(r.key("https://h/other/zarr.json"), None);
    }

    #[test]
    fn headers_are_checked() {
        let mut f = MAGIC.to_vec();
        f.extend_from_slice(&[b' '; 24]);
        f.extend_from_slice(&[2, SNAPSHOT, 0, 1, 2, 3]);
        assert_eq!(unpack("u", &f, SNAPSHOT, 100).unwrap(), (2, alloc::vec![1, 2, 3]));
        let e = unpack("u", &f, MANIFEST, 100).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedFormat);
        assert!(e.message.contains("file type 1 (a snapshot)"), "{}", e.message);
        f[36] = 3;
        assert!(unpack("u", &f, SNAPSHOT, 100).unwrap_err().message.contains("spec version 3"));
        f[36] = 2;
        f[38] = 7;
        assert!(unpack("u", &f, SNAPSHOT, 100).unwrap_err().message.contains("compression 7"));
        assert_eq!(unpack("u", &f[..20], SNAPSHOT, 100).unwrap_err().code, ErrorCode::CorruptShard);
        f[38] = 0;
        assert_eq!(unpack("u", &f, SNAPSHOT, 2).unwrap_err().code, ErrorCode::TooLarge);
    }

    #[test]
    fn yaml_containers_of_spec_v1() {
        let doc = b"virtual_chunk_containers:\n  s3://b/:\n    name: ext\n    url_prefix: s3://b/\n    store: !s3_compatible\n      region: us-east-1\n  gs://c/:\n    name: null\n    url_prefix: 'gs://c/'\n";
        let c = yaml_containers(doc);
        assert_eq!(
            c,
            [
                Container { name: Some("ext".into()), prefix: "s3://b/".into() },
                Container { name: None, prefix: "gs://c/".into() }
            ]
        );
    }
}

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
mod containers;
pub mod flatbuf;
mod manifest;
mod snapshot;
mod version;

pub use containers::{containers, Container as VirtualContainer};
pub use snapshot::{unpack, Node, Snapshot};
pub use version::{base32, Version};

use super::kind::{Container, Kind, Mounting, ResolveUrl};
use super::place::Place;
use crate::core::error::{Error, ErrorCode, Result};
use crate::core::json::{self, Value};
use crate::core::transport::{ByteRange, HttpClient, Objects};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use containers::Container as Virtual;
use core::cell::RefCell;
use flatbuf::root;
use manifest::{chunk_key, manifest_for, ChunkRef};
use snapshot::{corrupt, KEY_FILE, MANIFEST, REPO_INFO, SNAPSHOT};
use version::CROCKFORD;

/// A repository as a layer, at one version: the objects under its URL and `/` are its nodes'.
pub struct Repo {
    /// The repository's URL, its query (a signed URL's token) kept.
    url: String,
    /// The URL without the query, then `/`.
    prefix: String,
    query: String,
    version: Version,
    /// Its snapshot, once read: shared by the stores of every node opened in it (stamped with
    /// the version of the file its branch or tag was resolved from: resolved again when that
    /// changed, under `recheck` after a time).
    snapshot: crate::core::store::Kept<Rc<Snapshot>>,
    /// That file (`repo`, or spec v1's `refs/…/ref.json`), once the version was resolved.
    resolved_from: RefCell<Option<String>>,
    containers: RefCell<Option<Rc<Vec<Virtual>>>>,
    /// The last manifest used (id, flatbuffer), kept even when the cache cannot hold it.
    manifest: RefCell<Option<([u8; 12], Rc<(u8, Vec<u8>)>)>>,
    /// The caller's mapping of virtual chunk locations (`resolveUrl`).
    resolve: Option<Rc<dyn ResolveUrl>>,
}

/// The version settings name (`branch`, `tag`, `snapshot`: at most one; none: branch `main`).
fn version_of(settings: &[(String, String)]) -> Result<Version> {
    let mut found = None;
    for (name, value) in settings {
        let v = match name.as_str() {
            "branch" => Version::Branch(value.clone()),
            "tag" => Version::Tag(value.clone()),
            "snapshot" => Version::Snapshot(value.clone()),
            _ => continue,
        };
        if found.replace(v).is_some() {
            return Err(Error::new(ErrorCode::InvalidSelection, "give one of branch, tag and snapshot, not several"));
        }
    }
    found.unwrap_or_else(|| Version::Branch(String::from("main"))).checked()
}

impl Kind for Repo {
    const NAME: &'static str = "icechunk";
    const OPTIONS: &'static [&'static str] = &["branch", "tag", "snapshot"];
    const TS_OPTIONS: &'static str = "  /** Icechunk: the branch to read (default `main`). */
  branch?: string;
  /** Icechunk: the tag to read. */
  tag?: string;
  /** Icechunk: the snapshot to read, by id (20 characters of Crockford base 32). */
  snapshot?: string;
";

    /// `@branch.main/path`, `@tag.v1/path`, `@<snapshot id>/path`, or a path (branch `main`).
    fn stage(arg: &str) -> Result<(Vec<(String, String)>, String)> {
        let Some(at) = arg.strip_prefix('@') else { return Ok((Vec::new(), String::from(arg))) };
        let (version, path) = at.split_once('/').unwrap_or((at, ""));
        let setting = match Version::parse(version)? {
            Version::Branch(b) => ("branch", b),
            Version::Tag(t) => ("tag", t),
            Version::Snapshot(s) => ("snapshot", s),
        };
        Ok((alloc::vec![(String::from(setting.0), setting.1)], String::from(path)))
    }

    fn new(url: &str, how: &Mounting) -> Result<Option<Self>> {
        let (base, query) = crate::core::urls::split_url(url);
        Ok(Some(Repo {
            url: String::from(url),
            prefix: format!("{base}/"),
            query,
            version: version_of(&how.settings)?,
            snapshot: Default::default(),
            resolved_from: RefCell::new(None),
            containers: RefCell::new(None),
            manifest: RefCell::new(None),
            resolve: how.resolve.clone(),
        }))
    }

    fn url(&self) -> &str {
        &self.url
    }

    /// The file its branch or tag was resolved from (a snapshot id names an immutable one).
    fn version_url(&self) -> Option<String> {
        match self.version {
            Version::Snapshot(_) => None,
            _ => Some(self.resolved_from.borrow().clone().unwrap_or_else(|| self.file_url("repo"))),
        }
    }

    /// The key of an object URL under this repository, unless it is one of the repository's own
    /// files (`repo`, `refs/…/ref.json`, `config.yaml`, `snapshots/`, `manifests/`, `chunks/`
    /// `<id>`), which are read as themselves.
    fn key<'a>(&self, url: &'a str) -> Option<&'a str> {
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

    async fn place<S: Objects, C: HttpClient>(&self, below: &S, c: &C, key: &str) -> Result<Place> {
        Repo::place(self, below, c, key).await
    }

    /// The snapshot read: its id, and its commit message.
    async fn describe<S: Objects, C: HttpClient>(&self, below: &S, c: &C) -> Container {
        let snap = self.snapshot(below, c).await.ok();
        let (comment, version) = snap.map(|s| (s.message.clone(), s.id.clone())).unwrap_or_default();
        Container { kind: Self::NAME, url: self.url.clone(), comment, version }
    }

    /// `@<snapshot id>/path` once the snapshot is read (a rebuilt array reads what it read).
    fn stage_text(&self, path: &str) -> String {
        let version = match self.read_snapshot() {
            Some(s) => format!("@{}", s.id),
            None => self.version.spelled(),
        };
        match path.trim_matches('/') {
            "" => version,
            p => format!("{version}/{p}"),
        }
    }

    /// The same repository at the same version (a snapshot id: the one the other read).
    fn same(&self, url: &str, how: &Mounting) -> bool {
        let Ok(version) = version_of(&how.settings) else { return false };
        let same = match &version {
            Version::Snapshot(id) => self.read_snapshot().is_some_and(|s| s.id == *id) || self.version == version,
            v => *v == self.version,
        };
        self.url == url && same
    }

    /// The direct children of the group at `path`: its snapshot lists them.
    fn children(&self, path: &str) -> Option<Vec<(String, bool)>> {
        let snap = self.read_snapshot()?;
        let prefix = format!("/{}/", path.trim_matches('/')).replace("//", "/");
        let mut out = Vec::new();
        let _ = snap.each(|n| {
            if let Some(name) = n.path.strip_prefix(prefix.as_str()).filter(|r| !r.is_empty() && !r.contains('/')) {
                out.push((String::from(name), n.is_array()));
            }
        });
        Some(out)
    }

    fn format(&self) -> Option<&'static str> {
        Some("zarr3")
    }
}

impl Repo {
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
            match store.read(c, &url, ByteRange::Full).await? {
                Some(r) => unpack(&url, &r.bytes, kind, limit),
                None => Err(Error::new(ErrorCode::NotFound, format!("{url}: not found"))),
            }
        };
        store.memo(c, &url, alloc::vec![KEY_FILE], |f: &(u8, Vec<u8>)| f.1.len() + 64, work).await
    }

    /// The snapshot this mount reads, found once (from the branch or tag) and kept.
    pub async fn snapshot<C: HttpClient>(&self, store: &impl Objects, c: &C) -> Result<Rc<Snapshot>> {
        // Snapshots, manifests and chunks are named by their content: they never change.
        for dir in ["snapshots/", "manifests/", "chunks/"] {
            store.immutable(&format!("{}{dir}", self.prefix));
        }
        let from = self.resolved_from.borrow().clone();
        let stamp = from.as_deref().map_or(0, |u| store.stamp(u));
        if let Some(s) = self.snapshot.get(stamp) {
            return Ok(s);
        }
        let id = self.resolve(store, c).await?;
        let from = self.resolved_from.borrow().clone();
        let stamp = from.as_deref().map_or(0, |u| store.stamp(u));
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
        self.snapshot.set(stamp, from.as_deref().map_or(0, |u| store.stamp(u)), s.clone());
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
            self.resolved_from.replace(Some(url.clone()));
            let bad = |e: Error| corrupt(&url, e.message);
            let t = root(&f.1).map_err(bad)?;
            self.containers.replace(Some(Rc::new(containers(t.blob(9).map_err(bad)?.unwrap_or(&[])))));
            let refs =
                t.vector(if kind == "tag" { 1 } else { 2 }, 4).map_err(bad)?.ok_or_else(|| corrupt(&url, "no refs"))?;
            let name_of = |i: usize| -> Result<&str> { Ok(refs.table(i)?.str(0)?.unwrap_or("")) };
            let found = crate::core::nd::search(refs.len, &|i| Ok(name_of(i)?.as_bytes().cmp(name.as_bytes()))).map_err(bad)?;
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
        self.resolved_from.replace(Some(url.clone()));
        let doc = store.read(c, &url, ByteRange::Full).await?;
        let Some(doc) = doc else {
            let why = format!(
                "no Icechunk repository here (neither `repo`, spec v2, nor `{path}`, spec v1: no {kind} \"{name}\")"
            );
            return Err(not_found(why));
        };
        if kind == "tag"
            && store.read(c, &self.file_url(&format!("{path}.deleted")), ByteRange::Full).await?.is_some()
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
    async fn containers<C: HttpClient>(&self, store: &impl Objects, c: &C) -> Result<Rc<Vec<Virtual>>> {
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
            None => match store.read(c, &self.file_url("config.yaml"), ByteRange::Full).await? {
                Some(doc) => containers::yaml_containers(&doc.bytes),
                None => Vec::new(),
            },
        };
        let list = Rc::new(list);
        self.containers.replace(Some(list.clone()));
        Ok(list)
    }

    /// Where object `key` of this repository is.
    async fn place<C: HttpClient>(&self, store: &impl Objects, c: &C, key: &str) -> Result<Place> {
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
        let found = manifest::chunk_ref(&f.1, node_id, &coords).map_err(|e| match e.code {
            ErrorCode::CorruptShard => corrupt(&url, e.message),
            _ => e,
        })?;
        Ok(match found {
            ChunkRef::Missing => Place::Missing,
            ChunkRef::Inline(bytes) => Place::Bytes(Rc::new(bytes)),
            ChunkRef::Native { id, offset, len } => Place::Range { url: self.file_url(&format!("chunks/{id}")), offset, len },
            ChunkRef::Virtual { location, offset, len } => return self.virtual_place(store, c, &location, offset, len).await,
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
            Some("http" | "https" | "s3" | "gs") => crate::core::urls::public_https(&absolute),
            Some("gcs") => crate::core::urls::public_https(&format!("gs{}", &absolute[3..])),
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
        self.snapshot.any()
    }
}

/// A chunk key as Icechunk parses it (`path/c/0/1`, `c/0`; `c`, `path/c` for zero dimensions): the node's
#[cfg(test)]
mod tests {
    use super::*;
    use super::snapshot::{MAGIC, MANIFEST};
    use alloc::vec;

    #[test]
    fn ids_and_versions() {
        // The spec's example: the first snapshot's id.
        let first = [0x0b, 0x1c, 0xc8, 0xd6, 0x78, 0x75, 0x80, 0xf0, 0xe3, 0x3a, 0x65, 0x34];
        assert_eq!(base32(&first), "1CECHNKREP0F1RSTCMT0");
        assert_eq!(Version::parse("branch.main").unwrap(), Version::Branch("main".into()));
        assert_eq!(Version::parse("tag.v1").unwrap(), Version::Tag("v1".into()));
        assert_eq!(Version::parse("1cechnkrep0f1rstcmt0").unwrap(), Version::Snapshot("1CECHNKREP0F1RSTCMT0".into()));
        for (bad, what) in [(Version::parse("branch.../x"), "branch.../x"), (Version::parse("../../etc"), "../../etc"), (Version::Tag("a/b".into()).checked(), "a/b")] {
            let e = bad.unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidSelection, "{what}: {e}");
            assert!(e.message.contains(what), "{what}: {e}");
        }
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
        let r = Repo::new("https://h/r.icechunk?sig=1", &Mounting::default()).unwrap().unwrap();
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
        let c = containers::yaml_containers(doc);
        assert_eq!(
            c,
            [
                Virtual { name: Some("ext".into()), prefix: "s3://b/".into() },
                Virtual { name: None, prefix: "gs://c/".into() }
            ]
        );
    }
}


//! Icechunk files read whole: the header checked ([`unpack`]), a snapshot's nodes by path.
use super::flatbuf::{root, Table, Vector};
use crate::core::error::{Error, ErrorCode, Result};
use crate::core::zstd;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;


pub(super) const MAGIC: &[u8] = "ICE🧊CHUNK".as_bytes();
/// Magic, implementation name (24 bytes), spec version, file type, compression.
pub(super) const HEADER: usize = 39;
pub(super) const SNAPSHOT: u8 = 1;
pub(super) const MANIFEST: u8 = 2;
pub(super) const REPO_INFO: u8 = 6;

/// Memo keys of this store's derived values (the store keys them by URL too).
pub(super) const KEY_FILE: u64 = 0x6963_6500;

pub(super) fn corrupt(url: &str, why: impl core::fmt::Display) -> Error {
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
    pub(super) array: Option<(&'a [u8], Vector<'a>, usize)>,
}

impl Snapshot {
    pub(super) fn parse(url: &str, id: String, file: Rc<(u8, Vec<u8>)>) -> Result<Snapshot> {
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
        let Some(i) = crate::core::nd::search(nodes.len, &|i| Ok(path_of(i)?.as_bytes().cmp(path.as_bytes())))? else { return Ok(None) };
        node(nodes.table(i)?).map(Some)
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

//! What a store kind is: a folder of its own under `store/` implementing [`Kind`], and one line
//! in [`super::registry`]. A kind knows its container's format (its parser), how a URL or the
//! first bytes show one (its detection), its pipeline stage (`|name:arg`), its settings (the
//! options it takes), and what rebuilds it without a request (its stage text).
use super::place::Place;
use crate::core::error::Result;
use crate::core::transport::{HttpClient, Objects};
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

/// A kind's settings by name (Icechunk's `branch`), from a pipeline stage or the open options.
pub type Settings = Vec<(String, String)>;

/// The caller's resolver of the URLs a store names (the `resolveUrl` option): a reference file's
/// targets, an Icechunk repository's virtual chunks.
pub trait ResolveUrl: crate::core::error::TestDebug {
    /// The URL to fetch for `url` (templates expanded, a relative one already resolved against
    /// the file naming it); returning `url` keeps it.
    fn resolve(&self, url: &str) -> Result<String>;
}

#[cfg(not(test))]
impl core::fmt::Debug for dyn ResolveUrl + '_ {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("resolveUrl")
    }
}

/// How a layer is being mounted.
#[derive(Clone, Default)]
pub struct Mounting {
    pub settings: Settings,
    /// Named by the caller (a stage, the `store` option, a setting): the object must be one.
    pub forced: bool,
    pub resolve: Option<Rc<dyn ResolveUrl>>,
    /// The decoders kept outside the module, for the kinds that read through one.
    pub decoders: Option<Rc<dyn crate::core::external::Decoders>>,
    /// The object's first bytes, read to tell its kind (a `.nc` file: NetCDF-3 or HDF5).
    pub head: Option<Head>,
}

/// An object's first bytes read while mounting (to tell its kind by them), handed to the layer:
/// (the version stamp they were read under, the bytes from offset 0, the object's size).
pub type Head = Rc<(u64, Vec<u8>, Option<u64>)>;

/// What holds a node, as the API reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Container {
    /// The kind's name (`"zip"`, …).
    pub kind: &'static str,
    pub url: String,
    /// A zip archive's comment (an `.ozx` names its OME version there); an Icechunk snapshot's
    /// commit message.
    pub comment: String,
    /// The version read, as the kind names it (an Icechunk snapshot's id), or empty.
    pub version: String,
}

pub trait Kind: Sized {
    /// The kind's name: the `store` option's value, the pipeline stage (`|name:`), the
    /// container's `kind`.
    const NAME: &'static str;
    /// Open options (besides `store`) that name this kind and set it up (Icechunk's `branch`).
    const OPTIONS: &'static [&'static str] = &[];
    /// Other names the `store` option knows it by.
    const ALIASES: &'static [&'static str] = &[];
    /// Whether a pipeline stage (`|name:`) names it.
    const STAGE: bool = true;
    /// The TypeScript declaration of [`Kind::OPTIONS`] (members of `WasmStoreOptions`, with their
    /// documentation): the wrapper's `OpenOptions` take them from the contract.
    const TS_OPTIONS: &'static str = "";

    /// The bytes at its start this kind reads first from an object its URL names (0: not
    /// certain), and the decoder modules it reads through (space-separated, or ""): the wrapper asks for both
    /// while the module compiles.
    const FIRST_READ: u64 = 0;
    const READER: &'static str = "";

    /// The extensions that name an object of this kind (lower case, with the dot).
    const EXTENSIONS: &'static [&'static str] = &[];

    /// Whether a URL names an object of this kind by its look alone: its path (before the query,
    /// in any case) ends with one of [`Kind::EXTENSIONS`].
    fn named(url: &str) -> bool {
        let base = url.split(['?', '#']).next().unwrap_or(url).trim_end_matches('/').to_ascii_lowercase();
        Self::EXTENSIONS.iter().any(|e| base.ends_with(e))
    }

    /// Whether an object's first bytes show it is one.
    fn sniff(_head: &[u8]) -> bool {
        false
    }

    /// A stage's argument (`|zip:inner/path`): this kind's settings, and the path inside.
    fn stage(arg: &str) -> Result<(Settings, String)> {
        Ok((Settings::new(), String::from(arg)))
    }

    /// The layer over the object at `url` (its query kept), read lazily: no request. `None`:
    /// the kind lays nothing over the object (the plain object tree).
    fn new(url: &str, how: &Mounting) -> Result<Option<Self>>;

    /// The layer over the object at `url` when it is one: detected by its document where the
    /// URL alone does not tell (`None`: not one, and nothing else is read). Forced: it must be.
    async fn detect<S: Objects, C: HttpClient>(below: &S, c: &C, url: &str, how: &Mounting) -> Result<Option<Self>> {
        let _ = (below, c);
        Self::new(url, how)
    }

    /// The object's URL, its query kept.
    fn url(&self) -> &str;

    /// The object whose version is what this layer reads (checked again under `recheck` after
    /// a time): the layer's own, or none (an Icechunk snapshot, immutable).
    fn version_url(&self) -> Option<String> {
        Some(String::from(self.url()))
    }

    /// The key of an object URL inside this layer (its query cut), if it is inside.
    fn key<'a>(&self, url: &'a str) -> Option<&'a str> {
        key_under(self.url(), url)
    }

    /// Where the object of key `key` is, read through `below`.
    async fn place<S: Objects, C: HttpClient>(&self, below: &S, c: &C, key: &str) -> Result<Place>;

    /// What the API reports of it, from what is read already (or read now through `below`).
    async fn describe<S: Objects, C: HttpClient>(&self, below: &S, c: &C) -> Container;

    /// The text after `|name:` that opens the node at `path` of this layer as it is read now
    /// (Icechunk: `@<snapshot id>/path`).
    fn stage_text(&self, path: &str) -> String {
        String::from(path)
    }

    /// Whether this layer, opened again at `url` with `how`, would be this one (a child of a
    /// group opened in it reads through it: its directory or index read once for all).
    fn same(&self, url: &str, how: &Mounting) -> bool {
        self.url() == url && how.settings.is_empty()
    }

    /// The direct children of the node at `path` (name, whether an array) when the layer lists
    /// them (a repository's snapshot, a reference file's keys).
    fn children(&self, _path: &str) -> Option<Vec<(String, bool)>> {
        None
    }

    /// The decoders kept outside the module that reading its keys needs (a Parquet reference
    /// set's record files: `parquet`): loaded before its arrays are read.
    fn decoders(&self) -> &'static [&'static str] {
        &[]
    }

    /// For a `NotFound` inside it: what it does hold (an archive's nodes).
    fn hint(&self) -> Option<String> {
        None
    }

    /// The format of every node inside it, when the kind fixes one (Icechunk: `zarr3`).
    fn format(&self) -> Option<&'static str> {
        None
    }

    /// Whether its keys share objects (a reference file's chunks are ranges of a few targets, a
    /// TIFF's or HDF5 file's of one): the chunks of an array then read together whatever key
    /// holds them (located in parallel), so that neighbours in one object merge.
    fn keys_share_objects(&self) -> bool {
        false
    }
}

/// The key of `url` under the object at `container` (`container/` + key; queries cut).
pub fn key_under<'a>(container: &str, url: &'a str) -> Option<&'a str> {
    let base = container.split(['?', '#']).next().unwrap_or(container).trim_end_matches('/');
    let rest = url.strip_prefix(base)?.strip_prefix('/')?;
    Some(rest.split(['?', '#']).next().unwrap_or(rest))
}

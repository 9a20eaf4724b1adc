//! Opening a node (array or group) of any supported format, detecting the format when the
//! caller does not name it: the metadata requests, in the order that costs least.
//!
//! May import: every layer below (`error`, `nd`, `json`, `urls`, `transport`, `store`, `metadata`, `codec`, `shard`,
//! `layout`, `read`).
use super::codec::{external, Decoders};
use super::error::{Error, ErrorCode, Result};
use super::json::{self, Raw};
use super::metadata::v3::Node;
use super::metadata::{consolidated, draft, precomputed, v2, Documents, Format};
use super::read::Array;
use super::store::{self, pipeline, Container, Known, Opening, ResolveUrl, Settings, Stack, Store};
use super::transport::{Config, HttpClient, Transport};
use super::urls::{join, join_paths, split_url};
use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use futures_util::future::join as both;

#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// `None`: detect.
    pub format: Option<Format>,
    /// The node's path under the URL (the store root for the draft layout).
    pub path: String,
    pub config: Config,
    /// Milliseconds from some origin, to time decoding (the core has no clock of its own).
    pub clock: Option<fn() -> f64>,
    /// Which scale of a Neuroglancer precomputed volume: an index or a scale key (default 0).
    pub scale: Option<String>,
    /// The most bytes a metadata document may have.
    pub max_metadata: usize,
    /// The most bytes one decoded chunk, fill or region may take.
    pub max_decoded: usize,
    /// The decoders kept outside this module (`external::NAMES`): by default
    /// those linked into this crate (feature `native-decoders`), if any.
    pub decoders: Option<Rc<dyn Decoders>>,
    /// What holds the node: a store kind's name (see `store::registry`); `None`: told by the
    /// URL (its pipeline stages, its extension, its document).
    pub store: Option<String>,
    /// The options store kinds take (see `registry::OPTIONS`), by name.
    pub store_settings: Settings,
    /// Documents known without a request: a parent group's consolidated metadata.
    pub known: Option<Rc<Known>>,
    /// The layers a parent group was read through (each read once for all).
    pub stack: Option<Stack>,
    /// The caller's mapping of the URLs a store names (`resolveUrl`).
    pub resolve_url: Option<Rc<dyn ResolveUrl>>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            format: None,
            path: String::new(),
            config: Config::default(),
            clock: None,
            scale: None,
            max_metadata: crate::core::error::MAX_METADATA,
            max_decoded: crate::core::error::MAX_DECODED,
            decoders: external::linked(),
            store: None,
            store_settings: Settings::new(),
            known: None,
            stack: None,
            resolve_url: None,
        }
    }
}

pub struct Group {
    pub format: Format,
    /// The URL that opens the group's store again (a store root for the draft layout; a
    /// pipeline when layers hold it), and the node's path under it.
    pub root: String,
    pub path: String,
    /// The group's URL, as reported (a pipeline when layers hold it).
    pub url: String,
    /// JSON text of an object.
    pub attributes: Raw,
    /// The documents of its members its consolidated metadata holds (or its parent's did).
    pub known: Option<Rc<Known>>,
    /// Its children as that metadata lists them: (name, whether an array).
    pub children: Vec<(String, bool)>,
    /// What holds it (the innermost layer), if not plain objects.
    pub container: Option<Container>,
    /// The layers its children open through (each read once for all).
    pub stack: Option<Stack>,
}

impl Group {
    /// The group's own URL.
    pub fn url(&self) -> String {
        self.url.clone()
    }
}

pub enum Opened {
    Array(Box<Array>),
    Group(Group),
}

/// Where a node lives: the store root and the node's path, with the URL's query kept apart.
struct Location {
    root: String,
    path: String,
    query: String,
}

impl Location {
    fn new(url: &str, path: &str) -> Location {
        let (root, query) = split_url(url);
        Location { root, path: String::from(path.trim_matches('/')), query }
    }
    fn node(&self) -> String {
        join(&self.root, &self.path)
    }
    /// URL of `name` inside the node.
    fn file(&self, name: &str) -> String {
        format!("{}/{name}{}", self.node(), self.query)
    }
}

/// Open the node at `url` (+ `options.path`).
pub async fn open<C: HttpClient>(c: &C, url: &str, options: OpenOptions) -> Result<Opened> {
    let (clock, max_decoded, decoders) = (options.clock, options.max_decoded, options.decoders.clone());
    let mut options = options;
    options.config.max_body = options.config.max_body.min(max_decoded as u64);
    Ok(match detect(c, url, options).await? {
        Opened::Array(a) => {
            Opened::Array(Box::new(a.with_clock(clock).with_max_decoded(max_decoded).with_decoders(decoders)))
        }
        group => group,
    })
}

/// The array an earlier [`open`] gave, rebuilt from its [`Array::state`] without a request
/// (the binding's way back after the module was replaced); caches and counters start afresh.
pub fn reopen(state: &str, options: OpenOptions) -> Result<Array> {
    let config = Config {
        max_document: options.max_metadata as u64,
        max_body: options.config.max_body.min(options.max_decoded as u64),
        ..options.config
    };
    let how = crate::core::store::Mounting { resolve: options.resolve_url.clone(), decoders: options.decoders.clone(), ..Default::default() };
    let a = Array::from_state(state, config, &how)?;
    Ok(a.with_clock(options.clock).with_max_decoded(options.max_decoded).with_decoders(options.decoders))
}

/// The first request that opening `url` (+ `path`) without a named format makes, which the
/// wrapper sends while the module still loads: (URL, `Range` header or empty, the decoder module
/// the store kind reads through or empty). A node's `zarr.json`; for a file a store kind names by
/// its extension (`.tif`, `.nc`), the bytes at its start that kind reads first. Empty when not
/// certain from the URL alone: a pipeline (`|`), a scheme other than HTTP(S) (`gs://`,
/// `zarr3://`, …), an extension whose kind reads otherwise (`.zip`: its end and start at once).
pub fn first_request(url: &str, path: &str) -> (String, String, &'static str) {
    let none = (String::new(), String::new(), "");
    let plain = url.starts_with("https://") || url.starts_with("http://");
    if !plain || url.contains('|') {
        return none;
    }
    if names_a_node(url) {
        return (Location::new(url, path).file("zarr.json"), String::new(), "");
    }
    // A file a store kind reads, named by its extension: the bytes at its start.
    match store::registry::first_read(url) {
        (0, _) => none,
        _ if url.contains('#') || url.split('?').next().is_some_and(|b| b.ends_with('/')) => none,
        (n, reader) => (String::from(url), format!("bytes=0-{}", n - 1), reader),
    }
}

/// Whether the last path segment of `url` may name a node: no extension, or `.zarr`.
fn names_a_node(url: &str) -> bool {
    let (base, _) = split_url(url);
    let after = base.find("://").map_or(0, |i| i + 3);
    let Some(slash) = base[after..].find('/') else { return true };
    let last = base[after + slash..].rsplit('/').next().unwrap_or("");
    last.rsplit_once('.').is_none_or(|(_, ext)| ext.eq_ignore_ascii_case("zarr"))
}

/// The formats a pasted URL may name (`zarr3://…`, `|zarr2:`); `zarr`: detected.
const FORMATS: [&str; 4] = ["zarr", "zarr2", "zarr3", "precomputed"];

async fn detect<C: HttpClient>(c: &C, url: &str, options: OpenOptions) -> Result<Opened> {
    let mut pasted = pipeline::parse(url, &FORMATS)?;
    pasted.url = without_document(&pasted.url);
    let opening = Opening {
        store: options.store.clone(),
        settings: options.store_settings.clone(),
        resolve: options.resolve_url.clone(),
        decoders: options.decoders.clone(),
        parent: options.stack.clone(),
    };
    let transport = Transport::new(Config { max_document: options.max_metadata as u64, ..options.config });
    let (store, root, path) = store::mount(c, transport, &pasted, &opening).await?;
    let path = without_document(&join_paths(&path, &options.path));
    let place = Location::new(&root, &path);
    let store = Rc::new(store);
    store.set_known(options.known.clone());
    // The format the layers fix (an Icechunk repository's nodes are Zarr v3), else the one named.
    let named = pasted.format.and_then(Format::parse).filter(|_| pasted.format != Some("zarr"));
    let fixed = store.stack().layers.last().and_then(|l| l.format()).and_then(Format::parse);
    let forced = fixed.or(options.format).or(named);
    let plain = pasted.stages.is_empty() && options.store.is_none() && options.store_settings.is_empty();
    let opened = match detect_in(c, &place, forced, options.scale.clone(), store.clone()).await {
        // No node where the URL names one: the object itself may be a store kind's (a TIFF
        // without its extension), known by its first bytes.
        // (Not where the URL's extension already said what it is: a `.json` document.)
        Err(e) if e.code == ErrorCode::NotFound && plain && store.stack().layers.is_empty() && options.path.is_empty() && store::registry::named(&pasted.url).is_none() => {
            match store::sniff(c, &store, &pasted.url).await {
                Some(kind) => {
                    let again = OpenOptions { store: Some(String::from(kind)), ..options };
                    return Box::pin(detect(c, url, again)).await;
                }
                None => return Err(e),
            }
        }
        got => got.map_err(|e| store.name_error(e))?,
    };
    let container = store.container(c).await;
    Ok(match opened {
        // A group lists its members from consolidated metadata (its own, or its parent's), or
        // from what holds it (a repository's snapshot, a reference file's keys).
        Opened::Group(mut g) => {
            // Its own consolidated metadata, unless it holds nothing (zarr-python writes an empty
            // one into a child group's entry): then its parent's.
            if g.known.as_ref().is_none_or(|k| k.is_empty()) {
                g.known = store.known().or(g.known);
            }
            if let Some(k) = &g.known {
                g.children = k.children_of(&place.node());
            }
            let stack = store.stack();
            if let Some(layer) = stack.layers.last().filter(|_| g.children.is_empty()) {
                g.children = layer.children(&place.path).unwrap_or_default();
            }
            g.url = store.display_node(&join(&g.root, &g.path));
            if !stack.layers.is_empty() {
                g.root = store.stack_text();
            }
            g.container = container;
            g.stack = Some(stack);
            Opened::Group(g)
        }
        Opened::Array(a) => Opened::Array(Box::new(a.with_container(container))),
    })
}

/// A URL or path naming a node's metadata document (`…/zarr.json`, `…/.zarray`: a link
/// copied from a bucket's listing) as the node's own; anything else as it is.
/// (Not `info`: a node may bear that name.)
fn without_document(at: &str) -> String {
    let (base, query) = split_url(at);
    let (node, file) = base.rsplit_once('/').unwrap_or(("", &base));
    if file != "info" && store::consolidated::NODE_FILES.contains(&file) {
        format!("{node}{query}")
    } else {
        String::from(at)
    }
}

/// Open the node at `place` (as `forced`, or detecting the format) through `store`.
async fn detect_in<C: HttpClient>(
    c: &C,
    place: &Location,
    forced: Option<Format>,
    scale: Option<String>,
    store: Rc<Store>,
) -> Result<Opened> {
    let s = &store;
    let place = place;
    match forced {
        Some(Format::Zarr3) => match get(c, s, &place.file("zarr.json")).await? {
            Some(text) => open_v3(c, place, text, store.clone()).await,
            None => Err(not_found(&place.file("zarr.json"), "no Zarr v3 array or group here")),
        },
        Some(Format::Zarr2) => {
            // Both at once: every v2 node may have attributes.
            let (zarray, zattrs) = both(get(c, s, &place.file(".zarray")), get(c, s, &place.file(".zattrs"))).await;
            let attrs = zattrs?;
            match zarray? {
                Some(text) => open_v2_array(place, &text, attrs, store.clone()),
                None => {
                    // A group's consolidated metadata, if it has one, with its .zgroup.
                    let (zgroup, zmetadata) =
                        both(get(c, s, &place.file(".zgroup")), get(c, s, &place.file(".zmetadata"))).await;
                    if let Some(z) = zmetadata? {
                        consolidate_v2(place, &z, s)?;
                    }
                    match zgroup? {
                        Some(text) => open_v2_group(place, &text, attrs),
                        None => Err(not_found(&place.node(), "no .zarray or .zgroup: not a Zarr v2 array or group")),
                    }
                }
            }
        }
        Some(Format::Zarr3Draft) => open_draft(c, place, store.clone()).await,
        Some(Format::Precomputed) => match get(c, s, &place.file("info")).await? {
            Some(doc) => open_precomputed(place, doc, scale, store.clone()),
            None => Err(not_found(&place.file("info"), "no Neuroglancer precomputed volume here")),
        },
        None => {
            // Most common first: Zarr v3 costs one request, a v2 array two (+ its attributes).
            if let Some(text) = get(c, s, &place.file("zarr.json")).await? {
                return open_v3(c, place, text, store.clone()).await;
            }
            // Then a v2 group's consolidated metadata (xarray and zarr-python 2 write it): one
            // request for the group and all it holds; the probes below are answered from it.
            if let Some(z) = get(c, s, &place.file(".zmetadata")).await? {
                consolidate_v2(place, &z, s)?;
            }
            if let Some(text) = get(c, s, &place.file(".zarray")).await? {
                let attributes = v2_attributes(c, s, &place).await?;
                return open_v2_array(place, &text, attributes, store.clone());
            }
            if let Some(doc) = get(c, s, &place.file("info")).await? {
                // Only a precomputed volume's info: another JSON file of that name is not ours;
                // one that is not JSON at all (cut short) is reported, not skipped.
                match json::validate(&doc) {
                    Ok(_) if precomputed::VolumeInfo::parse(&doc).is_ok() => {
                        return open_precomputed(place, doc, scale, store.clone());
                    }
                    Ok(_) => {}
                    Err(e) if e.is_eof() => {
                        let why = format!("{}: not valid JSON ({e}): truncated metadata?", place.file("info"));
                        return Err(Error::new(ErrorCode::InvalidMetadata, why));
                    }
                    Err(_) => {}
                }
            }
            if let Some(text) = get(c, s, &place.file(".zgroup")).await? {
                let attributes = v2_attributes(c, s, &place).await?;
                return open_v2_group(place, &text, attributes);
            }
            // Last, a node inside a draft v3 store: the entry point is at the store root.
            if !place.path.is_empty() {
                let entry = format!("{}/zarr.json{}", place.root, place.query);
                if let Some(text) = get(c, s, &entry).await? {
                    if matches!(Node::parse(&text), Ok(Node::DraftRoot)) {
                        return open_draft(c, place, store.clone()).await;
                    }
                }
            }
            let mut why = String::from("no zarr.json, .zarray, info or .zgroup here");
            why.extend(s.stack().layers.last().and_then(|l| l.hint()));
            if place.node().ends_with("/info") {
                why += "; a precomputed volume opens by its folder's URL, not its info file's";
            }
            Err(not_found(&place.node(), &why))
        }
    }
}

/// Lay a v2 group's `.zmetadata` (`text`, at `place`) over `store`: its members' documents,
/// and, for each node it describes, the v2 files that node lacks (no request for those).
fn consolidate_v2(place: &Location, text: &[u8], store: &Store) -> Result<()> {
    let members = consolidated::v2(text).map_err(|e| e.at(&place.file(".zmetadata")))?;
    let node = place.node();
    // The documents, and the nodes they describe: what such a node does not hold, it lacks.
    let mut nodes: Vec<String> = Vec::new();
    let mut held: Vec<(String, Option<Vec<u8>>)> = Vec::new();
    for (key, doc) in members {
        let (path, file) = key.rsplit_once('/').unwrap_or(("", key.as_str()));
        if matches!(file, ".zarray" | ".zgroup") {
            nodes.push(join(&node, path));
        }
        held.push((join(&node, &key), Some(doc.into_bytes())));
    }
    store.set_known(Some(Rc::new(Known::new(held).lacking(nodes, &node))));
    Ok(())
}

fn open_precomputed(place: &Location, doc: Vec<u8>, scale: Option<String>, store: Rc<Store>) -> Result<Opened> {
    let docs = Documents { format: Format::Precomputed, path: place.path.clone(), doc, attrs: None, scale };
    array(place, docs, store, &place.file("info"))
}

async fn v2_attributes<C: HttpClient>(c: &C, store: &Store, place: &Location) -> Result<Option<Vec<u8>>> {
    get(c, store, &place.file(".zattrs")).await
}

fn open_v2_array(place: &Location, text: &[u8], attrs: Option<Vec<u8>>, store: Rc<Store>) -> Result<Opened> {
    let docs = Documents { format: Format::Zarr2, path: place.path.clone(), doc: text.to_vec(), attrs, scale: None };
    array(place, docs, store, &place.file(".zarray"))
}

fn open_v2_group(place: &Location, text: &[u8], attrs: Option<Vec<u8>>) -> Result<Opened> {
    v2::check_group(text).map_err(|e| e.at(&place.file(".zgroup")))?;
    let attributes = v2::parse_attributes(attrs.as_deref()).map_err(|e| e.at(&place.file(".zattrs")))?;
    let (root, path) = (place.root.clone(), place.path.clone());
    Ok(Opened::Group(Group {
        format: Format::Zarr2,
        root,
        path,
        url: String::new(),
        attributes,
        known: None,
        children: Vec::new(),
        container: None,
        stack: None,
    }))
}

fn not_found(url: &str, why: &str) -> Error {
    Error::new(ErrorCode::NotFound, format!("{url}: not found ({why})"))
}

/// A whole small object (metadata), `None` when absent.
async fn get<C: HttpClient>(c: &C, store: &Store, url: &str) -> Result<Option<Vec<u8>>> {
    store.read_document(c, url, store.config().max_document).await
}

async fn open_v3<C: HttpClient>(c: &C, place: &Location, text: Vec<u8>, store: Rc<Store>) -> Result<Opened> {
    let meta_url = place.file("zarr.json");
    match Node::parse(&text).map_err(|e| e.at(&meta_url))? {
        Node::DraftRoot => {
            // The caller named a draft store's root: its root node.
            let root = Location { root: place.node(), path: String::new(), query: place.query.clone() };
            open_draft(c, &root, store).await
        }
        Node::Group { attributes } => {
            // zarr-python 3's consolidated metadata: the members' zarr.json, no request each.
            let members = consolidated::v3(&text).map_err(|e| e.at(&meta_url))?;
            let known = members.map(|list| {
                let node = place.node();
                Rc::new(Known::new(list.into_iter().map(|(k, d)| (join(&node, &k), Some(d.into_bytes()))).collect()))
            });
            Ok(Opened::Group(Group {
                format: Format::Zarr3,
                root: place.root.clone(),
                path: place.path.clone(),
                url: String::new(),
                attributes,
                known,
                children: Vec::new(),
                container: None,
                stack: None,
            }))
        }
        Node::Array(meta) => {
            // The array builds its own description from the documents.
            drop(meta);
            let docs =
                Documents { format: Format::Zarr3, path: place.path.clone(), doc: text, attrs: None, scale: None };
            array(place, docs, store, &meta_url)
        }
    }
}

/// A node of a draft v3 store: `place.root` is the store root, `place.path` the node's path.
async fn open_draft<C: HttpClient>(c: &C, place: &Location, store: Rc<Store>) -> Result<Opened> {
    let at = |key: String| format!("{}/{key}{}", place.root, place.query);
    let array_url = at(draft::meta_key(&place.path, "array"));
    if let Some(doc) = get(c, &store, &array_url).await? {
        let root = Location { root: place.root.clone(), path: String::new(), query: place.query.clone() };
        let docs = Documents { format: Format::Zarr3Draft, path: place.path.clone(), doc, attrs: None, scale: None };
        return match array(&root, docs, store, &array_url)? {
            Opened::Array(a) => Ok(Opened::Array(Box::new(a.at(place.node())))),
            group => Ok(group),
        };
    }
    let group_url = at(draft::meta_key(&place.path, "group"));
    let attributes = match get(c, &store, &group_url).await? {
        Some(text) => draft::parse_group(&text).map_err(|e| e.at(&group_url))?,
        // The root always exists; other groups without a document are implicit, and (as in
        // zarr-python) cannot be opened.
        None if place.path.is_empty() => Raw::empty_object(),
        None => return Err(not_found(&place.node(), "no array or group document in this draft v3 store")),
    };
    Ok(Opened::Group(Group {
        format: Format::Zarr3Draft,
        root: place.root.clone(),
        path: place.path.clone(),
        url: String::new(),
        attributes,
        known: None,
        children: Vec::new(),
        container: None,
        stack: None,
    }))
}

/// The array `docs` describe, keyed under `place`; errors name `meta_url`.
fn array(place: &Location, docs: Documents, store: Rc<Store>, meta_url: &str) -> Result<Opened> {
    let a = Array::new(place.node(), place.query.clone(), docs, store).map_err(|e| e.at(meta_url))?;
    Ok(Opened::Array(Box::new(a.with_meta_url(meta_url))))
}

#[cfg(test)]
mod tests {
    use super::without_document;

    #[test]
    fn a_link_to_a_metadata_document_names_its_node() {
        for (at, node) in [
            ("https://h/a.zarr/x/zarr.json", "https://h/a.zarr/x"),
            ("https://h/a/.zarray?sig=1", "https://h/a?sig=1"),
            ("https://h/a/.zmetadata", "https://h/a"),
            ("data.zarr/.zgroup", "data.zarr"),
            ("zarr.json", ""),
            ("https://h/a/info", "https://h/a/info"),
            ("https://h/refs.json", "https://h/refs.json"),
            ("https://h/a.zarr/", "https://h/a.zarr/"),
            ("", ""),
        ] {
            assert_eq!(without_document(at), node, "{at}");
        }
    }
}

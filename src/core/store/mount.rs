//! Mounting a store's layers: the stages a pasted URL names, or that the `store` option, a
//! kind's own option or the URL's look (an extension) imply, each read through the ones below
//! it; a parent group's layers taken over when they are the same; and the pipeline text that
//! mounts them again without a request.
use super::kind::{Mounting, ResolveUrl, Settings};
use super::naming;
use super::pipeline::{Pasted, Stage};
use super::reads::{Below, Store};
use super::registry;
use super::stack::Stack;
use crate::core::error::{Error, ErrorCode, Result};
use super::registry::Layer;
use crate::core::transport::{ByteRange, HttpClient, LastWhole, Objects, Transport};
use crate::core::urls::{join, join_paths, split_url};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

/// What the open options say of the stores.
#[derive(Clone, Default)]
pub struct Opening {
    /// The `store` option: a kind's name.
    pub store: Option<String>,
    /// The options kinds claim (Icechunk's `branch`), by name.
    pub settings: Settings,
    pub resolve: Option<Rc<dyn ResolveUrl>>,
    pub decoders: Option<Rc<dyn crate::core::external::Decoders>>,
    /// The layers a parent group was read through: taken over where they are the same.
    pub parent: Option<Stack>,
}

/// A stage to mount, and whether the caller named it (else detected).
struct Planned {
    stage: Stage,
    forced: bool,
}

fn unknown_store(name: &str) -> Error {
    let names = registry::NAMES.join(", ");
    Error::new(ErrorCode::UnsupportedFormat, format!("unknown store \"{name}\" ({names})"))
}

/// The stages to mount for `pasted` and the options.
fn plan(pasted: &Pasted, o: &Opening) -> Result<Vec<Planned>> {
    let forced = |stage| Planned { stage, forced: true };
    let mut planned: Vec<Planned> = pasted.stages.iter().cloned().map(forced).collect();
    let store = o.store.as_deref().map(|s| registry::by_name(s).ok_or_else(|| unknown_store(s))).transpose()?;
    let claimed = o.settings.first().and_then(|(name, _)| registry::claiming(name));
    if planned.is_empty() {
        let kind = match (store, claimed) {
            (Some(k), _) => Some(k),
            (None, Some(k)) => Some(k),
            (None, None) => None,
        };
        match kind {
            Some(kind) => planned.push(forced(Stage { kind, settings: Settings::new(), path: String::new() })),
            None => {
                if let Some(kind) = registry::named(&pasted.url) {
                    let stage = Stage { kind, settings: Settings::new(), path: String::new() };
                    planned.push(Planned { stage, forced: false });
                }
            }
        }
    }
    // A kind's own options go to its first stage (a stage's own settings win).
    if let Some(p) = planned.iter_mut().find(|p| Some(p.stage.kind) == claimed) {
        if p.stage.settings.is_empty() {
            p.stage.settings = o.settings.clone();
        }
    }
    Ok(planned)
}

/// The store the pasted URL and the options name, its layers mounted (each detected or read
/// as far as it must be to know it is one), and where the node is in it: the object it is under
/// (the innermost layer's, its query kept) and its path there.
pub async fn mount<C: HttpClient>(c: &C, transport: Transport, pasted: &Pasted, o: &Opening) -> Result<(Store, String, String)> {
    let parent = o.parent.clone().unwrap_or_default();
    let planned = plan(pasted, o)?;
    let how = |p: &Planned| Mounting {
        settings: p.stage.settings.clone(),
        forced: p.forced,
        resolve: o.resolve.clone(),
        decoders: o.decoders.clone(),
        head: None,
    };
    // (A kind detected by a look other kinds share is the parent's whichever of them it is.)
    let same = |i: usize, p: &Planned, url: &str| {
        let kind = |l: &Layer| l.name() == p.stage.kind || (!p.forced && registry::named_by(l.name(), url));
        parent.layers.get(i).filter(|l| kind(l) && l.same(url, &how(p))).cloned()
    };
    // The transports of nodes over the same outermost object share what a server sent whole.
    let shared = planned.first().and_then(|p| same(0, p, &pasted.url)).is_some();
    let last_whole = if shared { parent.last_whole.clone() } else { LastWhole::default() };
    // Every node opened from another checks answers against the versions it saw (their layers'
    // caches are stamped with them).
    let store = Store::over(transport, Stack { layers: Vec::new(), last_whole, versions: parent.versions.clone() });
    let mut url = pasted.url.clone();
    let mut path = String::new();
    for (i, p) in planned.into_iter().enumerate() {
        let layer = match same(i, &p, &url) {
            Some(l) if store.depth() == i => Some(l),
            _ => {
                let below = Below { store: &store, depth: i };
                let mut how = how(&p);
                let kind = if p.forced { p.stage.kind } else { by_first_bytes(&below, c, &url, p.stage.kind, &mut how).await? };
                registry::detect(kind, &below, c, &url, &how).await?
            }
        };
        match layer {
            Some(layer) => {
                store.stack.borrow_mut().layers.push(layer);
                path = p.stage.path;
                let (base, query) = split_url(&url);
                url = format!("{}{query}", join(&base, &path));
            }
            // Not one after all (a `.json` document that is not a reference file).
            None => path = join_paths(&path, &p.stage.path),
        }
    }
    // The node's object: the innermost layer's, and the path from there.
    let root = match store.stack.borrow().layers.last() {
        Some(l) => String::from(l.url()),
        None => pasted.url.clone(),
    };
    Ok((store, root, join_paths(&path, &pasted.path)))
}

/// The kind of an object whose look more kinds share (`.nc`: NetCDF-3 or HDF5): the one its
/// first bytes show (else the last of them: HDF5, which finds its signature past a user block
/// too), those bytes handed to it. The read is the kinds' first one (`Kind::FIRST_READ`, the
/// wrapper's early request): no request more.
async fn by_first_bytes<C: HttpClient>(below: &Below<'_>, c: &C, url: &str, kind: &'static str, how: &mut Mounting) -> Result<&'static str> {
    if !registry::shared_look(url) {
        return Ok(kind);
    }
    let Some(r) = below.read(c, url, ByteRange::Prefix(registry::first_read(url).0)).await? else { return Ok(kind) };
    let last = registry::NAMES.iter().rev().find(|k| registry::named_by(k, url)).copied().unwrap_or(kind);
    let sniffed = registry::sniffed(&r.bytes).filter(|k| registry::named_by(k, url)).unwrap_or(last);
    how.head = Some(Rc::new((below.stamp(url), r.bytes, r.object_size)));
    Ok(sniffed)
}

/// The store kind whose first bytes the object at `url` starts with, if one does (a node that
/// was not found where a URL names one: `https://h/scene` that is a TIFF). One small request.
pub async fn sniff<C: HttpClient>(c: &C, store: &Store, url: &str) -> Option<&'static str> {
    let head = store.read(c, url, ByteRange::Head(16)).await.ok()??;
    registry::sniffed(&head.bytes)
}

impl Store {
    /// The pipeline text that mounts these layers again without a request (a rebuilt array
    /// reads what it read: an Icechunk snapshot, not the branch), or empty without layers.
    pub fn stack_text(&self) -> String {
        let stack = self.stack.borrow();
        let Some(last) = stack.layers.last() else { return String::new() };
        let n = stack.layers.len();
        let outer = naming::pipeline(&stack.layers[..n - 1], last.url());
        format!("{outer}|{}:{}", last.name(), last.stage_text(""))
    }

    /// A store over the layers [`Store::stack_text`] names, mounted without a request.
    /// (`how`: the caller's resolver and decoders; each stage brings its own settings.)
    pub fn remount(text: &str, transport: Transport, how: &Mounting) -> Result<Store> {
        let store = Store::over(transport, Stack::default());
        if text.is_empty() {
            return Ok(store);
        }
        let pasted = super::pipeline::parse(text, &[])?;
        let mut url = pasted.url.clone();
        for stage in pasted.stages {
            let how = Mounting { settings: stage.settings, forced: true, ..how.clone() };
            let made = registry::new(stage.kind, &url, &how).ok_or_else(|| unknown_store(stage.kind))??;
            if let Some(layer) = made {
                store.stack.borrow_mut().layers.push(layer);
            }
            let (base, query) = split_url(&url);
            url = format!("{}{query}", join(&base, &stage.path));
        }
        Ok(store)
    }
}

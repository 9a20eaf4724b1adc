//! The one list of store kinds. Detection (by URL, by first bytes, by document), the pipeline's
//! `|name:` stages, the `store` option and each kind's own options all come from it: a new kind
//! is a folder of its own and one line here.
use super::kind::{Container, Kind, Mounting, Settings};
use super::place::Place;
use crate::core::error::Result;
use crate::core::transport::{HttpClient, Objects};
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

macro_rules! kinds {
    ($($variant:ident: $ty:ty,)*) => {
        /// A mounted layer: one store of a kind over one object.
        #[derive(Clone)]
        pub enum Layer {
            $($variant(Rc<$ty>),)*
        }

        /// Every kind's name, in the order detection tries them.
        pub const NAMES: &[&str] = &[$(<$ty as Kind>::NAME,)*];

        /// The store kinds as TypeScript, for the contract: their names (`WasmStoreKind`) and the
        /// options they take (`WasmStoreOptions`).
        pub const TS_PARTS: &[&str] = &[
            "/** A store kind's name (the README lists them). */\nexport type WasmStoreKind = never",
            $(" | \"", <$ty as Kind>::NAME, "\"",)*
            ";\n\n/** The options store kinds take, each read by its kind. */\nexport interface WasmStoreOptions {\n",
            $(<$ty as Kind>::TS_OPTIONS,)*
            "}\n",
        ];

        /// (kind, option) of every option a kind takes besides `store`.
        pub const OPTIONS: &[(&str, &[&str])] = &[$((<$ty as Kind>::NAME, <$ty as Kind>::OPTIONS),)*];

        /// The kind a URL names by its look alone.
        pub fn named(url: &str) -> Option<&'static str> {
            $(if <$ty>::named(url) { return Some(<$ty>::NAME); })*
            None
        }

        /// Each kind's extensions, first read and reader (for the table the wrapper's copy of
        /// the first-request rule is pinned by).
        pub const FIRST_READS: &[(&[&str], u64, &str)] = &[$((<$ty as Kind>::EXTENSIONS, <$ty as Kind>::FIRST_READ, <$ty as Kind>::READER),)*];

        /// What the kind a URL names reads first: (bytes at the start, decoder module).
        pub fn first_read(url: &str) -> (u64, &'static str) {
            $(if <$ty>::named(url) { return (<$ty>::FIRST_READ, <$ty>::READER); })*
            (0, "")
        }

        /// Whether the kind named `kind` names `url` by its look alone.
        pub fn named_by(kind: &str, url: &str) -> bool {
            $(if kind == <$ty>::NAME { return <$ty>::named(url); })*
            false
        }

        /// The kind an object's first bytes show.
        pub fn sniffed(head: &[u8]) -> Option<&'static str> {
            $(if <$ty>::sniff(head) { return Some(<$ty>::NAME); })*
            None
        }

        /// A stage `|kind:arg` read by its kind; `None` when no kind has a stage of that name.
        pub fn stage(kind: &str, arg: &str) -> Option<Result<(Settings, String)>> {
            $(if kind == <$ty>::NAME && <$ty>::STAGE { return Some(<$ty>::stage(arg)); })*
            None
        }

        /// The kind the `store` option's value names (a name or an alias).
        pub fn by_name(name: &str) -> Option<&'static str> {
            $(if name == <$ty>::NAME || <$ty>::ALIASES.contains(&name) { return Some(<$ty>::NAME); })*
            None
        }

        /// The layer of `kind` over the object at `url`, read lazily (no request).
        pub fn new(kind: &str, url: &str, how: &Mounting) -> Option<Result<Option<Layer>>> {
            $(if kind == <$ty>::NAME {
                return Some(<$ty>::new(url, how).map(|k| k.map(|k| Layer::$variant(Rc::new(k)))));
            })*
            None
        }

        /// The layer of `kind` over the object at `url` when it is one (see [`Kind::detect`]).
        pub async fn detect<S: Objects, C: HttpClient>(kind: &str, below: &S, c: &C, url: &str, how: &Mounting) -> Result<Option<Layer>> {
            $(if kind == <$ty>::NAME {
                return Ok(<$ty>::detect(below, c, url, how).await?.map(|k| Layer::$variant(Rc::new(k))));
            })*
            Ok(None)
        }

        impl Layer {
            pub fn name(&self) -> &'static str {
                match self { $(Layer::$variant(_) => <$ty>::NAME,)* }
            }
            pub fn url(&self) -> &str {
                match self { $(Layer::$variant(k) => k.url(),)* }
            }
            pub fn version_url(&self) -> Option<String> {
                match self { $(Layer::$variant(k) => k.version_url(),)* }
            }
            pub fn key<'a>(&self, url: &'a str) -> Option<&'a str> {
                match self { $(Layer::$variant(k) => k.key(url),)* }
            }
            pub async fn place<S: Objects, C: HttpClient>(&self, below: &S, c: &C, key: &str) -> Result<Place> {
                match self { $(Layer::$variant(k) => k.place(below, c, key).await,)* }
            }
            pub async fn describe<S: Objects, C: HttpClient>(&self, below: &S, c: &C) -> Container {
                match self { $(Layer::$variant(k) => k.describe(below, c).await,)* }
            }
            pub fn stage_text(&self, path: &str) -> String {
                match self { $(Layer::$variant(k) => k.stage_text(path),)* }
            }
            pub fn same(&self, url: &str, how: &Mounting) -> bool {
                match self { $(Layer::$variant(k) => k.same(url, how),)* }
            }
            pub fn children(&self, path: &str) -> Option<Vec<(String, bool)>> {
                match self { $(Layer::$variant(k) => k.children(path),)* }
            }
            pub fn decoders(&self) -> &'static [&'static str] {
                match self { $(Layer::$variant(k) => k.decoders(),)* }
            }
            pub fn hint(&self) -> Option<String> {
                match self { $(Layer::$variant(k) => k.hint(),)* }
            }
            pub fn format(&self) -> Option<&'static str> {
                match self { $(Layer::$variant(k) => k.format(),)* }
            }
            pub fn keys_share_objects(&self) -> bool {
                match self { $(Layer::$variant(k) => k.keys_share_objects(),)* }
            }
        }
    };
}

kinds! {
    Plain: super::plain::Plain,
    Zip: super::zip::Archive,
    References: super::refs::References,
    Icechunk: super::icechunk::Repo,
    Tiff: super::tiff::Tiff,
    // (Before HDF5: a `.nc` is named by both; see `Netcdf3::READER`.)
    Netcdf3: super::netcdf3::Netcdf3,
    Hdf5: super::hdf5::Hdf5,
}

/// Whether more than one kind names `url` by its look (`.nc`: NetCDF-3 or HDF5): its first
/// bytes tell which it is.
pub fn shared_look(url: &str) -> bool {
    NAMES.iter().filter(|k| named_by(k, url)).count() > 1
}

/// The kind that claims the open option `name` (Icechunk claims `branch`).
pub fn claiming(option: &str) -> Option<&'static str> {
    OPTIONS.iter().find(|(_, names)| names.contains(&option)).map(|(kind, _)| *kind)
}

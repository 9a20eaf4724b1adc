//! One array description for every format: what the documents say, before any layout.
use super::dtype::{DataType, Field, FillValue};
use super::grid::Grid;
use super::json::Named;
use super::keys::KeyEncoding;
use super::precomputed::VolumeInfo;
use crate::core::json::Raw;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Zarr3,
    Zarr2,
    /// The pre-release Zarr v3 layout with the sharding storage transformer.
    Zarr3Draft,
    Precomputed,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Zarr3 => "zarr3",
            Format::Zarr2 => "zarr2",
            Format::Zarr3Draft => "zarr3-draft",
            Format::Precomputed => "precomputed",
        }
    }
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "zarr3" | "zarr" | "v3" => Format::Zarr3,
            "zarr2" | "v2" => Format::Zarr2,
            "zarr3-draft" => Format::Zarr3Draft,
            "precomputed" | "neuroglancer-precomputed" => Format::Precomputed,
            _ => return None,
        })
    }
}

/// An array as its metadata describes it, whatever the format.
#[derive(Clone, Debug)]
pub struct ArrayMetadata {
    pub format: Format,
    pub shape: Vec<u64>,
    pub data_type: DataType,
    pub fill_value: FillValue,
    /// JSON text of an object, not parsed here (the caller may never want it).
    pub attributes: Raw,
    pub dimension_names: Option<Vec<Option<String>>>,
    /// A `structured` data type's fields.
    pub fields: Option<Vec<Field>>,
    pub storage: Storage,
}

/// How the chunks are stored.
#[derive(Clone, Debug)]
pub enum Storage {
    /// Every Zarr flavour: a grid of storage objects named by a key encoding, and the codecs
    /// of those objects (in encoding order, as Zarr v3 lists them; v2 and the draft layout are
    /// spelled the same way: `transpose` for Fortran order, `bytes` with the endianness,
    /// `numcodecs.<id>` for filters and compressors, `sharding_indexed` for the draft's shards).
    Zarr { grid: Grid, keys: KeyEncoding, codecs: Vec<Named> },
    /// One scale of a Neuroglancer precomputed volume.
    Precomputed { volume: Rc<VolumeInfo>, scale: usize },
}

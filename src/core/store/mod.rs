//! Stores: where the bytes of a key are. A [`Store`] reads through a stack of layers, each one
//! store kind over one object read through the layers below it (an archive inside an archive,
//! an archive named by a reference file), down to the [`Transport`]'s HTTP objects: a range of
//! a key becomes a range of the outermost object (ranges of ranges, merged as any spans are).
//! Each kind is a folder of its own (`plain`, `zip`, `refs`, `icechunk`, `tiff`, `hdf5`, `netcdf3`), listed once in
//! [`registry`]; `consolidated` lays the documents a group's consolidated metadata holds over a
//! store. The kinds know the key names their container formats define (a repository's
//! `zarr.json`, a reference file's `.zarray`); nothing here reads an array.
//!
//! May import: `error`, `nd`, `json`, `zstd`, `crc`, `urls`, `bytes`, `external`, `transport`.
pub mod consolidated;
mod driver;
pub mod icechunk;
pub mod kind;
mod kept;
mod mount;
mod naming;
pub mod pipeline;
pub mod place;
pub mod plain;
mod reads;
pub mod refs;
pub mod registry;
mod stack;
pub mod hdf5;
pub mod netcdf3;
pub mod tiff;
mod windows;
pub mod zip;

pub use consolidated::Known;
pub use kept::Kept;
pub use kind::{Container, Kind, Mounting, ResolveUrl, Settings};
pub use mount::{mount, sniff, Opening};
pub use reads::{Below, Store};
pub use registry::Layer;
pub use stack::Stack;


#[cfg(test)]
mod tests;

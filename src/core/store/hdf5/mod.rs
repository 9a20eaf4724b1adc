//! HDF5 (and NetCDF-4) files as a store, read by range. An HDF5 chunked dataset is a sharded
//! array by another name — one object, a chunk index, byte ranges — so each dataset is presented
//! as a Zarr v3 array whose chunk `c/…` is a range of the file, and each group as a group.
//!
//! The metadata is scattered through the file and its formats are many (superblocks, object
//! headers, B-trees, heaps, five chunk indexes), so its reader is a decoder module of its own
//! (`decoders/hdf5`, fetched when an HDF5 file is opened), driven by [`Driver`] (shared with
//! the NetCDF-3 kind).
use super::driver::{driven_kind, Driver, Reader, READ_AHEAD};
use super::kind::{Container, Kind, Mounting};
use super::place::Place;
use crate::core::error::Result;
use crate::core::transport::{HttpClient, Objects};
use alloc::string::String;
use alloc::vec::Vec;

/// An HDF5 file as a layer.
pub struct Hdf5(Driver);

impl Kind for Hdf5 {
    const NAME: &'static str = "hdf5";
    const FIRST_READ: u64 = READ_AHEAD;
    const READER: &'static str = crate::core::external::HDF5;
    const EXTENSIONS: &'static [&'static str] = &[".h5", ".hdf5", ".he5", ".nc", ".nc4", ".h5ad"];
    const ALIASES: &'static [&'static str] = &["netcdf"];

    /// The signature at the start (a file with a user block is known by its name, or `store`).
    fn sniff(head: &[u8]) -> bool {
        head.starts_with(b"\x89HDF\r\n\x1a\n")
    }

    driven_kind!("hdf5", Reader { name: "hdf5", reads: "HDF5 and NetCDF-4 files", file: "HDF5 file" });
}

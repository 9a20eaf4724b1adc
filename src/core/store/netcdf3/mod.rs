//! NetCDF-3 files (classic, 64-bit offset, CDF-5) as a store, read by range: one header, then
//! each variable a contiguous block, or one slab per record interleaved along the unlimited
//! dimension. Presented as a NetCDF-4 file is (a group of arrays, one per variable): a fixed
//! variable's chunks are whole rows, a record variable's one record each (a time step one
//! range). The header is read by a decoder module of its own (`decoders/netcdf3`), driven by
//! [`Driver`] as the HDF5 module is.
use super::driver::{driven_kind, Driver, Reader, READ_AHEAD};
use super::kind::{Container, Kind, Mounting};
use super::place::Place;
use crate::core::error::Result;
use crate::core::transport::{HttpClient, Objects};
use alloc::string::String;
use alloc::vec::Vec;

/// A NetCDF-3 file as a layer.
pub struct Netcdf3(Driver);

impl Kind for Netcdf3 {
    const NAME: &'static str = "netcdf3";
    const FIRST_READ: u64 = READ_AHEAD;
    /// Both readers (the wrapper loads them with the first read): whichever the file is, its
    /// open then needs no module it has to stop for and start again (a second first read).
    const READER: &'static str = "hdf5 netcdf3";
    /// (Shared with HDF5: which one a `.nc` file is, its first bytes tell.)
    const EXTENSIONS: &'static [&'static str] = &[".nc"];

    fn sniff(head: &[u8]) -> bool {
        matches!(head, [b'C', b'D', b'F', 1 | 2 | 5, ..])
    }

    driven_kind!("netcdf3", Reader { name: "netcdf3", reads: "NetCDF-3 files", file: "NetCDF-3 file" });
}

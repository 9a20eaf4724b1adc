//! Metadata: documents → one array description ([`ArrayMetadata`]) for every format — Zarr
//! v3, Zarr v2, the draft v3 layout, Neuroglancer precomputed — with data types, fill values,
//! chunk grids and chunk key encodings. Codecs are described (names and configurations), not
//! built. No I/O.
//!
//! May import: `error`, `nd`, `json` (and the kernels crate's float16 conversion).
pub mod array;
pub mod consolidated;
pub mod documents;
pub mod draft;
pub mod dtype;
pub mod grid;
pub mod json;
pub mod keys;
pub mod multiscale;
pub mod precomputed;
pub mod v2;
pub mod v3;

pub use array::{ArrayMetadata, Format, Storage};
pub use documents::{describe, Documents};
pub use dtype::{DataType, Field, FillValue, Scalar};
pub use grid::{Axis, Grid};
pub use json::Named;
pub use keys::KeyEncoding;

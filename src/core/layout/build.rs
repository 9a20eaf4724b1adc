//! Which layout an array has.
use super::precomputed::ScaleLayout;
use super::zarr::ZarrLayout;
use super::Layout;
use crate::core::error::Result;
use crate::core::metadata::{ArrayMetadata, Storage};
use alloc::boxed::Box;

/// The layout of the array `meta` describes.
pub fn build(meta: &ArrayMetadata) -> Result<Box<dyn Layout>> {
    Ok(match &meta.storage {
        Storage::Zarr { grid, keys, codecs } => {
            Box::new(ZarrLayout::new(grid.clone(), keys.clone(), codecs, meta.data_type)?)
        }
        Storage::Precomputed { volume, scale } => Box::new(ScaleLayout::new(volume.clone(), *scale)?),
    })
}

//! shardfetch's hot loops, in a crate of their own for their optimisation level: the core is
//! built at opt-level "z" to keep the module small, and these loops ran slower inside it (in
//! wasm, decoder alone: blosc+lz4 189 MiB/s against 691 at opt-level 3, blosc+zstd 171 against
//! 448, gzip with its CRC-32 check 213–221 against 231–235).
//! Pure, `no_std`, no `unsafe`; the core wraps them with its errors. (`lookup3` is the hdf5
//! decoder module's too.)
#![no_std]
#![forbid(unsafe_code)]
extern crate alloc;

pub mod bitshuffle;
pub mod blosclz;
pub mod crc;
pub mod half;
pub mod inflate;
pub mod lookup3;
pub mod lz4;
pub mod shuffle;

//! `HDF5_FILE=hdf5/x.h5 HDF5_PATH=grp cargo test -p shardfetch-hdf5 --test explore -- --nocapture`:
//! print the module's answers for one object (a debugging aid; passes without the variables).
mod common;
use common::Host;

#[test]
fn explore() {
    let (Ok(file), Ok(path)) = (std::env::var("HDF5_FILE"), std::env::var("HDF5_PATH")) else { return };
    let mut h = Host::open(&format!("data/{file}"));
    if let Ok(r) = std::env::var("HDF5_READ_AHEAD") {
        h.read_ahead = r.parse().unwrap();
    }
    let n = h.node(&path);
    println!("{}", serde_json::to_string(&n).unwrap());
    println!("rounds {} fetched {}", h.rounds, h.fetched);
    if let Ok(c) = std::env::var("HDF5_COORDS") {
        let coords: Vec<u64> = c.split(',').map(|x| x.parse().unwrap()).collect();
        println!("{}", h.chunk(&path, &coords));
    }
}

//! `HDF5_FILE=hdf5/x.h5 HDF5_PATH=grp cargo test -p shardfetch-hdf5 --test explore -- --nocapture`:
//! print the module's answers for one object (a debugging aid). Without the variables it explores
//! a chunked dataset of the manifest (the first with several chunks) and checks what it printed:
//! the node's shape and data type are the writer's, and chunk (0, …, 0) located by the module
//! decodes to the writer's values (`expected/hdf5/…`, as h5py read them back).
mod common;
use common::{decode_chunk, dtype_size, fixtures, manifest, Host};

#[test]
fn explore() {
    let (file, path, case) = match (std::env::var("HDF5_FILE"), std::env::var("HDF5_PATH")) {
        (Ok(file), Ok(path)) => (file, path, None),
        _ => {
            let m = manifest();
            let case = m["cases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| {
                    c["features"].as_array().unwrap().iter().any(|f| f == "chunked")
                        && c["shape"] != c["chunkShape"]
                        && c["dtype"].as_str().is_some_and(|d| d.starts_with("float") || d.contains("int"))
                })
                .expect("a chunked numeric case in manifest-hdf5.json")
                .clone();
            (case["path"].as_str().unwrap().into(), case["open"]["path"].as_str().unwrap().into(), Some(case))
        }
    };
    let mut h = Host::open(&format!("data/{file}"));
    if let Ok(r) = std::env::var("HDF5_READ_AHEAD") {
        h.read_ahead = r.parse().unwrap();
    }
    let n = h.node(&path);
    println!("{}", serde_json::to_string(&n).unwrap());
    println!("rounds {} fetched {}", h.rounds, h.fetched);
    let coords: Vec<u64> = match std::env::var("HDF5_COORDS") {
        Ok(c) => c.split(',').map(|x| x.parse().unwrap()).collect(),
        Err(_) if case.is_some() => vec![0; n["node"]["zarr_json"]["shape"].as_array().map_or(0, Vec::len)],
        Err(_) => return println!("(set HDF5_COORDS=i,j,… for a chunk's answer)"),
    };
    let answer = h.chunk(&path, &coords);
    println!("{answer}");
    let Some(case) = case else { return };
    // What was printed, against the writer's.
    let name = case["name"].as_str().unwrap();
    let z = &n["node"]["zarr_json"];
    assert_eq!(z["shape"], case["shape"], "{name}: shape");
    assert_eq!(z["data_type"], case["dtype"], "{name}: data type");
    assert_eq!(z["chunk_grid"]["configuration"]["chunk_shape"], case["chunkShape"], "{name}: chunk shape");
    let span = answer["chunk"].as_array().unwrap_or_else(|| panic!("{name}: chunk {coords:?} not located: {answer}"));
    let (off, len) = (span[0].as_u64().unwrap() as usize, span[1].as_u64().unwrap() as usize);
    let shape: Vec<u64> = case["shape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    let chunk: Vec<u64> = case["chunkShape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    let (es, _) = dtype_size(&z["data_type"]);
    let nbytes = chunk.iter().product::<u64>() as usize * es;
    let codecs = z["codecs"].as_array().unwrap();
    assert_ne!(codecs[0]["configuration"]["endian"], "big", "{name}: a little-endian case");
    let data = decode_chunk(codecs, h.file[off..off + len].to_vec(), nbytes).expect("a codec this test decodes");
    assert_eq!(data.len(), nbytes, "{name}: decoded size");
    // The chunk's rows inside the array against the writer's values (C order).
    let expected = std::fs::read(fixtures().join(case["expected"].as_str().unwrap())).unwrap();
    let rank = shape.len();
    let inside: Vec<u64> = chunk.iter().zip(&shape).map(|(&c, &s)| c.min(s)).collect();
    let rows: u64 = inside[..rank - 1].iter().product();
    for r in 0..rows {
        let mut idx = vec![0u64; rank];
        let mut rem = r;
        for a in (0..rank - 1).rev() {
            idx[a] = rem % inside[a];
            rem /= inside[a];
        }
        let src = (0..rank).fold(0u64, |acc, a| acc * chunk[a] + idx[a]) as usize * es;
        let dst = (0..rank).fold(0u64, |acc, a| acc * shape[a] + idx[a]) as usize * es;
        let n = inside[rank - 1] as usize * es;
        assert_eq!(data[src..src + n], expected[dst..dst + n], "{name}: chunk {coords:?}, row {idx:?}");
    }
}

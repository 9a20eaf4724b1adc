//! One TIFF image (a directory) as a Zarr v3 array: its shape and data type from the tags, its
//! tiles or strips as the chunks, its compression and predictor as codecs, its GeoTIFF keys as
//! attributes. Axes: `[y, x]` for one sample per pixel, `[sample, y, x]` for several, whether
//! the file stores them chunky (interleaved: a transpose in the codecs) or planar.
use crate::float::write_f64;
use crate::fail::{corrupt, Fail};
use tiff_ifd::*;
use abi::json;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// An image (one directory), described.
#[derive(Clone, Debug)]
pub struct Desc {
    pub dtype: &'static str,
    pub width: u64,
    pub height: u64,
    pub samples: u64,
    pub planar: bool,
    /// A tile's (or strip's) height and width.
    pub tile: [u64; 2],
    pub tiled: bool,
    /// The codecs, as JSON (encoding order).
    pub codecs: String,
    /// GDAL_NODATA as the fill value (JSON): rounded to the sample type, `None` when the type
    /// has no such value (then only the `nodata` attribute holds it, as GDAL reads it).
    pub fill: Option<String>,
    /// A reduced-resolution image (an overview), or a mask.
    pub subfile: u64,
    /// Chunks along [sample planes, y, x] (planes: 1 unless planar).
    pub chunks: [u64; 3],
    /// The array's `tiff` and `geotiff` attributes, as JSON members.
    pub attributes: String,
}

fn unsupported(ifd: usize, what: String) -> Fail {
    Fail("UnsupportedFormat", format!("image {ifd}: {what} is not read"))
}

/// The values of an image's tags as the host read them (inline, or in its windows), by tag.
pub struct Values<'a> {
    pub header: &'a Header,
    pub ifd: &'a Ifd,
    pub file: &'a [(u64, &'a [u8])],
}

impl<'a> Values<'a> {
    fn bytes(&self, tag: u16) -> Option<(&'a Entry, &'a [u8])> {
        let e = self.ifd.get(tag)?;
        match &e.at {
            At::Inline(v) => Some((e, &v[..])),
            At::Offset(o) => Some((e, abi::held(self.file.iter().copied(), *o, e.len()?)?)),
        }
    }
    pub fn ints(&self, tag: u16) -> Option<Vec<u64>> {
        let (e, b) = self.bytes(tag)?;
        integers(self.header, e, b)
    }
    pub fn int(&self, tag: u16) -> Option<u64> {
        self.ints(tag)?.first().copied()
    }
    pub fn floats(&self, tag: u16) -> Option<Vec<f64>> {
        let (e, b) = self.bytes(tag)?;
        numbers(self.header, e, b)
    }
    pub fn text(&self, tag: u16) -> Option<String> {
        self.bytes(tag).map(|(_, b)| text(b))
    }
    /// The raw bytes of an UNDEFINED or BYTE value.
    pub fn raw(&self, tag: u16) -> Option<&[u8]> {
        let (e, b) = self.bytes(tag)?;
        b.get(..usize::try_from(e.count).ok()?)
    }
}

/// The Zarr data type of (SampleFormat, BitsPerSample).
fn dtype(format: u64, bits: u64) -> Option<&'static str> {
    Some(match (format, bits) {
        (1, 8) => "uint8",
        (1, 16) => "uint16",
        (1, 32) => "uint32",
        (1, 64) => "uint64",
        (2, 8) => "int8",
        (2, 16) => "int16",
        (2, 32) => "int32",
        (2, 64) => "int64",
        (3, 16) => "float16",
        (3, 32) => "float32",
        (3, 64) => "float64",
        // Packed (imagecodecs_packints): the smallest unsigned type holding them.
        (1, 1..=7) => "uint8",
        (1, 9..=15) => "uint16",
        (1, 17..=31) => "uint32",
        _ => return None,
    })
}

fn list(out: &mut String, v: &[u64]) {
    out.push('[');
    for (k, x) in v.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str(&format!("{x}"));
    }
    out.push(']');
}

/// A number as JSON (a float's non-finite values as Zarr v3 spells them; one beyond what
/// `write_f64` writes, as its bits: `"0x…"`).
fn number(x: f64) -> String {
    let mut s = String::new();
    if x.is_nan() {
        s.push_str("\"NaN\"");
    } else if x.is_infinite() {
        s.push_str(if x > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" });
    } else if !write_f64(&mut s, x) {
        s = format!("\"0x{:016x}\"", x.to_bits());
    }
    s
}

/// GDAL_NODATA `x` as GDAL holds it for samples of `dtype`: a float32 rounded to float32 (past
/// its range an infinity), a float16 to float16; others as written.
pub fn as_sample(dtype: &str, x: f64) -> f64 {
    match dtype {
        "float32" => f64::from(x as f32),
        "float16" => crate::float::to_f16(x),
        _ => x,
    }
}

/// GDAL_NODATA (`x`, already [`as_sample`], read from `text`) as a fill value of `dtype`
/// (JSON): floats as they are, an integer the type holds; `None` when it holds no such value
/// (300, 1.5 or NaN for uint8, -1 for uint16): no pixel is nodata then, to GDAL either.
pub fn fill_value(dtype: &str, x: f64, text: &str) -> Option<String> {
    let int = |lo: i128, hi: i128| {
        // 64-bit integers past 2^53 only as written: digits, signed (no i128 parsing or
        // printing: their code would double this module's number handling).
        let t = text.trim();
        let t = t.strip_prefix('+').unwrap_or(t);
        let exact = t.parse::<i64>().map(i128::from).ok().or_else(|| t.parse::<u64>().ok().map(i128::from));
        let n = exact.or_else(|| (x.abs() < 9.0e15 && x as i64 as f64 == x).then_some(i128::from(x as i64)))?;
        (lo..=hi).contains(&n).then(|| if n < 0 { format!("{}", n as i64) } else { format!("{}", n as u64) })
    };
    match dtype {
        "float64" | "float32" | "float16" => Some(number(x)),
        "uint8" => int(0, 255),
        "int8" => int(-128, 127),
        "uint16" => int(0, 65535),
        "int16" => int(-32768, 32767),
        "uint32" => int(0, u32::MAX.into()),
        "int32" => int(i32::MIN.into(), i32::MAX.into()),
        "uint64" => int(0, u64::MAX.into()),
        _ => int(i64::MIN.into(), i64::MAX.into()),
    }
}

impl Desc {
    /// Image `index` (directory `v.ifd`) of `file`.
    pub fn new(index: usize, v: &Values) -> Result<Desc, Fail> {
        let bad = |what: &str| corrupt(format!("image {index}: {what}"));
        let width = v.int(IMAGE_WIDTH).filter(|&w| w > 0).ok_or_else(|| bad("no ImageWidth"))?;
        let height = v.int(IMAGE_LENGTH).filter(|&h| h > 0).ok_or_else(|| bad("no ImageLength"))?;
        let samples = v.int(SAMPLES_PER_PIXEL).unwrap_or(1);
        if samples == 0 || samples > 1 << 16 {
            return Err(bad(&format!("SamplesPerPixel {samples}")));
        }
        let bits = v.ints(BITS_PER_SAMPLE).unwrap_or_else(|| alloc::vec![1]);
        if bits.iter().any(|&b| b != bits[0]) {
            return Err(unsupported(index, format!("BitsPerSample {} and {} (samples of different sizes)", bits[0], bits.iter().find(|&&b| b != bits[0]).unwrap_or(&0))));
        }
        let format = v.ints(SAMPLE_FORMAT).and_then(|f| f.first().copied()).unwrap_or(1);
        let dtype = dtype(format, bits[0])
            .ok_or_else(|| unsupported(index, format!("BitsPerSample {} of SampleFormat {format}", bits[0])))?;
        let planar = v.int(PLANAR).unwrap_or(1) == 2 && samples > 1;
        let (tw, th, offsets, counts) = match (v.int(TILE_WIDTH), v.int(TILE_LENGTH)) {
            (Some(tw), Some(th)) => (tw, th, TILE_OFFSETS, TILE_BYTE_COUNTS),
            _ => (width, v.int(ROWS_PER_STRIP).unwrap_or(height).min(height), STRIP_OFFSETS, STRIP_BYTE_COUNTS),
        };
        if tw == 0 || th == 0 {
            return Err(bad("a tile or strip of no size"));
        }
        let tiled = offsets == TILE_OFFSETS;
        let chunks = [if planar { samples } else { 1 }, height.div_ceil(th), width.div_ceil(tw)];
        let offsets = *v.ifd.get(offsets).ok_or_else(|| bad("no tile or strip offsets"))?;
        let counts = *v.ifd.get(counts).ok_or_else(|| bad("no tile or strip byte counts"))?;
        let n = chunks.iter().try_fold(1u64, |n, &c| n.checked_mul(c)).ok_or_else(|| bad("too many tiles"))?;
        if offsets.count != n || counts.count != n {
            return Err(bad(&format!(
                "{} offsets and {} byte counts for {n} tiles or strips",
                offsets.count, counts.count
            )));
        }
        let row = if planar { tw } else { tw * samples };
        let codecs = codecs(index, v, (samples, planar, row), (dtype, bits[0]))?;
        let nodata_text = v.text(GDAL_NODATA);
        let nodata = nodata_text.as_deref().and_then(crate::float::parse_c_double).map(|x| as_sample(dtype, x));
        let fill = nodata.zip(nodata_text.as_deref()).and_then(|(x, t)| fill_value(dtype, x, t));
        let mut attributes = String::new();
        self::attributes(&mut attributes, index, v, (nodata, samples));
        let subfile = v.int(NEW_SUBFILE_TYPE).unwrap_or(0);
        let tile = [th, tw];
        Ok(Desc {
            dtype,
            width,
            height,
            samples,
            planar,
            tile,
            tiled,
            codecs,
            fill,
            subfile,
            chunks,
            attributes,
        })
    }

    /// How many axes its array has alone (2, or 3 with samples).
    pub fn axes(&self) -> usize {
        if self.samples > 1 {
            3
        } else {
            2
        }
    }

    /// Its array's `zarr.json`, with axes `lead` (name, size; chunks of 1) before its own and
    /// `more` (JSON members) added to its attributes.
    pub fn zarr_json(&self, lead: &[(&str, u64)], more: &str) -> Vec<u8> {
        let [th, tw] = self.tile;
        let (mut shape, mut chunk): (Vec<u64>, Vec<u64>) = lead.iter().map(|l| (l.1, 1)).unzip();
        match (self.samples, self.planar) {
            (1, _) => {}
            (s, false) => {
                shape.push(s);
                chunk.push(s);
            }
            (s, true) => {
                shape.push(s);
                chunk.push(1);
            }
        }
        shape.extend([self.height, self.width]);
        chunk.extend([th, tw]);
        let mut j = String::from("{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":");
        list(&mut j, &shape);
        j.push_str(",\"data_type\":");
        json::str(&mut j, self.dtype);
        if self.tiled || self.height % th == 0 {
            j.push_str(",\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":");
            list(&mut j, &chunk);
            j.push_str("}}");
        } else {
            // Strips: the last one holds only the rows left.
            let n = self.chunks[1];
            let mut axes: Vec<String> = chunk.iter().map(|c| format!("{c}")).collect();
            let k = axes.len() - 2;
            axes[k] = format!("[[{th},{}],{}]", n - 1, self.height - th * (n - 1));
            j.push_str(
                ",\"chunk_grid\":{\"name\":\"rectilinear\",\"configuration\":{\"kind\":\"inline\",\"chunk_shapes\":[",
            );
            j.push_str(&axes.join(","));
            j.push_str("]}}");
        }
        j.push_str(",\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}}");
        j.push_str(",\"fill_value\":");
        j.push_str(self.fill.as_deref().unwrap_or("0"));
        j.push_str(",\"codecs\":");
        j.push_str(&self.codecs);
        j.push_str(",\"dimension_names\":[");
        let mut names: Vec<String> = lead.iter().map(|l| format!("\"{}\"", l.0)).collect();
        if self.samples > 1 {
            names.push(String::from("\"sample\""));
        }
        names.extend([String::from("\"y\""), String::from("\"x\"")]);
        j.push_str(&names.join(","));
        j.push_str("],\"attributes\":{");
        j.push_str(&self.attributes);
        j.push_str(more);
        j.push_str("}}");
        j.into_bytes()
    }
}

/// The codecs (encoding order, as JSON) of an image's tiles.
fn codecs(index: usize, v: &Values, (samples, planar, row): (u64, bool, u64), (dtype, bits): (&str, u64)) -> Result<String, Fail> {
    let mut c: Vec<String> = Vec::new();
    // The encoded tile: [y, x] (one sample), [y, x, sample] (chunky), [1, y, x] (planar), after
    // any leading axes: x counted from the end.
    let x_axis: i64 = if samples > 1 && !planar { -2 } else { -1 };
    if samples > 1 && !planar {
        c.push(String::from("{\"name\":\"transpose\",\"configuration\":{\"order\":[1,2,0]}}"));
    }
    let compression = v.int(COMPRESSION).unwrap_or(1);
    // libtiff reverses each byte's bits before any decompression: only fax's is read so.
    let fill = v.int(FILL_ORDER).unwrap_or(1);
    if fill != 1 && !matches!(compression, 2..=4) {
        return Err(unsupported(index, format!("FillOrder {fill} of Compression {compression}")));
    }
    // Whole images, through decoder modules: WebP (8-bit RGB, RGBA), JPEG XL (8-, 16-bit), LERC
    // (any sample type; GDAL's deflate or zstd around it).
    if matches!(compression, 50001 | 50002 | 52546 | 34887) {
        let s = if planar { 1 } else { samples };
        let (name, ok) = match compression {
            50001 => ("webp", dtype == "uint8" && matches!(s, 3 | 4)),
            34887 => ("lerc", matches!(bits, 8 | 16 | 32 | 64) && dtype != "float16"),
            _ => ("jpegxl", matches!(dtype, "uint8" | "uint16") && s <= 4),
        };
        if !ok || v.int(PREDICTOR).unwrap_or(1) != 1 {
            return Err(unsupported(index, format!("Compression {compression} of {samples} {dtype} samples")));
        }
        c.push(format!("{{\"name\":\"imagecodecs_{name}\",\"configuration\":{{\"samples\":{s}}}}}"));
        match v.ints(LERC_PARAMETERS).and_then(|p| p.get(1).copied()).filter(|_| compression == 34887) {
            Some(1) => c.push(String::from("{\"name\":\"numcodecs.zlib\"}")),
            Some(2) => c.push(String::from("{\"name\":\"zstd\"}")),
            None | Some(0) => {}
            Some(n) => return Err(unsupported(index, format!("LercParameters compression {n}"))),
        }
        return Ok(format!("[{}]", c.join(",")));
    }
    if compression == 7 {
        // JPEG: 8-bit tiles decoded whole; no predictor. YCbCr (chunky, 3 samples) given as RGB;
        // any other photometric as the components stored, no colour transform (as libtiff).
        let photometric = v.int(PHOTOMETRIC).unwrap_or(1);
        let s = if planar { 1 } else { samples };
        let ycbcr = photometric == 6 && samples == 3 && !planar;
        if bits != 8 || dtype != "uint8" || !(ycbcr || photometric <= 2 && (1..=4).contains(&s)) {
            let what = format!("Compression 7 (JPEG) of {samples} {dtype} samples, Photometric {photometric}");
            return Err(unsupported(index, what));
        }
        let mut tables = String::new();
        json::base64(&mut tables, v.raw(JPEG_TABLES).unwrap_or_default());
        // Strips: a last one stored past the image's rows is cropped (libtiff reads only those).
        let height = v.int(IMAGE_LENGTH).unwrap_or(0);
        let th = v.int(ROWS_PER_STRIP).unwrap_or(height).min(height);
        let strips = v.int(TILE_WIDTH).is_none() || v.int(TILE_LENGTH).is_none();
        let width = v.int(IMAGE_WIDTH).unwrap_or(0);
        let rows = if strips && th > 0 && height % th != 0 { format!(",\"width\":{width},\"rows\":{th}") } else { String::new() };
        let conf = format!("{{\"tables\":{tables},\"samples\":{s},\"raw\":{}{rows}}}", !ycbcr);
        c.push(format!("{{\"name\":\"imagecodecs_jpeg\",\"configuration\":{conf}}}"));
        return Ok(format!("[{}]", c.join(",")));
    }
    if matches!(compression, 2..=4) {
        return fax(index, v, compression, (samples, bits)).map(|f| format!("[{f}]"));
    }
    let endian = if v.header.big_endian { "big" } else { "little" };
    let bytes = match bits {
        8 | 16 | 32 | 64 => format!("{{\"name\":\"bytes\",\"configuration\":{{\"endian\":\"{endian}\"}}}}"),
        _ => format!("{{\"name\":\"imagecodecs_packints\",\"configuration\":{{\"bits\":{bits},\"row\":{row}}}}}"),
    };
    match v.int(PREDICTOR).unwrap_or(1) {
        1 => c.push(bytes),
        p if !matches!(bits, 8 | 16 | 32 | 64) => {
            return Err(unsupported(index, format!("Predictor {p} of {bits}-bit samples")))
        }
        2 => {
            // Floats as the integers of their bits (libtiff's horAcc16/32/64).
            let conf = format!("{{\"axis\":{x_axis},\"integers\":true}}");
            c.push(format!("{{\"name\":\"imagecodecs_delta\",\"configuration\":{conf}}}"));
            c.push(bytes);
        }
        3 if !dtype.starts_with("float") => return Err(unsupported(index, format!("Predictor 3 of {dtype} samples"))),
        3 => c.push(format!("{{\"name\":\"imagecodecs_floatpred\",\"configuration\":{{\"axis\":{x_axis}}}}}")),
        p => return Err(unsupported(index, format!("Predictor {p}"))),
    }
    // A last strip may be stored at full height, past the image: cropped (libtiff's reading).
    let height = v.int(IMAGE_LENGTH).unwrap_or(0);
    let th = v.int(ROWS_PER_STRIP).unwrap_or(height).min(height).max(1);
    if (v.int(TILE_WIDTH).is_none() || v.int(TILE_LENGTH).is_none()) && height % th != 0 {
        let strip = th.saturating_mul((row.saturating_mul(bits)).div_ceil(8));
        c.push(format!("{{\"name\":\"tiff_strip\",\"configuration\":{{\"bytes\":{strip}}}}}"));
    }
    match compression {
        1 => {}
        5 => c.push(String::from("{\"name\":\"imagecodecs_lzw\"}")),
        8 | 32946 => c.push(String::from("{\"name\":\"numcodecs.zlib\"}")),
        32773 => c.push(String::from("{\"name\":\"imagecodecs_packbits\"}")),
        50000 => c.push(String::from("{\"name\":\"zstd\"}")),
        n => {
            let name = match n {
                6 => "old-style JPEG",
                34925 => "LZMA",
                _ => "an unknown scheme",
            };
            return Err(unsupported(index, format!("Compression {n} ({name})")));
        }
    }
    let mut out = String::from("[");
    out.push_str(&c.join(","));
    out.push(']');
    Ok(out)
}

/// FillOrder, T4Options, T6Options.
const FILL_ORDER: u16 = 266;
const T4_OPTIONS: u16 = 292;
const T6_OPTIONS: u16 = 293;

/// Bilevel fax (compressions 2, 3, 4), one byte a pixel as `imagecodecs_packints` gives 1-bit
/// samples: its codec, or what is not read of it.
fn fax(index: usize, v: &Values, compression: u64, (samples, bits): (u64, u64)) -> Result<String, Fail> {
    let (tag, name, known) = match compression {
        3 => (T4_OPTIONS, "T4Options", 0b111),
        4 => (T6_OPTIONS, "T6Options", 0b10),
        _ => (T4_OPTIONS, "", 0),
    };
    let options = if known == 0 { 0 } else { v.int(tag).unwrap_or(0) };
    let fill = v.int(FILL_ORDER).unwrap_or(1);
    let predictor = v.int(PREDICTOR).unwrap_or(1);
    if samples != 1 || bits != 1 || predictor != 1 {
        let what = format!("Compression {compression} (CCITT fax) of {samples} {bits}-bit samples, Predictor {predictor}");
        return Err(unsupported(index, what));
    }
    if options & !known != 0 || !matches!(fill, 1 | 2) {
        return Err(unsupported(index, format!("Compression {compression} with {name} {options}, FillOrder {fill}")));
    }
    let flags = options + (fill - 1) * (1 << 32);
    Ok(format!("{{\"name\":\"imagecodecs_ccitt\",\"configuration\":{{\"compression\":{compression},\"flags\":{flags}}}}}"))
}

/// The array's attributes (JSON members): the directory it is, and its georeferencing (GeoTIFF).
/// GDAL_METADATA's band scales and offsets (`<Item name="SCALE" sample="0" role="scale">`), one
/// of each a sample (`null` where none is given); `None` when it gives none.
fn scales(xml: &str, samples: u64) -> Option<String> {
    let mut found = [alloc::vec![None; samples as usize], alloc::vec![None; samples as usize]];
    let mut any = false;
    for item in xml.split("<Item").skip(1) {
        let (tag, rest) = item.split_once('>')?;
        let a = crate::ome::attributes(tag);
        let k = match crate::ome::get(&a, "role") {
            Some("scale") => 0,
            Some("offset") => 1,
            _ => continue,
        };
        let sample = crate::ome::get(&a, "sample").and_then(|x| x.parse::<u64>().ok()).unwrap_or(0) as usize;
        let value = rest.split('<').next().and_then(|t| t.trim().parse::<f64>().ok());
        if let (Some(slot), Some(x)) = (found[k].get_mut(sample), value) {
            *slot = Some(x);
            any = true;
        }
    }
    let list = |v: &[Option<f64>]| v.iter().map(|x| x.map_or(String::from("null"), number)).collect::<Vec<_>>().join(",");
    any.then(|| format!("\"scales\":[{}],\"offsets\":[{}]", list(&found[0]), list(&found[1])))
}

/// `,"tags":{…}`: every tag of the directory by its number, its value where the bytes read hold
/// it (a number or a list; ASCII as a string; rationals divided out), else where it is:
/// `{"type":…,"count":…,"offset":…}` (a tile index, values past what was read).
fn raw_tags(j: &mut String, v: &Values) {
    j.push_str(",\"tags\":{");
    for (k, e) in v.ifd.entries.iter().enumerate() {
        if k > 0 {
            j.push(',');
        }
        j.push('"');
        j.push_str(&format!("{}", e.tag));
        j.push_str("\":");
        let got = v.bytes(e.tag).filter(|_| e.count <= 1024 || (e.typ == 2 && e.count <= RAW_TAG_BYTES));
        if !got.is_some_and(|(_, b)| value(j, v.header, e, b)) {
            let at = match e.at {
                At::Offset(o) => o,
                At::Inline(_) => 0,
            };
            j.push_str(&format!("{{\"type\":{},\"count\":{},\"offset\":{at}}}", e.typ, e.count));
        }
    }
    j.push('}');
}

/// Entry `e`'s value (`b`: its bytes) as JSON — a number or a list; ASCII as a string (up to
/// its first NUL), UNDEFINED as byte values, rationals divided out —, or `false` (nothing
/// written) when its type is none TIFF defines or `b` is short.
pub fn value(j: &mut String, h: &Header, e: &Entry, b: &[u8]) -> bool {
    let list: Vec<String> = match e.typ {
        2 => {
            json::str(j, &text(b));
            return true;
        }
        7 => b.iter().take(e.count as usize).map(|&x| number(x.into())).collect(),
        _ => match numbers(h, e, b) {
            Some(f) => f.into_iter().map(number).collect(),
            None => return false,
        },
    };
    if list.len() == 1 {
        j.push_str(&list[0]);
    } else {
        j.push('[');
        j.push_str(&list.join(","));
        j.push(']');
    }
    true
}

fn attributes(j: &mut String, index: usize, v: &Values, (nodata, samples): (Option<f64>, u64)) {
    j.push_str(&format!("\"tiff\":{{\"ifd\":{index}"));
    for (name, tag) in [("compression", COMPRESSION), ("photometric", PHOTOMETRIC), ("subfile_type", NEW_SUBFILE_TYPE)]
    {
        if let Some(x) = v.int(tag) {
            j.push_str(&format!(",\"{name}\":{x}"));
        }
    }
    raw_tags(j, v);
    j.push('}');
    let transform = match (v.floats(MODEL_TRANSFORMATION), v.floats(MODEL_PIXEL_SCALE), v.floats(MODEL_TIEPOINT)) {
        (Some(m), _, _) if m.len() >= 16 => Some([m[3], m[0], m[1], m[7], m[4], m[5]]),
        (_, Some(s), Some(t)) if s.len() >= 2 && t.len() >= 6 => {
            Some([t[3] - t[0] * s[0], s[0], 0.0, t[4] + t[1] * s[1], 0.0, -s[1]])
        }
        _ => None,
    };
    let keys = v.ints(GEO_KEY_DIRECTORY).unwrap_or_default();
    let key = |id: u64| keys.chunks(4).skip(1).find(|k| k.len() == 4 && k[0] == id && k[1] == 0).map(|k| k[3]);
    let epsg = key(3072).or_else(|| key(2048)).filter(|&c| c > 0 && c < 32767);
    let scales = v.text(GDAL_METADATA).and_then(|x| scales(&x, samples.min(1 << 10)));
    if transform.is_some() || epsg.is_some() || nodata.is_some() || scales.is_some() {
        j.push_str(",\"geotiff\":{");
        let mut first = true;
        let mut sep = |j: &mut String| {
            if !first {
                j.push(',');
            }
            first = false;
        };
        if let Some(t) = transform {
            sep(j);
            j.push_str("\"geotransform\":[");
            j.push_str(&t.iter().map(|x| number(*x)).collect::<Vec<_>>().join(","));
            j.push(']');
        }
        if let Some(c) = epsg {
            sep(j);
            j.push_str(&format!("\"epsg\":{c}"));
        }
        if let Some(r) = key(1025) {
            sep(j);
            j.push_str(if r == 2 { "\"raster_type\":\"point\"" } else { "\"raster_type\":\"area\"" });
        }
        if let Some(n) = nodata {
            sep(j);
            j.push_str(&format!("\"nodata\":{}", number(n)));
        }
        if let Some(s) = scales {
            sep(j);
            j.push_str(&s);
        }
        j.push('}');
    }
}

/// The numbers of a value of a numeric type, as f64 (rationals divided out).
pub fn numbers(h: &Header, e: &Entry, b: &[u8]) -> Option<Vec<f64>> {
    let n = usize::try_from(e.count).ok()?;
    if b.len() < n.checked_mul(type_size(e.typ)? as usize)? {
        return None;
    }
    (0..n)
        .map(|k| match e.typ {
            1 => b.get(k).map(|&v| f64::from(v)),
            6 => b.get(k).map(|&v| f64::from(v as i8)),
            3 => h.u16(b, 2 * k).map(f64::from),
            8 => h.u16(b, 2 * k).map(|v| f64::from(v as i16)),
            4 | 13 => h.u32(b, 4 * k).map(f64::from),
            9 => h.u32(b, 4 * k).map(|v| f64::from(v as i32)),
            11 => h.u32(b, 4 * k).map(|v| f64::from(f32::from_bits(v))),
            12 => h.u64(b, 8 * k).map(f64::from_bits),
            16 | 18 => h.u64(b, 8 * k).map(|v| v as f64),
            17 => h.u64(b, 8 * k).map(|v| v as i64 as f64),
            5 => Some(f64::from(h.u32(b, 8 * k)?) / f64::from(h.u32(b, 8 * k + 4)?)),
            10 => Some(f64::from(h.u32(b, 8 * k)? as i32) / f64::from(h.u32(b, 8 * k + 4)? as i32)),
            _ => None,
        })
        .collect()
}

/// The text of an ASCII value (up to its first NUL).
pub fn text(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

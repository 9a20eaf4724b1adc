//! OME-XML as OME-TIFF writers put it in the first directory's `ImageDescription`: each `Image`
//! a series, its `Pixels` (sizes, dimension order, physical sizes), its channels and its
//! `TiffData` (which directory holds which plane). Read by a small scanner of tags and
//! attributes — elements are flat enough here — with every number checked.
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// One series.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub name: String,
    pub order: String,
    /// Sizes X, Y, Z, C, T.
    pub size: [u64; 5],
    pub pixel_type: String,
    /// Physical sizes X, Y, Z and their units (`None`: not given).
    pub physical: [Option<(f64, String)>; 3],
    pub channels: Vec<Channel>,
    pub tiff_data: Vec<TiffData>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Channel {
    pub name: Option<String>,
    /// OME's signed 32-bit RGBA.
    pub color: Option<i64>,
    pub samples: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TiffData {
    pub ifd: u64,
    /// Planes from the first (`None`: every plane left, or one when `first` is given).
    pub planes: Option<u64>,
    /// First Z, C, T.
    pub first: [u64; 3],
    /// The file it names (`<UUID FileName=…>`), when one is named.
    pub file: Option<String>,
}

/// The attributes of the tag starting at `s` (after its name), up to its `>`.
pub(crate) fn attributes(s: &str) -> Vec<(&str, String)> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(eq) = rest.find('=') {
        let name = rest[..eq].trim();
        let after = rest[eq + 1..].trim_start();
        let Some(q) = after.chars().next().filter(|c| *c == '"' || *c == '\'') else { break };
        let Some(end) = after[1..].find(q) else { break };
        out.push((name, unescape(&after[1..1 + end])));
        rest = &after[end + 2..];
    }
    out
}

/// XML's five named entities and numeric character references.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let Some(semi) = rest[amp..].find(';') else { break };
        let entity = &rest[amp + 1..amp + semi];
        let ch = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "amp" => Some('&'),
            _ => match entity.strip_prefix("#x").or_else(|| entity.strip_prefix("#X")) {
                Some(h) => u32::from_str_radix(h, 16).ok().and_then(char::from_u32),
                None => entity.strip_prefix('#').and_then(|d| d.parse::<u64>().ok()).and_then(|n| char::from_u32(u32::try_from(n).ok()?)),
            },
        };
        match ch {
            Some(c) => out.push(c),
            None => out.push_str(&rest[amp..amp + semi + 1]),
        }
        rest = &rest[amp + semi + 1..];
    }
    out.push_str(rest);
    out
}

pub(crate) fn get<'a>(a: &'a [(&str, String)], name: &str) -> Option<&'a str> {
    a.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
}

fn num(a: &[(&str, String)], name: &str) -> Option<u64> {
    get(a, name)?.trim().parse().ok()
}

/// The series of an OME-XML document; none when `xml` is not one (no `<OME`).
pub fn parse(xml: &str) -> Vec<Series> {
    if !xml.contains("<OME") {
        return Vec::new();
    }
    let mut out: Vec<Series> = Vec::new();
    let mut rest = xml;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        let end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..end];
        rest = &rest[end.min(rest.len())..];
        let name_end = tag.find(|c: char| c.is_whitespace() || c == '/').unwrap_or(tag.len());
        // Namespaced names (`ome:Image`) read as their local part.
        let name = tag[..name_end].rsplit(':').next().unwrap_or("");
        let a = attributes(&tag[name_end..]);
        match name {
            "Image" => out.push(Series { name: get(&a, "Name").unwrap_or("").to_string(), ..Series::default() }),
            "Pixels" => {
                let Some(s) = out.last_mut() else { continue };
                s.order = get(&a, "DimensionOrder").unwrap_or("XYZCT").to_string();
                s.size = ["SizeX", "SizeY", "SizeZ", "SizeC", "SizeT"].map(|k| num(&a, k).unwrap_or(1));
                s.pixel_type = get(&a, "Type").unwrap_or("").to_string();
                for (k, axis) in ["X", "Y", "Z"].iter().enumerate() {
                    let size =
                        get(&a, &alloc::format!("PhysicalSize{axis}")).and_then(|v| v.trim().parse::<f64>().ok());
                    let unit = get(&a, &alloc::format!("PhysicalSize{axis}Unit")).unwrap_or("µm").to_string();
                    s.physical[k] = size.filter(|v| v.is_finite()).map(|v| (v, unit));
                }
            }
            "Channel" => {
                let Some(s) = out.last_mut() else { continue };
                // (Signed 32-bit RGBA; read through the unsigned parse the module has anyway.)
                let color = get(&a, "Color").map(str::trim).and_then(|c| match c.strip_prefix('-') {
                    Some(d) => d.parse::<u64>().ok().map(|n| (n as i64).wrapping_neg()),
                    None => c.parse::<u64>().ok().map(|n| n as i64),
                });
                let samples = num(&a, "SamplesPerPixel").unwrap_or(1);
                s.channels.push(Channel { name: get(&a, "Name").map(String::from), color, samples });
            }
            "TiffData" => {
                let Some(s) = out.last_mut() else { continue };
                let first = ["FirstZ", "FirstC", "FirstT"].map(|k| num(&a, k).unwrap_or(0));
                let t = TiffData { ifd: num(&a, "IFD").unwrap_or(0), planes: num(&a, "PlaneCount"), first, file: None };
                s.tiff_data.push(t);
            }
            "UUID" => {
                let Some(t) = out.last_mut().and_then(|s| s.tiff_data.last_mut()) else { continue };
                t.file = get(&a, "FileName").map(String::from);
            }
            _ => {}
        }
    }
    out
}

impl Series {
    /// The plane index of (z, c, t) in this series' dimension order.
    pub fn plane(&self, z: u64, c: u64, t: u64) -> u64 {
        let [_, _, sz, sc, st] = self.size;
        match self.order.as_str() {
            "XYZTC" => z + sz * (t + st * c),
            "XYCZT" => c + sc * (z + sz * t),
            "XYCTZ" => c + sc * (t + st * z),
            "XYTZC" => t + st * (z + sz * c),
            "XYTCZ" => t + st * (c + sc * z),
            _ => z + sz * (c + sc * t),
        }
    }

    /// The directory of each plane (plane index order), from `TiffData` (none: planes in
    /// directory order from `first_ifd`). `None` when a plane is in another file or missing.
    pub fn planes(&self, first_ifd: u64, this_file: &str) -> Result<Vec<u64>, String> {
        let [_, _, sz, sc, st] = self.size;
        let n =
            sz.checked_mul(sc).and_then(|x| x.checked_mul(st)).filter(|&n| n <= 1 << 20).ok_or("too many planes")?;
        if self.tiff_data.is_empty() {
            return Ok((0..n).map(|p| first_ifd + p).collect());
        }
        let mut out: Vec<Option<u64>> = alloc::vec![None; n as usize];
        for t in &self.tiff_data {
            if t.file.as_deref().is_some_and(|f| !this_file.ends_with(f)) {
                return Err(alloc::format!("planes in another file ({})", t.file.as_deref().unwrap_or("")));
            }
            let [fz, fc, ft] = t.first;
            let start = self.plane(fz, fc, ft);
            let count = t.planes.unwrap_or(if t.first == [0, 0, 0] && t.ifd == 0 { n } else { 1 });
            for k in 0..count.min(n.saturating_sub(start)) {
                out[(start + k) as usize] = Some(t.ifd + k);
            }
        }
        out.into_iter()
            .enumerate()
            .map(|(p, ifd)| {
                ifd.ok_or_else(|| alloc::format!("no directory for plane {p} (in the order {})", self.order))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_planes_and_channels() {
        let xml = r#"<?xml version="1.0"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06">
          <Image ID="Image:0" Name="cells"><Pixels DimensionOrder="XYZCT" ID="Pixels:0" SizeC="2" SizeT="3" SizeX="64" SizeY="32" SizeZ="4" Type="uint16"
            PhysicalSizeX="0.5" PhysicalSizeXUnit="&#181;m" PhysicalSizeY="0.5"><Channel ID="Channel:0:0" Name="DAPI &amp; co" SamplesPerPixel="1" Color="-16776961"/>
            <Channel ID="Channel:0:1" Name="GFP" SamplesPerPixel="1"/><TiffData IFD="0" PlaneCount="24"/></Pixels></Image>
          <Image ID="Image:1" Name="label"><Pixels DimensionOrder="XYCZT" SizeC="1" SizeT="1" SizeX="8" SizeY="8" SizeZ="1" Type="uint8">
            <TiffData FirstC="0" IFD="24"><UUID FileName="other.ome.tif">urn:uuid:x</UUID></TiffData></Pixels></Image></OME>"#;
        let s = parse(xml);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].name.as_str(), s[0].size, s[0].pixel_type.as_str()), ("cells", [64, 32, 4, 2, 3], "uint16"));
        assert_eq!(s[0].channels[0].name.as_deref(), Some("DAPI & co"));
        assert_eq!(s[0].channels[0].color, Some(-16776961));
        assert_eq!(s[0].physical[0].as_ref().map(|p| p.0), Some(0.5));
        let planes = s[0].planes(0, "x.ome.tif").unwrap();
        assert_eq!(planes.len(), 24);
        // XYZCT: z fastest, then c, then t.
        assert_eq!(planes[s[0].plane(1, 1, 2) as usize], 1 + 4 * (1 + 2 * 2));
        assert!(s[1].planes(0, "x.ome.tif").unwrap_err().contains("another file"));
        assert!(parse("<html/>").is_empty());
        for order in ["XYZCT", "XYZTC", "XYCZT", "XYCTZ", "XYTZC", "XYTCZ"] {
            let t = Series { order: order.into(), size: [1, 1, 2, 3, 4], ..Series::default() };
            // Every plane once; the first letter after XY varies fastest.
            let mut seen = [0u32; 24];
            for (z, c, tt) in (0..2).flat_map(|z| (0..3).flat_map(move |c| (0..4).map(move |tt| (z, c, tt)))) {
                seen[t.plane(z, c, tt) as usize] += 1;
            }
            assert!(seen.iter().all(|&n| n == 1), "{order}");
            let fastest = match &order[2..3] { "Z" => t.plane(1, 0, 0), "C" => t.plane(0, 1, 0), _ => t.plane(0, 0, 1) };
            assert_eq!(fastest, 1, "{order}");
        }
    }
}

//! A repository's virtual chunk containers: where its virtual chunks may be read from.
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// A virtual chunk container: its name (for `vcc://name/…` locations) and URL prefix.
#[derive(Clone, Debug, PartialEq)]
pub struct Container {
    pub name: Option<String>,
    pub prefix: String,
}

/// layout of `RepositoryConfig`): each entry of the map `virtual_chunk_containers`, its
/// `url_prefix` and `name`. Anything unreadable: none (their chunks are then refused).
pub fn containers(config: &[u8]) -> Vec<Container> {
    let mut out = Vec::new();
    let _ = flex::containers(config, &mut out);
    out.into_iter().map(|(name, prefix)| Container { name, prefix }).collect()
}

/// `url_prefix:` (and `name:`) lines of a spec-v1 `config.yaml`'s containers.
pub(super) fn yaml_containers(doc: &[u8]) -> Vec<Container> {
    let text = String::from_utf8_lossy(doc);
    let mut out: Vec<Container> = Vec::new();
    let mut name = None;
    let value = |line: &str, key: &str| -> Option<String> {
        let v = line.trim().strip_prefix(key)?.trim();
        let v = match v.as_bytes() {
            [q @ (b'\'' | b'"'), .., e] if e == q => &v[1..v.len() - 1],
            _ => v,
        };
        (!v.is_empty() && v != "null" && v != "~").then(|| v.to_string())
    };
    for line in text.lines() {
        if let Some(n) = value(line, "name:") {
            name = Some(n);
        } else if let Some(p) = value(line, "url_prefix:") {
            out.push(Container { name: name.take(), prefix: p });
        }
    }
    out
}

/// Just enough of FlexBuffers to find the containers, every read bounds-checked.
mod flex {
    use alloc::string::String;
    use alloc::vec::Vec;

    const MAP: u8 = 9;
    const STRING: u8 = 5;
    const KEY: u8 = 4;

    /// A value: where it is, the width of the slot holding it, its type and own width.
    #[derive(Clone, Copy)]
    struct Ref {
        at: usize,
        parent: usize,
        kind: u8,
        width: usize,
    }

    fn uint(b: &[u8], at: usize, w: usize) -> Option<usize> {
        let s = b.get(at..at.checked_add(w)?)?;
        let v = s.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x));
        usize::try_from(v).ok()
    }

    fn target(b: &[u8], r: Ref) -> Option<usize> {
        r.at.checked_sub(uint(b, r.at, r.parent)?)
    }

    fn text(b: &[u8], r: Ref) -> Option<String> {
        let t = target(b, r)?;
        let n = uint(b, t.checked_sub(r.width)?, r.width)?;
        Some(String::from_utf8_lossy(b.get(t..t.checked_add(n)?)?).into_owned())
    }

    fn key(b: &[u8], at: usize) -> Option<&[u8]> {
        let rest = b.get(at..)?;
        rest.get(..rest.iter().position(|&c| c == 0)?)
    }

    /// A map's entry named `name`.
    fn get(b: &[u8], map: Ref, name: &str) -> Option<Ref> {
        if map.kind != MAP {
            return None;
        }
        let (t, w) = (target(b, map)?, map.width);
        let n = uint(b, t.checked_sub(w)?, w)?;
        let keys_at = t.checked_sub(3 * w)?;
        let keys = keys_at.checked_sub(uint(b, keys_at, w)?)?;
        let kw = uint(b, t.checked_sub(2 * w)?, w)?;
        if n > b.len() || !matches!(kw, 1 | 2 | 4 | 8) {
            return None;
        }
        for i in 0..n {
            let slot = keys.checked_add(i * kw)?;
            let k = slot.checked_sub(uint(b, slot, kw)?)?;
            if key(b, k)? == name.as_bytes() {
                return entry(b, t, w, n, i);
            }
        }
        None
    }

    /// Element `i` of the vector at `t` (`n` elements of `w` bytes, their types after them).
    fn entry(b: &[u8], t: usize, w: usize, n: usize, i: usize) -> Option<Ref> {
        let packed = *b.get(t.checked_add(n.checked_mul(w)?)?.checked_add(i)?)?;
        Some(Ref { at: t.checked_add(i * w)?, parent: w, kind: packed >> 2, width: 1 << (packed & 3) })
    }

    /// (name, URL prefix) of each container.
    pub fn containers(b: &[u8], out: &mut Vec<(Option<String>, String)>) -> Option<()> {
        let (&w, rest) = b.split_last()?;
        let (&packed, _) = rest.split_last()?;
        let w = usize::from(w);
        let root = Ref { at: b.len().checked_sub(2 + w)?, parent: w, kind: packed >> 2, width: 1 << (packed & 3) };
        let all = get(b, root, "virtual_chunk_containers")?;
        if all.kind != MAP {
            return None;
        }
        let (t, w) = (target(b, all)?, all.width);
        let n = uint(b, t.checked_sub(w)?, w)?;
        for i in 0..n.min(b.len()) {
            let c = entry(b, t, w, n, i)?;
            let Some(p) = get(b, c, "url_prefix").filter(|r| r.kind == STRING || r.kind == KEY) else { continue };
            let name = get(b, c, "name").filter(|r| r.kind == STRING).and_then(|r| text(b, r));
            out.push((name, text(b, p)?));
        }
        Some(())
    }
}


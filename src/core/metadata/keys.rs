//! Chunk key encodings: how a chunk's grid coordinates name its storage object.
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

#[derive(Clone, Debug, PartialEq)]
pub enum KeyEncoding {
    /// `c/1/2` (or `c.1.2`)
    Default { separator: char },
    /// `1.2` (or `1/2`); `0` for a 0-d array
    V2 { separator: char },
    /// The draft v3 layout: `data/root/<path>/c1/2` (or `c1.2`), relative to the store root.
    Draft { prefix: String, separator: char },
}

impl KeyEncoding {
    pub fn key(&self, coords: &[u64]) -> String {
        let (prefix, sep) = match self {
            KeyEncoding::Default { separator } => (Some("c"), *separator),
            KeyEncoding::V2 { separator } => (None, *separator),
            KeyEncoding::Draft { prefix, separator } => {
                let coords: Vec<String> = coords.iter().map(|c| c.to_string()).collect();
                return format!("{prefix}c{}", coords.join(&separator.to_string()));
            }
        };
        let mut parts: Vec<String> = prefix.into_iter().map(String::from).collect();
        parts.extend(coords.iter().map(|c| c.to_string()));
        if parts.is_empty() {
            return "0".into();
        }
        parts.join(&sep.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(KeyEncoding::Default { separator: '/' }.key(&[1, 2]), "c/1/2");
        assert_eq!(KeyEncoding::Default { separator: '.' }.key(&[1, 2]), "c.1.2");
        assert_eq!(KeyEncoding::Default { separator: '/' }.key(&[]), "c");
        assert_eq!(KeyEncoding::V2 { separator: '.' }.key(&[1, 2]), "1.2");
        assert_eq!(KeyEncoding::V2 { separator: '/' }.key(&[1, 2]), "1/2");
        assert_eq!(KeyEncoding::V2 { separator: '.' }.key(&[]), "0");
        let draft = KeyEncoding::Draft { prefix: "data/root/a/b/".into(), separator: '.' };
        assert_eq!(draft.key(&[1, 2]), "data/root/a/b/c1.2");
    }
}

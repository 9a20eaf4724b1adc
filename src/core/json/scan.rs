//! Partial reads of a document's top-level object, validating all of it: [`parse_object_with`]
//! (members parsed, kept as text or skipped), [`members_at`] (a nested object in one pass),
//! [`first_str`] (stops at a member).
use super::parse::{utf8, Error, Parser};
use super::raw::Raw;
use super::value::Map;
use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::ops::Range;

/// What [`parse_object_with`] does with a top-level member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    Parse,
    /// Kept as validated text: [`Fields::raw`].
    Raw,
    /// Validated, dropped.
    Skip,
}

/// A top-level object as [`parse_object_with`] read it.
#[derive(Debug)]
pub struct Fields<'a> {
    text: &'a str,
    /// The members parsed.
    pub object: Map,
    raw: Vec<(Cow<'a, str>, Range<usize>)>,
}

impl<'a> Fields<'a> {
    /// The span in the document of member `k` kept raw (the last one of that name).
    pub fn span(&self, k: &str) -> Option<Range<usize>> {
        self.raw.iter().rev().find(|(key, _)| key == k).map(|(_, r)| r.clone())
    }
    /// The text of member `k` kept raw (the last one of that name).
    pub fn raw(&self, k: &str) -> Option<Raw> {
        self.raw_text(k).map(|t| Raw(String::from(t)))
    }
    /// The same, borrowed from the document.
    pub fn raw_text(&self, k: &str) -> Option<&'a str> {
        self.text.get(self.span(k)?)
    }
    /// Every member kept raw, in document order: name and text.
    pub fn raw_members(&self) -> impl Iterator<Item = (&str, &str)> {
        self.raw.iter().map(|(k, r)| (k.as_ref(), self.text.get(r.clone()).unwrap_or("null")))
    }
}

/// A document's top-level object, each member parsed, kept as text or skipped as `keep` says
/// for its name; `None` when the document is valid JSON but not an object. The whole document
/// is validated whatever is kept.
pub fn parse_object_with<'a>(text: &'a [u8], mut keep: impl FnMut(&str) -> Keep) -> Result<Option<Fields<'a>>, Error> {
    object_with(text, &mut keep)
}

// One copy of the walk, whatever the callers' closures (each copy costs about 2 KB of wasm).
fn object_with<'a>(text: &'a [u8], keep: &mut dyn FnMut(&str) -> Keep) -> Result<Option<Fields<'a>>, Error> {
    let (mut object, mut raw) = (Map::new(), Vec::new());
    let mut member = |key: Cow<'a, str>, p: &mut Parser<'a>| {
        match keep(&key) {
            Keep::Parse => {
                let v = p.value(1)?;
                object.0.push((key.into_owned(), v));
            }
            Keep::Raw => {
                p.ws();
                let start = p.i;
                p.skip(1)?;
                raw.push((key, start..p.i));
            }
            Keep::Skip => p.skip(1)?,
        }
        Ok(true)
    };
    let Some(text) = walk(text, &mut member)? else { return Ok(None) };
    Ok(Some(Fields { text, object, raw }))
}

/// A parser at the `{` of the top-level object of `text`; `None` when the document is valid
/// JSON but not an object.
fn at_object(text: &[u8]) -> Result<Option<Parser<'_>>, Error> {
    let s = utf8(text)?;
    let mut p = Parser { s, b: text, i: 0 };
    p.ws();
    if p.peek() != Some(b'{') {
        p.skip(0)?;
        p.end()?;
        return Ok(None);
    }
    Ok(Some(p))
}

/// What [`members_at`] found: the members of the object at the path, and the other members met
/// on the way there (their level, 0 the top, name and text), all as raw text of the document.
#[derive(Debug, Default)]
pub struct Nested<'a> {
    /// Whether the path led to an object (else `members` is empty).
    pub found: bool,
    pub members: Vec<(Cow<'a, str>, &'a str)>,
    pub beside: Vec<(usize, Cow<'a, str>, &'a str)>,
}

/// The object at `path` inside the top-level object of `text` (each name a member of the object
/// before; of a name given twice, the later, as [`Fields::raw_text`]), read in one pass: a
/// consolidated document's members without scanning it once per level. `None` when the
/// document is valid JSON but not an object. The whole document is validated.
pub fn members_at<'a>(text: &'a [u8], path: &[&str]) -> Result<Option<Nested<'a>>, Error> {
    let Some(mut p) = at_object(text)? else { return Ok(None) };
    let mut out = Nested::default();
    out.found = object_at(&mut p, path, 0, &mut out)?;
    p.end()?;
    Ok(Some(out))
}

fn object_at<'a>(p: &mut Parser<'a>, path: &[&str], level: usize, out: &mut Nested<'a>) -> Result<bool, Error> {
    p.open(level)?;
    let mut found = path.is_empty();
    if !p.close(b'}') {
        loop {
            let key = p.key()?;
            p.ws();
            let start = p.i;
            let on_path = path.first().is_some_and(|n| *n == key);
            if on_path {
                // The later of a name wins: what an earlier one gave is dropped.
                out.members.clear();
                out.beside.retain(|b| b.0 <= level);
            }
            if on_path && p.peek() == Some(b'{') {
                found = object_at(p, &path[1..], level + 1, out)?;
            } else {
                found &= !on_path;
                p.skip(level + 1)?;
                let raw = &p.s[start..p.i];
                if path.is_empty() {
                    out.members.push((key, raw));
                } else {
                    out.beside.push((level, key, raw));
                }
            }
            if p.after_member()? {
                break;
            }
        }
    }
    Ok(found)
}

/// The first member named `name` of the top-level object of `text`, when it is a string: the
/// walk stops there (a node's `node_type` without reading its attributes). `None` for anything
/// else, an invalid document included.
pub fn first_str<'a>(text: &'a [u8], name: &str) -> Option<Cow<'a, str>> {
    let mut found = None;
    let mut member = |key: Cow<'a, str>, p: &mut Parser<'a>| {
        if key != name {
            p.skip(1)?;
            return Ok(true);
        }
        p.ws();
        if p.peek() == Some(b'"') {
            found = Some(p.string()?);
        }
        Ok(false)
    };
    walk(text, &mut member).ok()?;
    found
}

/// The top-level object of `text`, each member's name handed to `member` with the parser at its
/// value, which `member` reads and says whether to go on; the text, or `None` when it is valid
/// JSON but not an object.
pub(super) fn walk<'a>(
    text: &'a [u8],
    member: &mut dyn FnMut(Cow<'a, str>, &mut Parser<'a>) -> Result<bool, Error>,
) -> Result<Option<&'a str>, Error> {
    let Some(mut p) = at_object(text)? else { return Ok(None) };
    let s = p.s;
    p.i += 1;
    if !p.close(b'}') {
        loop {
            let key = p.key()?;
            if !member(key, &mut p)? {
                return Ok(Some(s));
            }
            if p.after_member()? {
                break;
            }
        }
    }
    p.end()?;
    Ok(Some(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::parse;
    use alloc::string::ToString;

    #[test]
    fn raw_members() {
        let text = br#"{"zarr_format": 3, "attributes": {"k": [1, {"x": "\u00e9"}], "n": 1e400},
            "skipped": [1, 2, {"deep": null}], "shape": [4]}"#;
        let keep = |k: &str| match k {
            "attributes" => Keep::Raw,
            "skipped" => Keep::Skip,
            _ => Keep::Parse,
        };
        let f = parse_object_with(text, keep).unwrap().unwrap();
        assert_eq!(f.object.keys().collect::<Vec<_>>(), ["zarr_format", "shape"]);
        let raw = f.raw("attributes").unwrap();
        assert_eq!(raw.as_str(), r#"{"k": [1, {"x": "\u00e9"}], "n": 1e400}"#);
        assert!(raw.is_object());
        assert_eq!(raw.parse().unwrap()["k"][1]["x"], "é");
        assert_eq!(&text[f.span("attributes").unwrap()], raw.as_str().as_bytes());
        assert_eq!(f.raw_members().collect::<Vec<_>>(), [("attributes", raw.as_str())]);
        assert!(f.raw("skipped").is_none());
        // Round trip: the raw text back in a document reads the same.
        let again = alloc::format!("{{\"attributes\":{raw}}}");
        assert_eq!(parse(again.as_bytes()).unwrap()["attributes"], raw.parse().unwrap());
        // Skipped and raw members are validated all the same.
        fn fails<T>(r: Result<T, Error>, what: &str, at: usize) {
            let e = r.map(drop).unwrap_err();
            assert!(e.to_string().starts_with(what) && e.offset == at, "{e}, not {what} at {at}");
        }
        for (bad, what, at) in [
            (r#"{"attributes": {"a": 01}}"#, "expected `,` or `}`", 22),
            (r#"{"skipped": ["\ud800"]}"#, "lone leading surrogate in hex escape", 14),
            (r#"{"attributes": [1,]}"#, "expected value", 18),
        ] {
            fails(parse_object_with(bad.as_bytes(), keep), what, at);
        }
        assert!(parse_object_with(b"[1, 2]", keep).unwrap().is_none());
        fails(parse_object_with(b"[1, 2", keep), "EOF while parsing a list", 5);
        // The last of duplicates.
        let f = parse_object_with(br#"{"attributes": 1, "attributes": {"b": 2}}"#, keep).unwrap().unwrap();
        assert_eq!(f.raw("attributes").unwrap().as_str(), r#"{"b": 2}"#);
        assert_eq!(Raw::new(" [1] \n").unwrap().as_str(), "[1]");
        fails(Raw::new("[1"), "EOF while parsing a list", 2);
    }

    #[test]
    fn first_str_stops_at_the_first_member_of_that_name() {
        let doc = br#"{"attributes": {"node_type": "x"}, "node_type": "arr\u0061y", "node_type": "group"}"#;
        assert_eq!(first_str(doc, "node_type").as_deref(), Some("array"));
        assert_eq!(first_str(br#"{"node_type": 3}"#, "node_type"), None);
        assert_eq!(first_str(br#"{"a": 1}"#, "node_type"), None);
        assert_eq!(first_str(br#"["node_type", "array"]"#, "node_type"), None);
        assert_eq!(first_str(br#"{"a": [1,, "node_type": "array"}"#, "node_type"), None);
    }

    #[test]
    fn one_pass_to_a_nested_object() {
        let doc = br#"{"a": 1, "cm": {"kind": "inline", "metadata": {"x": {"k": [1]}, "y": "t"}, "z": null}, "b": [2]}"#;
        let n = members_at(doc, &["cm", "metadata"]).unwrap().unwrap();
        assert!(n.found);
        assert_eq!(n.members.iter().map(|(k, v)| (k.as_ref(), *v)).collect::<Vec<_>>(), [("x", r#"{"k": [1]}"#), ("y", r#""t""#)]);
        let beside: Vec<_> = n.beside.iter().map(|(l, k, v)| (*l, k.as_ref(), *v)).collect();
        assert_eq!(beside, [(0, "a", "1"), (1, "kind", r#""inline""#), (1, "z", "null"), (0, "b", "[2]")]);
        // Of a name given twice the later wins, an object or not.
        let n = members_at(br#"{"m": {"p": 1}, "m": {"q": 2}}"#, &["m"]).unwrap().unwrap();
        assert_eq!(n.members.iter().map(|(k, _)| k.as_ref()).collect::<Vec<_>>(), ["q"]);
        let n = members_at(br#"{"m": {"p": {"r": 1}}, "m": 3}"#, &["m", "p"]).unwrap().unwrap();
        assert!(!n.found && n.members.is_empty() && n.beside.iter().all(|b| b.0 == 0));
        assert!(!members_at(br#"{"m": [1]}"#, &["m"]).unwrap().unwrap().found);
        assert!(members_at(b"[1]", &["m"]).unwrap().is_none());
        let e = members_at(br#"{"m": {"p": 1}"#, &["m"]).map(drop).unwrap_err();
        assert!(e.to_string().starts_with("EOF while parsing an object") && e.offset == 14, "{e}");
        let e = members_at(br#"{"m": {"p": 1}} x"#, &["m"]).map(drop).unwrap_err();
        assert!(e.to_string().starts_with("trailing characters") && e.offset == 16, "{e}");
    }
}

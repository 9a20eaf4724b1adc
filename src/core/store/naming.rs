//! URLs inside stacked layers as the pipeline that reads them names them: the object at
//! `https://h/a.zip/inner.zip/raw/c/0` (an archive inside an archive) is
//! `https://h/a.zip|zip:inner.zip|zip:raw/c/0`, a URL that opens it again. Inside one layer
//! alone a URL keeps its `container/key` form (`https://h/a.zip/raw/c/0`): it is not ambiguous
//! there, and it is the form the API has always reported.
use super::registry::Layer;
use crate::core::error::Error;
use alloc::format;
use alloc::string::String;

/// `url` as the pipeline of the innermost of `layers` holding it names it (with two layers or more).
pub fn display(layers: &[Layer], url: &str) -> String {
    if layers.len() < 2 {
        return String::from(url);
    }
    pipeline(layers, url)
}

/// The URL of a node (an array, a group) inside stacked layers as a pipeline: a node at the root
/// of the innermost layer is `…|kind:`, where its children's paths follow.
pub fn display_node(layers: &[Layer], url: &str) -> String {
    let base = |u: &str| String::from(u.split(['?', '#']).next().unwrap_or(u).trim_end_matches('/'));
    match layers.last() {
        Some(last) if layers.len() >= 2 && base(url) == base(last.url()) => {
            let n = layers.len();
            format!("{}|{}:{}", pipeline(&layers[..n - 1], last.url()), last.name(), last.stage_text(""))
        }
        _ => display(layers, url),
    }
}

/// `url` as the pipeline of the innermost of `layers` holding it names it, whatever their number.
pub fn pipeline(layers: &[Layer], url: &str) -> String {
    for (i, layer) in layers.iter().enumerate().rev() {
        if let Some(key) = layer.key(url) {
            return format!("{}|{}:{}", pipeline(&layers[..i], layer.url()), layer.name(), layer.stage_text(key));
        }
    }
    String::from(url)
}

/// Where a URL in a message ends: at white space, a quote or bracket, or ": ".
fn url_end(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'"' | b'\'' | b')' | b']' | b',' | b';' | b'\n' => break,
            b':' if b.get(i + 1).is_none_or(|&n| n == b' ') => break,
            _ => i += 1,
        }
    }
    i
}

/// `e` with every URL inside stacked layers named as [`display`] names it.
pub fn name_error(layers: &[Layer], mut e: Error) -> Error {
    let Some(outer) = layers.first().filter(|_| layers.len() > 1) else { return e };
    let base = outer.url().split(['?', '#']).next().unwrap_or("").trim_end_matches('/');
    let prefix = format!("{base}/");
    let mut out = String::new();
    let mut rest = e.message.as_str();
    while let Some(at) = rest.find(prefix.as_str()) {
        out.push_str(&rest[..at]);
        let n = url_end(&rest[at..]);
        out.push_str(&display(layers, &rest[at..at + n]));
        rest = &rest[at + n..];
    }
    out.push_str(rest);
    e.message = out;
    e
}

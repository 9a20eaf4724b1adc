//! Documents known without a request — the members of a group's consolidated metadata — laid
//! over a store: reading one costs nothing. A document it does not hold is read from the store
//! as usual (a member missing from the consolidated metadata is never taken for absent), but for
//! the files a consolidated Zarr v2 node is known to lack (its `.zattrs`, say).
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

fn node_is_array(doc: &[u8]) -> bool {
    crate::core::json::first_str(doc, "node_type").is_some_and(|t| t == "array")
}

/// The documents a node may have (any format); a consolidated Zarr v2 node lacks those not
/// held ([`Known::lacking`]).
pub const NODE_FILES: [&str; 6] = ["zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata", "info"];

#[derive(Debug, Default)]
pub struct Known {
    /// By URL (without its query), sorted; `None`: known to be absent.
    docs: Vec<(String, Option<Rc<Vec<u8>>>)>,
    /// Nodes (URLs, sorted) whose documents not held are absent; the first, the group read,
    /// still has its own `.zmetadata`.
    complete: Vec<String>,
    root: String,
}

impl Known {
    /// `docs`: (URL, text, or `None` for a document known to be absent).
    pub fn new(docs: Vec<(String, Option<Vec<u8>>)>) -> Known {
        let docs: Vec<(String, Option<Rc<Vec<u8>>>)> = docs.into_iter().map(|(u, d)| (u, d.map(Rc::new))).collect();
        // Compared past the prefix they all share (the group's URL), not through it at every
        // comparison (a few ms of the open of a group of 3,000 arrays).
        let first = docs.first().map_or(&[][..], |(u, _)| u.as_bytes());
        let shared = docs.iter().fold(first.len(), |n, (u, _)| {
            first.iter().zip(u.as_bytes()).take(n).take_while(|(a, b)| a == b).count()
        });
        let keys: Vec<&[u8]> = docs.iter().map(|(u, _)| &u.as_bytes()[shared..]).collect();
        let order = crate::core::nd::order(docs.len(), &|a, b| keys[a] < keys[b]);
        let mut slots: Vec<Option<(String, Option<Rc<Vec<u8>>>)>> = docs.into_iter().map(Some).collect();
        let mut sorted: Vec<(String, Option<Rc<Vec<u8>>>)> = Vec::with_capacity(slots.len());
        for i in order {
            if let Some(d) = slots[i].take() {
                // A URL given twice: the later one.
                if sorted.last().is_some_and(|(u, _)| *u == d.0) {
                    sorted.pop();
                }
                sorted.push(d);
            }
        }
        Known { docs: sorted, complete: Vec::new(), root: String::new() }
    }

    /// The same, and the nodes `nodes` (a consolidated v2 group's, `root` the group read) known
    /// to lack every document of theirs not held: their `.zattrs`, a `zarr.json`, … need no
    /// request. (Said of each node, not listed as a document each: 18,000 more URLs to build
    /// and sort for a group of 3,000 arrays.)
    pub fn lacking(mut self, nodes: Vec<String>, root: &str) -> Known {
        let order = crate::core::nd::order(nodes.len(), &|a, b| nodes[a] < nodes[b]);
        let mut slots: Vec<Option<String>> = nodes.into_iter().map(Some).collect();
        self.complete = order.into_iter().filter_map(|i| slots[i].take()).collect();
        self.complete.dedup();
        self.root = String::from(root);
        self
    }

    /// `Some(Some(text))` for a held document, `Some(None)` for one known absent, `None` when
    /// nothing is known of it. `url` may carry a query.
    pub fn get(&self, url: &str) -> Option<Option<Rc<Vec<u8>>>> {
        let (base, _) = crate::core::urls::split_url(url);
        if let Ok(i) = self.docs.binary_search_by(|(u, _)| u.as_str().cmp(base.as_str())) {
            return Some(self.docs[i].1.clone());
        }
        let (node, file) = base.rsplit_once('/')?;
        let lacks = NODE_FILES.contains(&file)
            && !(file == ".zmetadata" && node == self.root)
            && self.complete.binary_search_by(|n| n.as_str().cmp(node)).is_ok();
        lacks.then_some(None)
    }

    /// The direct children of the node at `node` (a URL without query) these documents
    /// describe: (name, whether it is an array), by name.
    pub fn children_of(&self, node: &str) -> Vec<(String, bool)> {
        let prefix = alloc::format!("{}/", node.trim_end_matches('/'));
        let mut out: Vec<(String, bool)> = Vec::new();
        for (url, doc) in &self.docs {
            let (Some(rest), Some(doc)) = (url.strip_prefix(prefix.as_str()), doc) else { continue };
            let Some((name, file)) = rest.split_once('/') else { continue };
            let array = match file {
                ".zarray" => true,
                ".zgroup" => false,
                // The node type, read without parsing the rest (a member's attributes may be large).
                "zarr.json" => node_is_array(doc),
                _ => continue,
            };
            // A child's documents are neighbours in URL order (they share "<node>/<name>/").
            if out.last().is_none_or(|(n, _)| n != name) {
                out.push((String::from(name), array));
            }
        }
        out
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether it holds no document (nodes known to lack some do not count).
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_once_each_and_a_held_document_over_an_absent_one() {
        let doc = |t: &str| Some(t.as_bytes().to_vec());
        let k = Known::new(alloc::vec![
            (String::from("n/a/.zattrs"), None),
            (String::from("n/b/zarr.json"), doc(r#"{"node_type":"group"}"#)),
            (String::from("n/a/.zarray"), doc("{}")),
            (String::from("n/a/.zattrs"), doc("{}")),
            (String::from("n/a-b/zarr.json"), doc(r#"{"node_type":"array"}"#)),
            (String::from("n/a/c/zarr.json"), doc(r#"{"node_type":"array"}"#)),
            (String::from("n/a/.zgroup"), None),
        ]);
        let names: Vec<(String, bool)> = k.children_of("n");
        let want = [("a-b", true), ("a", true), ("b", false)].map(|(n, a)| (String::from(n), a));
        assert_eq!(names, want);
        assert_eq!(k.get("n/a/.zattrs"), Some(Some(Rc::new(b"{}".to_vec()))));
        assert_eq!(k.get("n/a/.zgroup?x=1"), Some(None));
        assert_eq!(k.get("n/c/zarr.json"), None);
        assert_eq!(k.children_of("n/a"), [(String::from("c"), true)]);
    }

    #[test]
    fn what_a_complete_node_does_not_hold_it_lacks() {
        let doc = |u: &str| (String::from(u), Some(b"{}".to_vec()));
        let k = Known::new(alloc::vec![doc("g/.zgroup"), doc("g/.zmetadata"), doc("g/x/.zarray"), doc("g/x/.zattrs"), doc("g/y/.zarray")])
            .lacking(alloc::vec![String::from("g/y"), String::from("g"), String::from("g/x")], "g");
        assert_eq!(k.get("g/x/.zattrs"), Some(Some(Rc::new(b"{}".to_vec()))));
        for lacking in ["g/y/.zattrs", "g/y/zarr.json?sig=1", "g/x/.zgroup", "g/.zattrs", "g/x/.zmetadata", "g/y/info"] {
            assert_eq!(k.get(lacking), Some(None), "{lacking}");
        }
        // Not said: a chunk, a node not listed, the group's own .zmetadata (held here anyway).
        for unknown in ["g/x/0.0", "g/z/.zarray", "g/x/c/.zarray", "h/.zattrs"] {
            assert_eq!(k.get(unknown), None, "{unknown}");
        }
        let bare = Known::new(alloc::vec![]).lacking(alloc::vec![String::from("g")], "g");
        assert_eq!(bare.get("g/.zmetadata"), None);
        assert!(bare.is_empty());
    }
}

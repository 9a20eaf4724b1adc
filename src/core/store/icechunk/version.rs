//! Which version of a repository to read ([`Version`]: a branch, a tag or a snapshot id), and
//! object ids as file names spell them (Crockford base 32).
use crate::core::error::{Error, ErrorCode, Result};
use alloc::format;
use alloc::string::{String, ToString};


/// Which version of the repository to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Version {
    Branch(String),
    Tag(String),
    /// A snapshot id (20 characters of Crockford base 32).
    Snapshot(String),
}

impl Version {
    /// Neuroglancer's spelling: `@branch.main`, `@tag.v1`, `@<snapshot id>`.
    pub fn parse(at: &str) -> Result<Version> {
        let v = match (at.strip_prefix("branch."), at.strip_prefix("tag.")) {
            (Some(b), _) => Version::Branch(b.to_string()),
            (_, Some(t)) => Version::Tag(t.to_string()),
            _ => Version::Snapshot(at.to_string()),
        };
        v.checked()
    }

    /// Names that are path segments, ids that are ids: nothing here can leave the repository.
    pub fn checked(self) -> Result<Version> {
        let ok = match &self {
            Version::Branch(n) | Version::Tag(n) => {
                !n.is_empty() && !n.contains(['/', '\\', '?', '#']) && n != ".." && n != "."
            }
            Version::Snapshot(id) => id.len() == 20 && id.bytes().all(|b| CROCKFORD.contains(&b.to_ascii_uppercase())),
        };
        if ok {
            return Ok(match self {
                Version::Snapshot(id) => Version::Snapshot(id.to_ascii_uppercase()),
                v => v,
            });
        }
        Err(Error::new(
            ErrorCode::InvalidSelection,
            format!("{}: not a branch, tag or snapshot id of an Icechunk repository", self.spelled()),
        ))
    }

    /// `@branch.main` (as Neuroglancer writes it).
    pub fn spelled(&self) -> String {
        match self {
            Version::Branch(b) => format!("@branch.{b}"),
            Version::Tag(t) => format!("@tag.{t}"),
            Version::Snapshot(s) => format!("@{s}"),
        }
    }
}

pub(super) const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// An object id as file names spell it: Crockford base 32, upper case, no padding.
pub fn base32(id: &[u8]) -> String {
    let (mut out, mut acc, mut bits) = (String::new(), 0u32, 0);
    for &b in id {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(CROCKFORD[(acc >> bits) as usize & 31]));
        }
    }
    if bits > 0 {
        out.push(char::from(CROCKFORD[(acc << (5 - bits)) as usize & 31]));
    }
    out
}

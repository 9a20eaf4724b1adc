//! Versions of HTTP objects: what the first answer for an object said of its version (a strong or
//! weak `ETag`, else `Last-Modified`; the object's size where the answer shows it), kept for every
//! later answer to be checked against. An answer of another version is a change: the object's
//! epoch moves on (what was derived from it, stamped with the old epoch, is no longer served) and
//! the read that met it fails with `Changed` (the read path resolves it again). Shared by the
//! transports of every node opened from one another, as the layers they share are.
//!
//! Stamps: the epoch of an HTTP object, or for a key inside a layer (an archive's entry) the
//! tree's generation, which moves on with any change; a value cached under a stamp is served only
//! while its stamp is the current one.
use super::http::Response;
use crate::core::error::{Error, ErrorCode, Result};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

/// How long what was read is trusted before it is checked again (the `recheck` option).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Recheck {
    /// Every answer is checked against the version first read (no request of its own); nothing
    /// cached is asked about again while nothing shows a change.
    Open,
    /// As `Open`, and what was last confirmed more than this many milliseconds ago is checked
    /// with one request (`HEAD`) before it is used again; the array's metadata too.
    After(f64),
    /// Never checked: the objects are taken as immutable (answers are not compared).
    Never,
}

/// Whether ranged reads ask the server to refuse a stale answer (the `conditional` option).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conditional {
    /// No condition: a change is seen in the answer's validators (no preflight of its own).
    None,
    /// `If-Match` (or `If-Unmodified-Since`): a changed object answers 412.
    IfMatch,
    /// `If-Range`: a changed object answers 200 with its new whole (kept, as for a server
    /// that ignores ranges).
    IfRange,
}

/// What an answer says of its object's version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Version {
    pub etag: Option<String>,
    pub modified: Option<String>,
    pub size: Option<u64>,
}

impl Version {
    /// The version an answer shows (its size: the total of a `Content-Range` that names the
    /// bytes `asked` for — one that does not is refused where it is read, not taken for a change
    /// —, a whole body's length, a `HEAD`'s `Content-Length`).
    pub fn of(r: &Response, whole_body: bool, head: bool, asked: Option<&str>) -> Version {
        let answered = r.content_range.as_deref().and_then(super::http::parse_content_range);
        let total = answered.and_then(|(a, b, t)| {
            let t = t.filter(|&t| b < t)?;
            let (x, y) = asked?.trim().strip_prefix("bytes=")?.split_once('-')?;
            let fits = match (x.parse::<u64>().ok(), y.parse::<u64>().ok()) {
                // `bytes=x-y`: those bytes, or up to the end of a shorter object.
                (Some(x), Some(y)) => a == x && (b == y || (b < y && b + 1 == t)),
                // `bytes=-n`: the last n bytes, or all of a shorter object.
                (None, Some(n)) => b + 1 == t && (b + 1 - a == n || (a == 0 && t < n)),
                _ => false,
            };
            fits.then_some(t)
        });
        let size = match r.status {
            206 => total,
            200 if head => r.content_length,
            200 if whole_body => Some(r.body.len() as u64),
            // `bytes */N`: a range past the end of an object of N bytes.
            416 => r.content_range.as_deref().and_then(|v| v.trim().strip_prefix("bytes */")?.trim().parse().ok()),
            _ => None,
        };
        let clean = |v: &Option<String>| v.as_deref().map(str::trim).filter(|v| !v.is_empty()).map(String::from);
        Version { etag: clean(&r.etag), modified: clean(&r.last_modified), size }
    }

    /// Whether it says anything that can be compared.
    pub fn known(&self) -> bool {
        self.etag.is_some() || self.modified.is_some() || self.size.is_some()
    }

    /// Whether `other` is another version: `ETag`s compared weakly (RFC 9110: `W/` aside; a
    /// server that compresses an answer weakens its tag), else `Last-Modified`; sizes when both
    /// are known.
    pub fn differs(&self, other: &Version) -> bool {
        let tag = |t: &str| String::from(t.strip_prefix("W/").unwrap_or(t));
        let by_validator = match (&self.etag, &other.etag, &self.modified, &other.modified) {
            (Some(a), Some(b), _, _) => tag(a) != tag(b),
            (_, _, Some(a), Some(b)) => a != b,
            _ => false,
        };
        by_validator || matches!((self.size, other.size), (Some(a), Some(b)) if a != b)
    }

    /// What `other` tells that this does not (a size learned later).
    fn merge(&mut self, other: &Version) {
        if self.etag.is_none() {
            self.etag.clone_from(&other.etag);
        }
        if self.modified.is_none() {
            self.modified.clone_from(&other.modified);
        }
        if self.size.is_none() {
            self.size = other.size;
        }
    }

    /// A strong `ETag`, which `If-Match` and `If-Range` may carry.
    pub fn strong_etag(&self) -> Option<&str> {
        self.etag.as_deref().filter(|t| !t.starts_with("W/"))
    }
}

impl core::fmt::Display for Version {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match (&self.etag, &self.modified, self.size) {
            (Some(t), _, _) => write!(f, "ETag {t}"),
            (None, Some(m), _) => write!(f, "Last-Modified {m}"),
            (None, None, Some(n)) => write!(f, "{n} bytes"),
            _ => f.write_str("unknown"),
        }
    }
}

/// What an answer showed: a version, or that the object does not exist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    Version(Version),
    Missing,
}

impl Seen {
    fn shown(&self) -> String {
        match self {
            Seen::Version(v) => format!("{v}"),
            Seen::Missing => String::from("absent"),
        }
    }
}

#[derive(Default)]
struct Object {
    url: String,
    /// To be confirmed before it is used again, whatever `recheck` says (what it describes
    /// looked newer than it).
    suspect: bool,
    /// The object that says where this one's bytes are (a reference file, of its targets).
    described_by: Option<String>,
    now: Option<Seen>,
    /// Versions it had before (a late answer of one is stale, not a change back).
    old: Vec<Version>,
    epoch: u64,
    /// When an answer last confirmed `now` (the client's clock).
    checked: Option<f64>,
}

/// The objects of a tree, sorted by URL (a vector: a map type would cost the module kilobytes).
#[derive(Default)]
struct Objects(Vec<Object>);

impl Objects {
    fn get(&self, url: &str) -> Option<&Object> {
        self.0.binary_search_by(|o| o.url.as_str().cmp(url)).ok().map(|i| &self.0[i])
    }
    fn entry(&mut self, url: &str) -> &mut Object {
        let i = match self.0.binary_search_by(|o| o.url.as_str().cmp(url)) {
            Ok(i) => i,
            Err(i) => {
                self.0.insert(i, Object { url: String::from(url), ..Object::default() });
                i
            }
        };
        &mut self.0[i]
    }
}

/// The versions of the objects a tree of nodes reads.
pub struct Versions {
    objects: RefCell<Objects>,
    /// URL prefixes of objects that never change (an Icechunk repository's snapshots,
    /// manifests and chunks, named by their content): their answers are not compared.
    immutable: RefCell<Vec<String>>,
    generation: Cell<u64>,
    pub recheck: Recheck,
    pub conditional: Conditional,
}

/// Versions kept of an object's past (stale answers known as such).
const OLD: usize = 4;

/// Seconds by which a target's `Last-Modified` must follow its reference file's to look newer.
const NEWER: i64 = 10;

impl Versions {
    pub fn new(recheck: Recheck, conditional: Conditional) -> Self {
        Versions { objects: RefCell::default(), immutable: RefCell::default(), generation: Cell::new(0), recheck, conditional }
    }

    /// The epoch of the object at `url`: it moves on when the object changes.
    pub fn epoch(&self, url: &str) -> u64 {
        self.objects.borrow().get(url).map_or(0, |o| o.epoch)
    }

    /// The tree's generation: it moves on when any object changes.
    pub fn generation(&self) -> u64 {
        self.generation.get()
    }

    /// The version recorded for `url`, if one is.
    pub fn current(&self, url: &str) -> Option<Version> {
        match self.objects.borrow().get(url)?.now.as_ref()? {
            Seen::Version(v) => Some(v.clone()),
            Seen::Missing => None,
        }
    }

    /// When an answer last confirmed the version of `url` (the client's clock).
    pub fn checked(&self, url: &str) -> Option<f64> {
        self.objects.borrow().get(url)?.checked
    }

    /// Whether what is known of `url` was last confirmed longer ago than `recheck` allows (at
    /// `now`, the client's clock; without one, never).
    pub fn stale(&self, url: &str, now: Option<f64>) -> bool {
        let objects = self.objects.borrow();
        let Some(o) = objects.get(url) else { return false };
        if o.suspect {
            return true;
        }
        let (Recheck::After(ms), Some(now)) = (self.recheck, now) else { return false };
        o.checked.is_none_or(|t| now - t > ms)
    }

    /// The objects under `prefix` never change (named by their content): not compared. (A copy
    /// whose dates differ, with the `ETag` hidden, would look like a change of every one.)
    pub fn immutable(&self, prefix: &str) {
        let mut list = self.immutable.borrow_mut();
        if !list.iter().any(|p| p == prefix) {
            list.push(String::from(prefix));
        }
    }

    /// Where the bytes of the object at `target` are is what the object at `by` says (a
    /// reference file's ranges of its targets). A target first read in a version newer than
    /// that object (its `Last-Modified` later) is then a sign the two were rewritten: the
    /// read fails with `Changed` and `by` is confirmed before it is used again.
    pub fn described_by(&self, target: &str, by: &str) {
        if self.recheck == Recheck::Never || self.objects.borrow().get(target).is_some_and(|o| o.described_by.is_some()) {
            return;
        }
        self.objects.borrow_mut().entry(target).described_by = Some(String::from(by));
    }

    /// Whether `target`'s first version looks newer than what describes it; if so, that is
    /// marked to be confirmed before use.
    fn newer_than_its_description(objects: &mut Objects, target: &str, seen: &Seen) -> Option<String> {
        let by = objects.get(target)?.described_by.clone()?;
        let mine = match seen {
            Seen::Version(v) => http_seconds(v.modified.as_deref()?)?,
            Seen::Missing => return None,
        };
        let o = objects.entry(&by);
        let theirs = match &o.now {
            Some(Seen::Version(v)) => http_seconds(v.modified.as_deref()?)?,
            _ => return None,
        };
        // (Files written together, a checkout or a copy, a few seconds apart, are not newer.)
        if mine <= theirs + NEWER {
            return None;
        }
        o.suspect = true;
        Some(by)
    }

    /// Whether an answer showing `v` is, without a doubt, of the version recorded for `url`
    /// at `epoch` (what [`observe`](Self::observe) will confirm): none recorded yet is no.
    pub fn agrees(&self, url: &str, epoch: u64, v: &Version) -> bool {
        if self.recheck == Recheck::Never || self.immutable.borrow().iter().any(|p| url.starts_with(p.as_str())) {
            return true;
        }
        let objects = self.objects.borrow();
        let Some(o) = objects.get(url).filter(|o| o.epoch == epoch) else { return false };
        matches!(&o.now, Some(Seen::Version(a)) if !a.differs(v))
    }

    /// An answer for `url` showed `seen` (at `now`): the first is recorded; one of the version
    /// recorded confirms it; another is a change — the epoch and the generation move on, and
    /// the read fails with `Changed` — or, of a version the object had before, a stale answer
    /// (`Changed` too, nothing recorded).
    pub fn observe(&self, url: &str, seen: Seen, now: Option<f64>) -> Result<()> {
        if self.recheck == Recheck::Never || self.immutable.borrow().iter().any(|p| url.starts_with(p.as_str())) {
            return Ok(());
        }
        if let Seen::Version(v) = &seen {
            if !v.known() {
                return Ok(());
            }
        }
        let mut objects = self.objects.borrow_mut();
        if objects.get(url).is_none_or(|o| o.now.is_none()) {
            let stale = Self::newer_than_its_description(&mut objects, url, &seen);
            let o = objects.entry(url);
            o.now = Some(seen);
            o.checked = now;
            return match stale {
                None => Ok(()),
                Some(by) => Err(Error::new(
                    ErrorCode::Changed,
                    format!("{url}: newer than {by}, which says where its bytes are: {by} is read again"),
                )),
            };
        }
        let o = objects.entry(url);
        let was = match (&mut o.now, &seen) {
            // (Handled above.)
            (None, _) | (Some(Seen::Missing), Seen::Missing) => None,
            (Some(Seen::Version(a)), Seen::Version(b)) if !a.differs(b) => {
                a.merge(b);
                None
            }
            (Some(was), _) => Some(was.clone()),
        };
        let Some(was) = was else {
            o.checked = now.or(o.checked);
            o.suspect = false;
            return Ok(());
        };
        if let Seen::Version(b) = &seen {
            if o.old.iter().any(|a| !a.differs(b)) {
                let why = format!("{url}: an answer of an earlier version ({}) arrived after {}; read again", seen.shown(), was.shown());
                return Err(Error::new(ErrorCode::Changed, why));
            }
        }
        if let Seen::Version(a) = &was {
            if o.old.len() == OLD {
                o.old.remove(0);
            }
            o.old.push(a.clone());
        }
        let why = format!("{url}: changed while open ({} → {})", was.shown(), seen.shown());
        o.now = Some(seen);
        o.checked = now;
        o.suspect = false;
        let g = self.generation.get() + 1;
        self.generation.set(g);
        o.epoch = g;
        // What says where its bytes are was likely rewritten with it: confirmed before use.
        if let Some(by) = o.described_by.clone() {
            objects.entry(&by).suspect = true;
        }
        Err(Error::new(ErrorCode::Changed, why))
    }

    /// The object at `url` changed in a way no answer showed (a conditional read refused, a
    /// layer's own check): what is derived from it is dropped, and its next answer recorded
    /// afresh.
    pub fn changed(&self, url: &str, why: &str) -> Error {
        let mut objects = self.objects.borrow_mut();
        let o = objects.entry(url);
        if let Some(Seen::Version(a)) = o.now.take() {
            if o.old.len() == OLD {
                o.old.remove(0);
            }
            o.old.push(a);
        }
        o.checked = None;
        let g = self.generation.get() + 1;
        self.generation.set(g);
        o.epoch = g;
        Error::new(ErrorCode::Changed, format!("{url}: changed while open ({why})"))
    }
}

/// Seconds since 1970 of an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110's
/// IMF-fixdate; the obsolete forms are not read).
fn http_seconds(d: &str) -> Option<i64> {
    let mut p = d.split_whitespace().skip(1);
    let day: i64 = p.next()?.parse().ok()?;
    let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].iter().position(|m| Some(*m) == p.clone().next())? as i64 + 1;
    p.next();
    let year: i64 = p.next()?.parse().ok()?;
    let mut t = p.next()?.split(':').map(|x| x.parse::<i64>().ok());
    let (h, m, s) = (t.next()??, t.next()??, t.next()??);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(etag: Option<&str>, modified: Option<&str>, size: Option<u64>) -> Version {
        Version { etag: etag.map(String::from), modified: modified.map(String::from), size }
    }

    #[test]
    fn validators_compare_as_rfc_9110_has_it() {
        let a = v(Some("\"a\""), Some("Mon, 01 Jan 2024 00:00:00 GMT"), Some(10));
        assert!(!a.differs(&v(Some("W/\"a\""), None, None)), "weak comparison");
        assert!(a.differs(&v(Some("\"b\""), Some("Mon, 01 Jan 2024 00:00:00 GMT"), Some(10))), "the tag decides");
        assert!(!a.differs(&v(None, Some("Mon, 01 Jan 2024 00:00:00 GMT"), None)), "Last-Modified when a tag is hidden");
        assert!(a.differs(&v(None, Some("Tue, 02 Jan 2024 00:00:00 GMT"), None)));
        assert!(a.differs(&v(None, None, Some(11))), "sizes when both are known");
        assert!(!a.differs(&v(None, None, None)));
        assert_eq!(a.strong_etag(), Some("\"a\""));
        assert_eq!(v(Some("W/\"a\""), None, None).strong_etag(), None);
    }

    #[test]
    fn a_change_moves_the_epoch_once_and_a_late_old_answer_is_stale() {
        let s = Versions::new(Recheck::Open, Conditional::None);
        let seen = |t: &str| Seen::Version(v(Some(t), None, Some(4)));
        s.observe("u", seen("\"1\""), None).unwrap();
        s.observe("u", seen("\"1\""), None).unwrap();
        assert_eq!((s.epoch("u"), s.generation()), (0, 0));
        let e = s.observe("u", seen("\"2\""), None).unwrap_err();
        assert_eq!(e.code, ErrorCode::Changed);
        assert!(e.message.contains("u: changed while open (ETag \"1\" → ETag \"2\")"), "{}", e.message);
        assert_eq!((s.epoch("u"), s.epoch("other"), s.generation()), (1, 0, 1));
        s.observe("u", seen("\"2\""), None).unwrap();
        // An answer sent before the change, arriving after it: stale, not a change back.
        let e = s.observe("u", seen("\"1\""), None).unwrap_err();
        assert_eq!(e.code, ErrorCode::Changed);
        assert!(e.message.contains("earlier version"), "{}", e.message);
        assert_eq!((s.epoch("u"), s.current("u").unwrap().etag.as_deref()), (1, Some("\"2\"")));
        // Gone, then back: both changes.
        assert_eq!(s.observe("u", Seen::Missing, None).unwrap_err().code, ErrorCode::Changed);
        assert_eq!(s.observe("u", seen("\"3\""), None).unwrap_err().code, ErrorCode::Changed);
        assert_eq!(s.generation(), 3);
        // Nothing to compare: not a change.
        s.observe("u", Seen::Version(Version::default()), None).unwrap();
        let never = Versions::new(Recheck::Never, Conditional::None);
        never.observe("u", seen("\"1\""), None).unwrap();
        never.observe("u", seen("\"2\""), None).unwrap();
        assert_eq!(never.generation(), 0);
    }

    #[test]
    fn http_dates() {
        assert_eq!(http_seconds("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784_111_777));
        assert_eq!(http_seconds("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(http_seconds("Sun, 06 Dec 2026 05:31:09 GMT"), Some(1_796_535_069));
        assert_eq!(http_seconds("yesterday"), None);
    }

    #[test]
    fn a_target_newer_than_its_references_is_a_change_of_them() {
        let s = Versions::new(Recheck::Open, Conditional::None);
        let at = |t: &str| Seen::Version(v(None, Some(t), None));
        s.observe("refs", at("Mon, 01 Jan 2024 00:00:10 GMT"), None).unwrap();
        s.described_by("old", "refs");
        s.described_by("new", "refs");
        s.observe("old", at("Mon, 01 Jan 2024 00:00:20 GMT"), None).unwrap();
        assert!(!s.stale("refs", None), "within seconds: written together");
        let e = s.observe("new", at("Mon, 01 Jan 2024 00:00:21 GMT"), None).unwrap_err();
        assert_eq!(e.code, ErrorCode::Changed);
        assert!(e.message.contains("new: newer than refs"), "{}", e.message);
        assert!(s.stale("refs", None), "confirmed before its next use");
        // Confirmed unchanged: no longer suspect, and the target's version is known.
        s.observe("refs", at("Mon, 01 Jan 2024 00:00:10 GMT"), None).unwrap();
        assert!(!s.stale("refs", None));
        s.observe("new", at("Mon, 01 Jan 2024 00:00:21 GMT"), None).unwrap();
    }

    #[test]
    fn staleness_follows_the_clock() {
        let s = Versions::new(Recheck::After(1000.0), Conditional::None);
        let seen = Seen::Version(v(Some("\"1\""), None, None));
        assert!(!s.stale("u", Some(0.0)), "nothing known");
        s.observe("u", seen.clone(), Some(0.0)).unwrap();
        assert!(!s.stale("u", Some(1000.0)));
        assert!(s.stale("u", Some(1001.0)));
        assert!(!s.stale("u", None), "no clock");
        s.observe("u", seen, Some(1500.0)).unwrap();
        assert!(!s.stale("u", Some(2000.0)));
        let open = Versions::new(Recheck::Open, Conditional::None);
        open.observe("u", Seen::Missing, Some(0.0)).unwrap();
        assert!(!open.stale("u", Some(1e12)));
    }
}

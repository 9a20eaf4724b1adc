//! One request at a time, as the network allows: retried on network errors and transient
//! statuses with exponential backoff and full jitter, within the attempts and the time budget;
//! answers bounded by the limits and the bytes asked for; counted.
use super::http::{retry_after_ms, short, transient, CacheMode, Condition, Early, HttpClient, Method, Request, Response};
use super::versions::{Conditional, Seen, Version};
use super::Transport;
use crate::core::error::{too_large, Error, ErrorCode, Result};
use alloc::format;
use alloc::string::String;

impl Transport {
    /// A request whose answer may not exceed `maxDecodedBytes` (nor a merged read's size):
    /// a ranged request too, as a server that ignores Range answers with the whole object.
    /// `asked`: the bytes a ranged request asks for (a 206 may carry no more), reserved from
    /// the budget of answers in flight while it runs.
    pub(super) async fn send<C: HttpClient>(
        &self,
        c: &C,
        method: Method,
        url: &str,
        range: Option<(String, u64)>,
        cap: Option<u64>,
    ) -> Result<Response> {
        // `cap`: a read that is only a hint stops there even on a 200 (a server ignoring Range).
        let limit = cap.unwrap_or(u64::MAX).min(self.config.max_body).min(crate::core::error::MAX_ALLOC);
        let (range, asked) = match range {
            Some((r, n)) => (Some(r), Some(n)),
            None => (None, None),
        };
        let _reserved = match asked {
            Some(n) => Some(self.budget.reserve(n).await),
            None => None,
        };
        let condition = range.as_ref().and_then(|_| self.condition(url));
        let range_text = range.clone();
        // A hint is sent once: its retries would hold up the reads beside it.
        let r = self.send_retried(c, method, url, range, Some(limit), asked, cap.is_some(), condition).await?;
        let n = r.body.len() as u64;
        if n > limit {
            return Err(too_large(&format!("{url}: the answer"), n, limit, "maxDecodedBytes"));
        }
        if let Some(a) = asked.filter(|&a| r.status == 206 && n > a) {
            return Err(short(url, &format!("a partial answer of {n} bytes to a request for {a}")));
        }
        self.observe(c, url, method, &r, range_text.as_deref())?;
        // A request merged at dispatch brought its neighbours' bytes and those between: kept,
        // as a merged read's are.
        let mut r = r;
        if let Some((at, bytes)) = r.held.take() {
            self.hold_merged(url, at, bytes, self.stamp(url, false));
        }
        Ok(r)
    }

    /// The condition a ranged read carries (the `conditional` option), once a version of the
    /// object is known.
    fn condition(&self, url: &str) -> Option<Condition> {
        let how = self.versions.conditional;
        if how == Conditional::None {
            return None;
        }
        let v = self.versions.current(url)?;
        let tag = v.strong_etag().map(String::from);
        match how {
            Conditional::IfMatch => tag.map(Condition::IfMatch).or(v.modified.map(Condition::IfUnmodifiedSince)),
            _ => tag.or(v.modified).map(Condition::IfRange),
        }
    }

    /// Check an answer against the version recorded for its object: a change (or a read the
    /// server refused as of another version, 412) fails with `Changed`, what was derived from
    /// the old version no longer served. A whole new object sent for an `If-Range` read is kept
    /// for the read that resolves it again.
    fn observe<C: HttpClient>(&self, c: &C, url: &str, method: Method, r: &Response, asked: Option<&str>) -> Result<()> {
        let seen = match r.status {
            200 | 206 | 416 => Seen::Version(Version::of(r, method == Method::Get, method == Method::Head, asked)),
            404 | 410 => Seen::Missing,
            403 if self.config.treat403_as_missing => Seen::Missing,
            412 => {
                self.count(|s| s.changes += 1);
                return Err(self.versions.changed(url, "HTTP 412: the server refused to read the version known").with_status(412));
            }
            _ => return Ok(()),
        };
        let whole = matches!(&seen, Seen::Version(_)) && r.status == 200 && method == Method::Get;
        let before = self.versions.generation();
        let got = self.versions.observe(url, seen, c.now());
        if self.versions.generation() != before {
            self.count(|s| s.changes += 1);
            if whole && self.versions.conditional == Conditional::IfRange {
                let stamp = self.stamp(url, false);
                self.keep(url, r.body.clone(), stamp);
            }
        }
        got
    }

    /// A request whose body may not exceed `limit` (bytes, and the option that sets them).
    pub(super) async fn send_limited<C: HttpClient>(
        &self,
        c: &C,
        method: Method,
        url: &str,
        range: Option<String>,
        limit: Option<(u64, &str)>,
    ) -> Result<Response> {
        let asked = range.clone();
        let r = self.send_retried(c, method, url, range, limit.map(|l| l.0), None, false, None).await?;
        if let Some((l, option)) = limit {
            let n = r.body.len() as u64;
            if n > l {
                return Err(too_large(&format!("{url}: the answer"), n, l, option));
            }
        }
        self.observe(c, url, method, &r, asked.as_deref())?;
        Ok(r)
    }

    /// One request, retried on network errors (stalls and bodies cut short included) and on
    /// transient statuses (408, 429, 5xx) with exponential backoff and full jitter, honouring
    /// `Retry-After`, within the attempts and the time budget; an abort ends it at once. After
    /// the last try, a transient status is returned for the caller to report, an error as is.
    async fn send_retried<C: HttpClient>(
        &self,
        c: &C,
        method: Method,
        url: &str,
        range: Option<String>,
        limit: Option<u64>,
        asked: Option<u64>,
        once: bool,
        condition: Option<Condition>,
    ) -> Result<Response> {
        let policy = self.config.retry;
        let start = c.now();
        // A range of known bytes may share a request with its neighbours waiting for a slot;
        // a hint (sent once) and a suffix go alone.
        let explicit = range.as_deref().is_some_and(|r| !r.starts_with("bytes=-"));
        let merge_max = self.config.merge_max.min(self.config.max_body);
        let merge = (method == Method::Get && explicit && !once).then_some((self.config.merge_gap, merge_max));
        let mut attempt = 0u32;
        loop {
            if c.is_aborted() {
                return Err(Error::new(ErrorCode::Aborted, format!("{url}: aborted")));
            }
            let deadline = start.map(|t0| t0 + policy.budget_ms + policy.stall_ms);
            // A whole object may come from the platform's cache once the server confirmed it; a
            // range or a HEAD never does (see `CacheMode`).
            let cache = if method == Method::Get && range.is_none() { CacheMode::Revalidate } else { CacheMode::NoStore };
            let condition = condition.clone();
            let streamed = self.streamed.borrow().iter().find(|s| Some(s.range.as_str()) == range.as_deref() && s.url == url).cloned();
            let progress = Early(streamed.as_deref().map(|s| s as &dyn super::http::Progress));
            let req = Request { method, url, range: range.clone(), limit, asked, stall_ms: Some(policy.stall_ms), deadline, condition, cache, merge, progress };
            let got = c.send(req).await.map_err(|e| e.at(url));
            if let Ok(r) = &got {
                // (A part of another request's answer: counted with that one.)
                if !r.shared {
                    self.count(|s| {
                        s.requests += 1;
                        s.bytes += r.body.len() as u64;
                    });
                }
            } else {
                self.count(|s| s.requests += 1);
            }
            // A body shorter than its Content-Length was cut short in transit.
            let got = got.and_then(|r| match r.content_length {
                Some(n) if method == Method::Get && (r.body.len() as u64) < n && r.status < 300 => Err(Error::new(
                    ErrorCode::Network,
                    format!("{url}: truncated body: {} of {n} bytes arrived", r.body.len()),
                )),
                _ => Ok(r),
            });
            let wait = match &got {
                Err(e) if e.code == ErrorCode::Network => None,
                Ok(r) if transient(r.status) => r.retry_after.as_deref().and_then(retry_after_ms).or(Some(0.0)),
                _ => return got,
            };
            attempt += 1;
            // Full jitter: anywhere up to the exponential ceiling; Retry-After as a floor.
            let ceiling = (policy.base_ms * f64::from(1u32 << (attempt - 1).min(20))).min(policy.max_ms);
            let delay = (c.random() * ceiling).max(wait.unwrap_or(0.0));
            let late = match (start, c.now()) {
                (Some(t0), Some(t)) => t + delay - t0 > policy.budget_ms,
                _ => false,
            };
            if attempt >= policy.attempts || late || once {
                let why = match (late, attempt) {
                    (true, _) => format!("after {attempt} tries, the retry budget of {} ms spent", policy.budget_ms as u64),
                    (false, 1) => return got,
                    _ => format!("after {attempt} tries"),
                };
                return match got {
                    Err(e) => Err(Error::new(e.code, format!("{} ({why})", e.message))),
                    Ok(r) => Err(Error::new(ErrorCode::HttpError, format!("{url}: HTTP {} ({why})", r.status))
                        .with_status(r.status)),
                };
            }
            self.count(|s| s.retries += 1);
            c.sleep(delay).await;
        }
    }

}

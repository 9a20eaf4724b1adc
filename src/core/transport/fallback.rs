//! Byte ranges as real servers answer them: a suffix range refused (HEAD for the size, then an
//! explicit range), a range ignored (the whole object, kept and sliced), a `Content-Range` that
//! names other bytes (asked once more, then an error: never data), a head read of a shorter
//! object.
use super::http::{classify, parse_content_range, short, ByteRange, HttpClient, Method, Status};
use super::range::{within, RangeRead};
use super::Transport;
use crate::core::error::{too_large, Error, ErrorCode, Result};
use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;

impl Transport {
    pub(super) async fn fetch<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>> {
        match range {
            ByteRange::Full => {
                let r = self.send(c, Method::Get, url, None, None).await?;
                match classify(url, r.status, self.config.treat403_as_missing)? {
                    Status::Missing => Ok(None),
                    Status::Whole | Status::Partial => {
                        let n = r.body.len() as u64;
                        Ok(Some(RangeRead { bytes: r.body, object_size: Some(n) }))
                    }
                    Status::Refused => Err(super::http::http_error(url, r.status)),
                }
            }
            ByteRange::Range { len: 0, .. } => Ok(Some(RangeRead { bytes: Vec::new(), object_size: None })),
            ByteRange::Range { offset, len } => self.read_range(c, url, offset, len, None).await,
            ByteRange::Suffix(0) | ByteRange::Tail(0) | ByteRange::Head(0) | ByteRange::Prefix(0) => {
                Ok(Some(RangeRead { bytes: Vec::new(), object_size: None }))
            }
            ByteRange::Suffix(n) => self.read_suffix(c, url, n, false).await,
            ByteRange::Tail(n) => self.read_suffix(c, url, n, true).await,
            ByteRange::Head(n) => self.read_range(c, url, 0, n, Some(true)).await,
            ByteRange::Prefix(n) => self.read_range(c, url, 0, n, Some(false)).await,
        }
    }

    /// The last `n` bytes: a suffix range, or (for servers that mishandle those) HEAD for the
    /// size, then an explicit range. `at_most`: the whole object when it is shorter.
    async fn read_suffix<C: HttpClient>(&self, c: &C, url: &str, n: u64, at_most: bool) -> Result<Option<RangeRead>> {
        let whole_range = if at_most { ByteRange::Tail(n) } else { ByteRange::Suffix(n) };
        let stamp = self.stamp(url, false);
        let mut wrong = 0;
        while !self.no_suffix.get() {
            let r = self.send(c, Method::Get, url, Some((format!("bytes=-{n}"), n)), None).await?;
            match classify(url, r.status, self.config.treat403_as_missing)? {
                Status::Missing => return Ok(None),
                Status::Whole => return self.keep_whole(url, r.body, whole_range, stamp).map(Some),
                Status::Partial => {
                    if let Some((a, b, Some(total))) = r.content_range.as_deref().and_then(parse_content_range) {
                        // The last `n` bytes, or (a tail) the whole of a shorter object.
                        let (_, want) = within(url, total, whole_range)?;
                        let end = b.checked_add(1);
                        if end == Some(total)
                            && end.and_then(|e| e.checked_sub(a)) == Some(want)
                            && r.body.len() as u64 == want
                        {
                            return Ok(Some(RangeRead { bytes: r.body, object_size: Some(total) }));
                        }
                        // Asked once more, then an error: never data.
                        wrong += 1;
                        if wrong >= 2 {
                            return Err(short(url, "suffix range answer does not match the request (twice)"));
                        }
                        self.count(|s| s.retries += 1);
                        continue;
                    }
                    // 206 without a readable Content-Range: where those bytes sit is unknown.
                }
                Status::Refused => {}
            }
            self.no_suffix.set(true);
        }
        let h = self.send(c, Method::Head, url, None, None).await?;
        match classify(url, h.status, self.config.treat403_as_missing)? {
            Status::Missing => return Ok(None),
            Status::Whole | Status::Partial => {}
            Status::Refused => return Err(super::http::http_error(url, h.status)),
        }
        let size = h.content_length.ok_or_else(|| {
            Error::new(
                ErrorCode::HttpError,
                format!("{url}: server refuses suffix ranges and its HEAD answer has no Content-Length; not fetching the whole object"),
            )
        })?;
        let (_, n) = within(url, size, whole_range)?;
        if n == 0 {
            return Ok(Some(RangeRead { bytes: Vec::new(), object_size: Some(size) }));
        }
        let f = self.read_range(c, url, size - n, n, None).await?;
        Ok(f.map(|f| RangeRead { bytes: f.bytes, object_size: Some(size) }))
    }

    /// `len` bytes at `offset`; `head` (a read at 0): fewer when the object ends sooner, the
    /// answer's length its end unless a visible `Content-Range` says otherwise — `Some(true)`: a
    /// hint (sent once, a whole answer longer than `len` refused), `Some(false)`: a prefix read
    /// as any range is.
    async fn read_range<C: HttpClient>(&self, c: &C, url: &str, offset: u64, len: u64, head: Option<bool>) -> Result<Option<RangeRead>> {
        let at_most = head.is_some();
        let last = offset.checked_add(len - 1).ok_or_else(|| short(url, "range overflows"))?;
        let range = match head {
            Some(true) => ByteRange::Head(len),
            Some(false) => ByteRange::Prefix(len),
            None => ByteRange::Range { offset, len },
        };
        // An answer that is not the range asked for is asked for once more, then an error:
        // never data.
        let stamp = self.stamp(url, false);
        let mut tries = 0;
        loop {
            tries += 1;
            let r = self.send(c, Method::Get, url, Some((format!("bytes={offset}-{last}"), len)), (head == Some(true)).then_some(len)).await?;
            let wrong = match classify(url, r.status, self.config.treat403_as_missing)? {
                Status::Missing => return Ok(None),
                Status::Whole => return self.keep_whole(url, r.body, range, stamp).map(Some),
                Status::Partial => {
                    // A Content-Range the client can see must name exactly the bytes asked for
                    // (where a browser hides it, the body's length is all there is to check).
                    let got = r.body.len() as u64;
                    let end = if at_most && got < len { got } else { len };
                    let cr = r.content_range.as_deref().map(|v| (v, parse_content_range(v)));
                    match cr {
                        Some((v, None)) => format!("malformed Content-Range \"{v}\""),
                        Some((_, Some((a, b, total))))
                            // Counted from `offset`: no sum that could overflow.
                            if a != offset
                                || b.checked_sub(a).and_then(|d| d.checked_add(1)) != Some(end)
                                || total.is_some_and(|t| t.checked_sub(offset).is_none_or(|r| r < end || (end < len && r != end))) =>
                        {
                            format!("asked for bytes {offset}-{last}, the answer says {a}-{b}/{}", total.map_or("*".into(), |t| t.to_string()))
                        }
                        _ if got != end || got == 0 => format!("asked for {len} bytes at {offset}, got {got}"),
                        _ => {
                            let size = cr.and_then(|c| c.1).and_then(|c| c.2).or((end < len).then_some(end));
                            return Ok(Some(RangeRead { bytes: r.body, object_size: size }));
                        }
                    }
                }
                // An empty object has no first byte to give.
                Status::Refused if r.status == 416 && at_most => {
                    return Ok(Some(RangeRead { bytes: Vec::new(), object_size: Some(0) }))
                }
                Status::Refused if r.status == 416 => {
                    return Err(short(url, &format!("bytes {offset}-{last} lie beyond the end of the object")))
                }
                Status::Refused => return Err(super::http::http_error(url, r.status)),
            };
            if tries >= 2 {
                return Err(short(url, &format!("{wrong} (twice)")));
            }
            self.count(|s| s.retries += 1);
        }
    }

    /// A span longer than `maxDecodedBytes` is not asked for (an index entry claiming a
    /// terabyte would otherwise be one request downloading until the limit).
    pub(super) fn check_len(&self, url: &str, offset: u64, len: u64) -> Result<()> {
        if len <= self.config.max_body {
            return Ok(());
        }
        let what = format!("{url}: the {len}-byte span at {offset}");
        Err(too_large(&what, len, self.config.max_body, "maxDecodedBytes"))
    }

}

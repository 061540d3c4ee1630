//! A bound on what multer buffers of a multipart body's framing.
//!
//! multer keeps everything before the first boundary, and each part's headers, in memory
//! until it finds their end (the boundary, a blank line). A client that never sends that end
//! makes it buffer the whole body: four connections sending 512 MB of a header that never
//! closes held 1 GB. Part *data* is not at risk: multer hands it on as it arrives, keeping
//! only a boundary's length of it.
//!
//! [`guard`] wraps an upload's body (`/upload`, a one-shot `/read`, `/uploads/{token}`) in a
//! scanner that follows the framing as the bytes pass and fails the body once a preamble or
//! one part's headers run past [`MAX_FRAMING`]. The handler turns that failure into a 400
//! through [`refused`]; nothing of the request is kept.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap};
use futures_util::StreamExt;

/// The most bytes before a multipart body's first boundary, or of one part's headers. A
/// browser's part headers are a few hundred bytes; a long file name in both `filename` and
/// `filename*` stays well under this.
pub const MAX_FRAMING: usize = 16 << 10;

/// The body stopped because its framing ran past [`MAX_FRAMING`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FramingTooLong {
    /// What ran long.
    pub what: &'static str,
}

impl std::fmt::Display for FramingTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the multipart body's {} ran past {} KiB without ending",
            self.what,
            MAX_FRAMING >> 10
        )
    }
}

impl std::error::Error for FramingTooLong {}

/// Wrap a multipart request's body in the framing scanner. A body that is not multipart, or
/// whose boundary cannot be read from `Content-Type`, is left as it is (multer refuses it).
pub fn guard(req: Request) -> Request {
    let Some(boundary) = boundary(req.headers()) else {
        return req;
    };
    let (parts, body) = req.into_parts();
    let mut scan = Scanner::new(&boundary);
    let stream = body.into_data_stream().map(move |chunk| match chunk {
        Ok(bytes) => match scan.feed(&bytes) {
            Ok(()) => Ok(bytes),
            Err(e) => Err(axum::Error::new(e)),
        },
        Err(e) => Err(e),
    });
    Request::from_parts(parts, Body::from_stream(stream))
}

/// Whether an error (from multer, through axum) is the scanner's refusal, and which.
pub fn refused(e: &(dyn std::error::Error + 'static)) -> Option<FramingTooLong> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(f) = err.downcast_ref::<FramingTooLong>() {
            return Some(*f);
        }
        cur = err.source();
    }
    None
}

/// The `boundary` parameter of a `multipart/*` Content-Type (quoted or not).
fn boundary(headers: &HeaderMap) -> Option<String> {
    let ct = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let mut params = ct.split(';');
    let kind = params.next()?.trim();
    if !kind
        .get(..10)
        .is_some_and(|k| k.eq_ignore_ascii_case("multipart/"))
    {
        return None;
    }
    params.find_map(|p| {
        let (name, value) = p.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("boundary") {
            return None;
        }
        let v = value.trim().trim_matches('"');
        (!v.is_empty() && v.len() <= 200).then(|| v.to_string())
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Before the first `--boundary`.
    Preamble,
    /// After a boundary: a part's headers up to the blank line, or `--` closing the body.
    Headers,
    /// A part's data, up to `\r\n--boundary`.
    Data,
    /// After the closing boundary: multer reads no more.
    Done,
}

/// Follows a multipart body's framing chunk by chunk.
struct Scanner {
    /// `--boundary`
    open: Vec<u8>,
    /// `\r\n--boundary`
    next: Vec<u8>,
    stage: Stage,
    /// Bytes of the current stage so far (preamble, headers).
    seen: usize,
    /// The current stage's last bytes of earlier chunks, for a needle split across chunks.
    tail: Vec<u8>,
    /// The first two bytes after a boundary (`--` closes the body).
    lead: Vec<u8>,
}

const BLANK_LINE: &[u8] = b"\r\n\r\n";

impl Scanner {
    fn new(boundary: &str) -> Self {
        let open = [b"--", boundary.as_bytes()].concat();
        let next = [b"\r\n", &open[..]].concat();
        Scanner {
            open,
            next,
            stage: Stage::Preamble,
            seen: 0,
            tail: Vec::new(),
            lead: Vec::new(),
        }
    }

    fn enter(&mut self, stage: Stage) {
        self.stage = stage;
        self.seen = 0;
        self.tail.clear();
        self.lead.clear();
    }

    fn feed(&mut self, chunk: &[u8]) -> Result<(), FramingTooLong> {
        let mut rest = chunk;
        loop {
            let needle: &[u8] = match self.stage {
                Stage::Done => return Ok(()),
                Stage::Preamble => &self.open,
                Stage::Headers => BLANK_LINE,
                Stage::Data => &self.next,
            };
            let needle = needle.to_vec();
            match find_across(&self.tail, rest, &needle) {
                Some(end) => {
                    if self.stage == Stage::Headers {
                        self.note_lead(&rest[..end]);
                        if self.lead == b"--" {
                            self.enter(Stage::Done);
                            return Ok(());
                        }
                    }
                    self.seen = self.seen.saturating_add(end);
                    self.check()?;
                    let after = match self.stage {
                        Stage::Preamble | Stage::Data => Stage::Headers,
                        _ => Stage::Data,
                    };
                    self.enter(after);
                    rest = &rest[end..];
                }
                None => {
                    self.seen = self.seen.saturating_add(rest.len());
                    if self.stage == Stage::Headers {
                        self.note_lead(rest);
                        if self.lead == b"--" {
                            self.enter(Stage::Done);
                            return Ok(());
                        }
                    }
                    self.check()?;
                    let keep = needle.len() - 1;
                    self.tail.extend_from_slice(rest);
                    if self.tail.len() > keep {
                        self.tail.drain(..self.tail.len() - keep);
                    }
                    return Ok(());
                }
            }
        }
    }

    /// A preamble's or a part's headers' bytes so far are within the bound.
    fn check(&self) -> Result<(), FramingTooLong> {
        let what = match self.stage {
            Stage::Preamble => "text before its first boundary",
            Stage::Headers => "part headers",
            Stage::Data | Stage::Done => return Ok(()),
        };
        if self.seen > MAX_FRAMING {
            return Err(FramingTooLong { what });
        }
        Ok(())
    }

    /// Record the first two bytes of a part's header block.
    fn note_lead(&mut self, bytes: &[u8]) {
        let want = 2 - self.lead.len().min(2);
        self.lead.extend(bytes.iter().take(want));
    }
}

/// Where `needle` ends in `rest`, counting a match that begins in `tail` (the earlier
/// chunks' last bytes, fewer than the needle's length).
fn find_across(tail: &[u8], rest: &[u8], needle: &[u8]) -> Option<usize> {
    if !tail.is_empty() {
        let take = rest.len().min(needle.len() - 1);
        let joined = [tail, &rest[..take]].concat();
        if let Some(p) = memchr::memmem::find(&joined, needle) {
            return Some(p + needle.len() - tail.len());
        }
    }
    memchr::memmem::find(rest, needle).map(|p| p + needle.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed_in(body: &[u8], piece: usize) -> Result<Stage, FramingTooLong> {
        let mut s = Scanner::new("XyZ");
        for c in body.chunks(piece.max(1)) {
            s.feed(c)?;
        }
        Ok(s.stage)
    }

    fn form(header_len: usize, data_len: usize) -> Vec<u8> {
        let mut b =
            b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
                .to_vec();
        b.extend(std::iter::repeat_n(b'h', header_len));
        b.extend_from_slice(b"\r\n\r\n");
        b.extend(std::iter::repeat_n(b'd', data_len));
        b.extend_from_slice(b"\r\n--XyZ\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nv");
        b.extend_from_slice(b"\r\n--XyZ--\r\n");
        b
    }

    #[test]
    fn ordinary_forms_pass_however_they_are_cut() {
        let body = form(0, 200_000);
        for piece in [1, 2, 3, 5, 7, 64, 4096, body.len()] {
            assert_eq!(feed_in(&body, piece), Ok(Stage::Done), "piece {piece}");
        }
        // A large epilogue after the closing boundary is not multer's concern.
        let mut tail = form(0, 10);
        tail.extend(std::iter::repeat_n(b'e', 50_000));
        tail.extend_from_slice(b"\r\n\r\n");
        tail.extend(std::iter::repeat_n(b'e', 50_000));
        assert_eq!(feed_in(&tail, 1000), Ok(Stage::Done));
        // Headers just under the bound pass.
        assert_eq!(feed_in(&form(MAX_FRAMING - 200, 10), 3), Ok(Stage::Done));
    }

    #[test]
    fn headers_that_never_end_are_refused() {
        let mut body = b"--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\nX: ".to_vec();
        body.extend(std::iter::repeat_n(b'a', 100_000));
        for piece in [1, 999, 65536] {
            assert_eq!(
                feed_in(&body, piece),
                Err(FramingTooLong {
                    what: "part headers"
                })
            );
        }
        // The second part's headers too.
        let mut second = form(0, 10);
        second.truncate(second.len() - b"\r\n--XyZ--\r\n".len());
        second.extend_from_slice(b"\r\n--XyZ\r\n");
        second.extend(std::iter::repeat_n(b'a', 100_000));
        assert!(feed_in(&second, 4096).is_err());
        assert!(feed_in(&form(MAX_FRAMING + 10, 10), 4096).is_err());
    }

    #[test]
    fn a_preamble_without_a_boundary_is_refused() {
        let body = vec![b'p'; 100_000];
        assert_eq!(
            feed_in(&body, 8192),
            Err(FramingTooLong {
                what: "text before its first boundary"
            })
        );
        let mut ok = b"a short preamble\r\n".to_vec();
        ok.extend(form(0, 10));
        assert_eq!(feed_in(&ok, 2), Ok(Stage::Done));
    }

    #[test]
    fn the_boundary_is_read_from_the_content_type() {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            "multipart/form-data; charset=utf-8; boundary=\"a b\""
                .parse()
                .unwrap(),
        );
        assert_eq!(boundary(&h).as_deref(), Some("a b"));
        h.insert(
            header::CONTENT_TYPE,
            "Multipart/Form-Data;BOUNDARY=xyz".parse().unwrap(),
        );
        assert_eq!(boundary(&h).as_deref(), Some("xyz"));
        h.insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
        assert_eq!(boundary(&h), None);
    }
}

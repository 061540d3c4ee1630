//! `ReadPlan`: a request checked once against the file's format — the extractor exists,
//! every option fits (the strict rule), the deadline and the budget are valid — before any
//! slot is taken or worker is asked.

use std::time::Duration;

use crate::config::Limits;
use crate::detect::Format;
use crate::error::ApiError;
use crate::options::{count, ReadRequest};

/// A read that may run: its options fit its format, its deadline is known.
#[derive(Debug, Clone)]
pub struct ReadPlan {
    pub req: ReadRequest,
    pub format: Format,
    /// How long the read may take, from when it is planned.
    pub deadline: Duration,
    /// The `deadline_ms` asked for, when it was over the service's cap and cut to it (the
    /// envelope says so).
    pub deadline_clamped: Option<u64>,
}

impl ReadPlan {
    pub fn new(req: ReadRequest, format: Format, limits: &Limits) -> Result<Self, ApiError> {
        crate::extract::extractor_for(format)?;
        req.check_fit(format)?;
        req.max_chars(limits.max_chars)?;
        req.max_tokens()?;
        req.chunk_tokens()?;
        let deadline = deadline(&req, limits)?;
        let asked = count("deadline_ms", req.deadline_ms, 1)?;
        Ok(Self {
            req,
            format,
            deadline,
            deadline_clamped: asked.filter(|&ms| Duration::from_millis(ms) > deadline),
        })
    }

    /// A job's read: its deadline may run to the jobs' own cap (`--job-deadline-ms`) rather
    /// than the interactive one.
    pub fn for_job(&mut self, job_max_ms: u64, limits: &Limits) {
        let asked = self.req.deadline_ms.map(|ms| ms.max(1) as u64);
        let ms = asked.unwrap_or(limits.deadline_ms).min(job_max_ms.max(1));
        self.deadline = Duration::from_millis(ms);
        self.deadline_clamped = asked.filter(|&a| a > ms);
    }
}

/// The checks of option values that hold whatever the format: a bad value refuses the
/// read before any file is looked at (a read of several files, a job before it is queued;
/// the file's own read checks the rest, `ReadPlan::new` and the extractor).
pub fn check_values(req: &ReadRequest) -> Result<(), ApiError> {
    use crate::options::parse_spans;
    req.query()?;
    req.max_tokens()?;
    req.chunk_tokens()?;
    req.max_chars(1)?;
    for (name, v, min) in [
        ("offset", req.offset, 0),
        ("limit", req.limit, 1),
        ("byte_offset", req.byte_offset, 0),
        ("byte_length", req.byte_length, 1),
        ("max_cells", req.max_cells, 1),
        ("max_paragraphs", req.max_paragraphs, 1),
        ("paragraph_offset", req.paragraph_offset, 0),
        ("min_text_per_page", req.min_text_per_page, 0),
        ("deadline_ms", req.deadline_ms, 1),
    ] {
        count(name, v, min)?;
    }
    for spans in [&req.pages, &req.chapters].into_iter().flatten() {
        parse_spans(spans)?;
    }
    if let Some(r) = &req.range {
        crate::extract::excel::parse_range(r)?;
    }
    Ok(())
}

/// The read's deadline: `deadline_ms` (at least 1) or the service's default, at most the
/// service's `max_deadline_ms` (a read may not hold a slot for as long as it likes). The
/// one place it is parsed (server, workers and CLI alike).
pub fn deadline(req: &ReadRequest, limits: &Limits) -> Result<Duration, ApiError> {
    let ms = count("deadline_ms", req.deadline_ms, 1)?.unwrap_or(limits.deadline_ms);
    Ok(Duration::from_millis(ms.min(limits.max_deadline_ms.max(1))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn deadline_is_checked_once_for_everyone() {
        let limits = Limits::default();
        let req = |ms| ReadRequest {
            deadline_ms: Some(ms),
            ..Default::default()
        };
        assert_eq!(
            deadline(&req(-5), &limits).unwrap_err().code,
            ErrorCode::InvalidOption
        );
        assert_eq!(
            deadline(&req(0), &limits).unwrap_err().code,
            ErrorCode::InvalidOption
        );
        assert_eq!(
            deadline(&req(250), &limits).unwrap(),
            Duration::from_millis(250)
        );
        assert_eq!(
            deadline(&ReadRequest::default(), &limits).unwrap(),
            Duration::from_millis(limits.deadline_ms)
        );
    }

    /// OpenDocument text takes Word's options (it once had none, being unread), and not
    /// another kind's.
    #[test]
    fn odt_takes_words_options() {
        let req = ReadRequest {
            mode: Some(crate::options::DocxMode::Text),
            ..Default::default()
        };
        assert!(ReadPlan::new(req, Format::Odt, &Limits::default()).is_ok());
        let req = ReadRequest {
            pages: Some("1".into()),
            ..Default::default()
        };
        let e = ReadPlan::new(req, Format::Odt, &Limits::default()).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedOption);
    }
}

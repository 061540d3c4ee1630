//! `ReadPlan`: a request checked once against the file's format — the extractor exists,
//! every option fits (the strict rule), the deadline and the budget are valid — before any
//! slot is taken or worker is asked.

use std::time::Duration;

use crate::config::Limits;
use crate::detect::Format;
use crate::error::ApiError;
use crate::options::{Options, ReadRequest};

/// A read that may run: its options fit its format and are parsed (`Options`, what the
/// extractor reads), its deadline is known.
#[derive(Debug, Clone)]
pub struct ReadPlan {
    pub opts: Options,
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
        let opts = Options::parse(req, limits.max_chars)?;
        let deadline = deadline(&opts, limits);
        let asked = opts.deadline_ms;
        Ok(Self {
            opts,
            format,
            deadline,
            deadline_clamped: asked.filter(|&ms| Duration::from_millis(ms) > deadline),
        })
    }

    /// A job's read: its deadline may run to the jobs' own cap (`--job-deadline-ms`) rather
    /// than the interactive one.
    pub fn for_job(&mut self, job_max_ms: u64, limits: &Limits) {
        let asked = self.opts.deadline_ms;
        let ms = asked.unwrap_or(limits.deadline_ms).min(job_max_ms.max(1));
        self.deadline = Duration::from_millis(ms);
        self.deadline_clamped = asked.filter(|&a| a > ms);
    }
}

/// The checks of option values that hold whatever the format: a bad value refuses the
/// read before any file is looked at (a read of several files, a job before it is queued;
/// the file's own read checks the rest, `ReadPlan::new` and the extractor). The options as
/// parsed (`max_chars` the service's default when not given).
pub fn check_values(req: &ReadRequest, max_chars: usize) -> Result<Options, ApiError> {
    let opts = Options::parse(req.clone(), max_chars)?;
    if let Some(r) = &req.range {
        crate::extract::excel::parse_range(r)?;
    }
    Ok(opts)
}

/// The read's deadline: `deadline_ms` or the service's default, at most the service's
/// `max_deadline_ms` (a read may not hold a slot for as long as it likes). The one place
/// it is worked out (server, workers and CLI alike).
pub fn deadline(opts: &Options, limits: &Limits) -> Duration {
    let ms = opts.deadline_ms.unwrap_or(limits.deadline_ms);
    Duration::from_millis(ms.min(limits.max_deadline_ms.max(1)))
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
        let plan = |r| ReadPlan::new(r, Format::Pdf, &limits);
        assert_eq!(plan(req(-5)).unwrap_err().code, ErrorCode::InvalidOption);
        assert_eq!(plan(req(0)).unwrap_err().code, ErrorCode::InvalidOption);
        assert_eq!(plan(req(250)).unwrap().deadline, Duration::from_millis(250));
        assert_eq!(
            plan(ReadRequest::default()).unwrap().deadline,
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

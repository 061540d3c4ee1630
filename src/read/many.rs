//! Several files in one read (`file_ids`): one envelope or error per file, in order, with
//! one budget used up in file order. Options are checked against every file first: an
//! option that does not fit some of them refuses the whole read, naming them; a file that
//! cannot be read (unknown id, encrypted, corrupt) fails only its own entry.

use serde::Serialize;
use utoipa::ToSchema;

use super::service::Prepared;
use super::ReadService;
use crate::envelope::{Envelope, Ok};
use crate::error::{ApiError, ErrorCode, ErrorDetail};
use crate::extract::ProgressSink;
use crate::options::{Options, ReadRequest};

/// The most files one read takes.
pub const MAX_FILES: usize = 10;

/// The answer to a read with `file_ids`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReadResults {
    /// Always `ok`: each file's own outcome is in its entry.
    pub status: Ok,
    /// One entry per file, in the order of `file_ids`.
    pub results: Vec<ReadResult>,
}

impl ReadResults {
    /// The text the envelopes hold, in bytes (what decides whether the answer is long).
    pub fn text_bytes(&self) -> usize {
        self.results
            .iter()
            .map(|r| match r {
                ReadResult::Read(env) => env.text.len(),
                _ => 0,
            })
            .sum()
    }
}

/// One file's outcome: its envelope, its error, or `not_read` when the budget was used up
/// by the files before it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum ReadResult {
    Read(Box<Envelope>),
    Failed(FileError),
    NotRead(NotRead),
}

#[derive(Debug, Serialize, ToSchema)]
pub enum ErrorStatus {
    #[serde(rename = "error")]
    Error,
}

/// A file of a several-file read that could not be read.
#[derive(Debug, Serialize, ToSchema)]
pub struct FileError {
    /// Always `error`.
    pub status: ErrorStatus,
    pub file_id: String,
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, ToSchema)]
pub enum NotReadStatus {
    #[serde(rename = "not_read")]
    NotRead,
}

/// A file the budget did not reach.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotRead {
    /// Always `not_read`.
    pub status: NotReadStatus,
    pub file_id: String,
    pub message: String,
    pub hint: String,
}

/// What is left of a several-file read's budget.
#[derive(Clone, Copy)]
enum Budget {
    Chars(u64),
    Tokens(u64),
}

impl Budget {
    fn spent(self) -> bool {
        match self {
            Budget::Chars(n) => n == 0,
            Budget::Tokens(n) => n < crate::tokens::MIN_BUDGET,
        }
    }

    fn apply(self, opts: &mut Options) {
        match self {
            Budget::Chars(n) => opts.set_max_chars(n as usize),
            Budget::Tokens(n) => opts.set_max_tokens(n),
        }
    }

    /// What is left after a file's read: nothing when the budget cut it (a cut text ends
    /// the read; its `next` reads on in that file).
    fn after(self, env: &Envelope) -> Self {
        match self {
            Budget::Chars(_) if env.truncated => Budget::Chars(0),
            Budget::Tokens(_) if env.truncated => Budget::Tokens(0),
            Budget::Chars(n) => Budget::Chars(n.saturating_sub(env.text.chars().count() as u64)),
            Budget::Tokens(n) => Budget::Tokens(
                n.saturating_sub(
                    env.tokens
                        .unwrap_or_else(|| crate::tokens::estimate(&env.text)),
                ),
            ),
        }
    }
}

/// The budget as the request gave it, for the message of a file it did not reach.
fn describe(req: &ReadRequest, default_chars: usize) -> String {
    match (req.max_tokens, req.max_chars) {
        (Some(t), _) => format!("max_tokens {t}"),
        (None, Some(c)) => format!("max_chars {c}"),
        (None, None) => format!("max_chars {default_chars} (the default)"),
    }
}

impl ReadService {
    /// Read each of `req.file_ids` with `req`'s options. `request_id` goes into each
    /// file's error, as into an error response.
    pub async fn read_many(
        &self,
        tenant: &str,
        mut req: ReadRequest,
        request_id: Option<String>,
    ) -> Result<ReadResults, ApiError> {
        let ids = req.file_ids.take().unwrap_or_default();
        if req.file_id.is_some() || req.path.is_some() || req.url.is_some() {
            return Err(ApiError::invalid_request(
                "give one of file_ids, file_id, url and path, not several",
            ));
        }
        if ids.is_empty() || ids.len() > MAX_FILES {
            return Err(ApiError::invalid_option(format!(
                "file_ids takes 1 to {MAX_FILES} files, got {}",
                ids.len()
            ))
            .with_hint("Split the files over several reads."));
        }
        let opts = super::plan::check_values(&req, self.limits.max_chars)?;
        let mut budget = match opts.max_tokens {
            Some(t) => Budget::Tokens(t),
            None => Budget::Chars(opts.max_chars as u64),
        };
        let described = describe(&req, self.limits.max_chars);
        // Every file is resolved and planned first: options that do not fit some of them
        // refuse the read, with every such file named.
        let mut prepared: Vec<Result<Prepared, ApiError>> = Vec::with_capacity(ids.len());
        let mut misfits = Vec::new();
        for id in &ids {
            let mut one = req.clone();
            one.file_id = Some(id.clone());
            let p = self.prepare(tenant, one).await;
            if let Err(e) = &p {
                if matches!(
                    e.code,
                    ErrorCode::UnsupportedOption
                        | ErrorCode::InvalidOption
                        | ErrorCode::InvalidRange
                        | ErrorCode::InvertedRange
                ) {
                    misfits.push((id.clone(), e.clone()));
                }
            }
            prepared.push(p);
        }
        if let Some((_, first)) = misfits.first() {
            let named: Vec<String> = misfits
                .iter()
                .map(|(id, e)| format!("{id}: {}", e.message))
                .collect();
            return Err(ApiError::new(
                first.code,
                format!(
                    "the options do not fit {} of the files — {}",
                    misfits.len(),
                    named.join("; ")
                ),
            )
            .with_hint(format!(
                "Read those files on their own, or drop the options they do not take. {}",
                first.hint
            )));
        }
        let mut results = Vec::with_capacity(ids.len());
        for (id, p) in ids.into_iter().zip(prepared) {
            let mut p = match p {
                Ok(p) => p,
                Err(e) => {
                    results.push(failed(id, &e, &request_id));
                    continue;
                }
            };
            if budget.spent() {
                results.push(ReadResult::NotRead(NotRead {
                    status: NotReadStatus::NotRead,
                    file_id: id,
                    message: format!(
                        "the budget ({described}) was used up by the files before this one"
                    ),
                    hint: "Read this file with its own read (file_id), or give a larger budget."
                        .into(),
                }));
                continue;
            }
            budget.apply(p.options_mut());
            match self.run(p, ProgressSink::default()).await {
                Ok(env) => {
                    budget = budget.after(&env);
                    results.push(ReadResult::Read(Box::new(env)));
                }
                Err(e) => results.push(failed(id, &e, &request_id)),
            }
        }
        Ok(ReadResults {
            status: Ok::Ok,
            results,
        })
    }
}

fn failed(file_id: String, e: &ApiError, request_id: &Option<String>) -> ReadResult {
    ReadResult::Failed(FileError {
        status: ErrorStatus::Error,
        file_id,
        error: e.body(request_id.clone()).error,
    })
}

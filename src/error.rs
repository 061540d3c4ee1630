//! The one table of error codes: stable snake_case code → HTTP status → default hint,
//! and `ApiError`, the error every layer returns (detection, extraction, the read service,
//! the handlers). It knows nothing of axum: `http::error` turns it into a response.
//!
//! Codes are published in the OpenAPI description; never rename one, only add.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Every error code a client can rely on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    InvalidRequest,
    InvalidOption,
    UnsupportedOption,
    InvalidRange,
    InvertedRange,
    OutOfRange,
    Unauthorized,
    NotFound,
    MethodNotAllowed,
    OutsideAllowedRoots,
    TooLarge,
    BlockedType,
    BinaryContent,
    LegacyFormat,
    UnsupportedFormat,
    Encrypted,
    Corrupt,
    NoOcrEngine,
    Timeout,
    ExtractionCrashed,
    Internal,
    Unavailable,
    RequestTimeout,
    UrlNotAllowed,
    UrlHostNotAllowed,
    UrlSchemeNotAllowed,
    UrlAddressBlocked,
    UrlRedirectBlocked,
    FetchFailed,
    Forbidden,
    /// A job stopped by `DELETE /jobs/{id}` (in the job's `error`, never an HTTP answer).
    Cancelled,
}

impl ErrorCode {
    /// All codes, for documentation and tests.
    pub const ALL: &'static [ErrorCode] = &[
        Self::InvalidRequest,
        Self::InvalidOption,
        Self::UnsupportedOption,
        Self::InvalidRange,
        Self::InvertedRange,
        Self::OutOfRange,
        Self::Unauthorized,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::OutsideAllowedRoots,
        Self::TooLarge,
        Self::BlockedType,
        Self::BinaryContent,
        Self::LegacyFormat,
        Self::UnsupportedFormat,
        Self::Encrypted,
        Self::Corrupt,
        Self::NoOcrEngine,
        Self::Timeout,
        Self::ExtractionCrashed,
        Self::Internal,
        Self::Unavailable,
        Self::RequestTimeout,
        Self::UrlNotAllowed,
        Self::UrlHostNotAllowed,
        Self::UrlSchemeNotAllowed,
        Self::UrlAddressBlocked,
        Self::UrlRedirectBlocked,
        Self::FetchFailed,
        Self::Forbidden,
        Self::Cancelled,
    ];

    /// The snake_case code as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::InvalidOption => "invalid_option",
            Self::UnsupportedOption => "unsupported_option",
            Self::InvalidRange => "invalid_range",
            Self::InvertedRange => "inverted_range",
            Self::OutOfRange => "out_of_range",
            Self::Unauthorized => "unauthorized",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::OutsideAllowedRoots => "outside_allowed_roots",
            Self::TooLarge => "too_large",
            Self::BlockedType => "blocked_type",
            Self::BinaryContent => "binary_content",
            Self::LegacyFormat => "legacy_format",
            Self::UnsupportedFormat => "unsupported_format",
            Self::Encrypted => "encrypted",
            Self::Corrupt => "corrupt",
            Self::NoOcrEngine => "no_ocr_engine",
            Self::Timeout => "timeout",
            Self::ExtractionCrashed => "extraction_crashed",
            Self::Internal => "internal",
            Self::Unavailable => "unavailable",
            Self::RequestTimeout => "request_timeout",
            Self::UrlNotAllowed => "url_not_allowed",
            Self::UrlHostNotAllowed => "url_host_not_allowed",
            Self::UrlSchemeNotAllowed => "url_scheme_not_allowed",
            Self::UrlAddressBlocked => "url_address_blocked",
            Self::UrlRedirectBlocked => "url_redirect_blocked",
            Self::FetchFailed => "fetch_failed",
            Self::Forbidden => "forbidden",
            Self::Cancelled => "cancelled",
        }
    }

    /// The HTTP status that goes with the code.
    pub fn status(self) -> u16 {
        match self {
            Self::InvalidRequest
            | Self::InvalidOption
            | Self::UnsupportedOption
            | Self::InvalidRange
            | Self::InvertedRange => 400,
            Self::OutOfRange => 416,
            Self::Unauthorized => 401,
            Self::NotFound => 404,
            Self::MethodNotAllowed => 405,
            Self::OutsideAllowedRoots => 403,
            Self::TooLarge => 413,
            Self::BlockedType
            | Self::BinaryContent
            | Self::LegacyFormat
            | Self::UnsupportedFormat => 415,
            Self::Encrypted | Self::Corrupt | Self::NoOcrEngine => 422,
            Self::Timeout => 504,
            Self::ExtractionCrashed | Self::Internal => 500,
            Self::Unavailable => 503,
            Self::RequestTimeout => 408,
            Self::UrlSchemeNotAllowed => 400,
            Self::UrlNotAllowed
            | Self::UrlHostNotAllowed
            | Self::UrlAddressBlocked
            | Self::UrlRedirectBlocked => 403,
            Self::FetchFailed => 502,
            Self::Forbidden => 403,
            Self::Cancelled => 409,
        }
    }

    /// What to do next, when the site of the error has nothing more specific to say.
    pub fn default_hint(self) -> &'static str {
        match self {
            Self::InvalidRequest => "Send a JSON body such as {\"file_id\": \"f_…\"} with Content-Type: application/json; see /docs.",
            Self::InvalidOption => "Check the option's value against /docs.",
            Self::UnsupportedOption => "Remove the option; the hint lists the options this format accepts.",
            Self::InvalidRange => "Use a range such as \"5\", \"1-10\" or \"1,3,5-8\".",
            Self::InvertedRange => "Write the range from low to high, e.g. \"1-5\".",
            Self::OutOfRange => "Ask for a position inside the document; the message states its real size.",
            Self::Unauthorized => "Send the header Authorization: Bearer <api key>.",
            Self::NotFound => "List your files with GET /files, or upload the file again with POST /upload.",
            Self::MethodNotAllowed => "See /docs for the methods each endpoint accepts.",
            Self::OutsideAllowedRoots => "Upload the file with POST /upload, or ask the operator to add its folder to DOCREADER_ALLOWED_ROOTS.",
            Self::TooLarge => "Split the document, or ask the operator to raise the limit.",
            Self::BlockedType => "Executables and archives are not read. For an archive, extract it locally and upload the documents inside.",
            Self::BinaryContent => "This file holds no readable text. Upload a document (PDF, Office, e-mail, image or text).",
            Self::LegacyFormat => "Open the file in Word or PowerPoint and save it as .docx / .pptx, then upload that.",
            Self::UnsupportedFormat => "This build cannot read that format yet; convert it to PDF or plain text.",
            Self::Encrypted => "Supply the document's password with the `password` option.",
            Self::Corrupt => "The file is damaged or is not really of its format; re-export it from the program that made it.",
            Self::NoOcrEngine => "Run `make native` to install the built-in OCR engine, then retry.",
            Self::Timeout => "Raise `deadline_ms`, or read fewer pages at once.",
            Self::ExtractionCrashed => "Retry once; if it fails again the file is probably hostile or damaged.",
            Self::Internal => "Retry; if it persists, report the request id to the operator.",
            Self::Unavailable => "Retry after the number of seconds in the Retry-After header.",
            Self::RequestTimeout => "Send the request without long pauses; the operator sets how long a body may pause (DOCREADER_BODY_TIMEOUT_MS).",
            Self::UrlNotAllowed => "Upload the file (POST /upload), or ask the operator to enable URL inputs (DOCREADER_URL_ALLOWLIST).",
            Self::UrlHostNotAllowed => "Upload the file, or ask the operator to add the host to DOCREADER_URL_ALLOWLIST.",
            Self::UrlSchemeNotAllowed => "Give an http:// or https:// URL, or upload the file.",
            Self::UrlAddressBlocked => "Fetch from a public address, or ask the operator to allow the range in DOCREADER_URL_ALLOW_ADDRESSES.",
            Self::UrlRedirectBlocked => "Give the final URL directly if its host is allowed.",
            Self::FetchFailed => "Check that the URL works from the service's network, or upload the file.",
            Self::Forbidden => "The operator's settings refuse this request; the message names the setting.",
            Self::Cancelled => "The job was cancelled; submit the read again to run it.",
        }
    }
}

/// An error on its way to a client: a stable code, a message for people, a hint, and, for
/// failures inside the service, the cause (for the log and the CLI; never sent to a client).
#[derive(Debug, Clone, thiserror::Error, Serialize, Deserialize)]
#[error("{}: {message}", code.as_str())]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub hint: String,
    /// What really went wrong, when the message is deliberately plain (internal errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            hint: code.default_hint().to_string(),
            cause: None,
        }
    }

    /// Keep the underlying cause beside a plain message.
    pub fn with_cause(mut self, cause: impl std::fmt::Display) -> Self {
        self.cause = Some(cause.to_string());
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }

    pub fn invalid_request(msg: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, msg)
    }
    pub fn invalid_option(msg: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidOption, msg)
    }
    pub fn out_of_range(msg: impl Into<String>) -> Self {
        Self::new(ErrorCode::OutOfRange, msg)
    }
    pub fn not_found() -> Self {
        Self::new(ErrorCode::NotFound, "no such file")
    }
    /// A failure inside the service. The cause is kept for the log (written where the
    /// error leaves the service, with the request id) and the CLI, never sent to a client.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorCode::Internal,
            "the service failed to handle this request",
        )
        .with_cause(cause)
    }

    /// The JSON body, as the envelope's error shape.
    pub fn body(&self, request_id: Option<String>) -> ErrorBody {
        ErrorBody {
            status: "error",
            error: ErrorDetail {
                code: self.code,
                message: self.message.clone(),
                hint: self.hint.clone(),
                request_id,
            },
        }
    }
}

/// `{"status":"error","error":{…}}`
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// Always `error`.
    #[schema(value_type = String, example = "error")]
    pub status: &'static str,
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable snake_case code.
    pub code: ErrorCode,
    /// For people.
    pub message: String,
    /// What to do next.
    pub hint: String,
    /// The request id (also in the `x-request-id` response header), for the logs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ALL` names every code once (the match below stops compiling when a code is added
    /// without it being counted here), and no two codes share a wire name.
    #[test]
    fn every_code_is_in_the_table_once() {
        fn place(c: ErrorCode) -> usize {
            use ErrorCode::*;
            match c {
                InvalidRequest => 0,
                InvalidOption => 1,
                UnsupportedOption => 2,
                InvalidRange => 3,
                InvertedRange => 4,
                OutOfRange => 5,
                Unauthorized => 6,
                NotFound => 7,
                MethodNotAllowed => 8,
                OutsideAllowedRoots => 9,
                TooLarge => 10,
                BlockedType => 11,
                BinaryContent => 12,
                LegacyFormat => 13,
                UnsupportedFormat => 14,
                Encrypted => 15,
                Corrupt => 16,
                NoOcrEngine => 17,
                Timeout => 18,
                ExtractionCrashed => 19,
                Internal => 20,
                Unavailable => 21,
                RequestTimeout => 22,
                UrlNotAllowed => 23,
                UrlHostNotAllowed => 24,
                UrlSchemeNotAllowed => 25,
                UrlAddressBlocked => 26,
                UrlRedirectBlocked => 27,
                FetchFailed => 28,
                Forbidden => 29,
                Cancelled => 30,
            }
        }
        let places: Vec<usize> = ErrorCode::ALL.iter().map(|c| place(*c)).collect();
        assert_eq!(
            places,
            (0..=30).collect::<Vec<_>>(),
            "ALL misses or repeats a code"
        );
        let mut names: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorCode::ALL.len());
    }

    #[test]
    fn codes_serialize_as_their_wire_names() {
        for code in ErrorCode::ALL {
            let v = serde_json::to_value(code).unwrap();
            assert_eq!(v, code.as_str(), "serde and as_str disagree");
            assert!(!code.default_hint().is_empty());
        }
    }
}

//! The PDF engine: PDFium bound once per process, and opening a document — passwords
//! (SASLprep'd for AES-256) and PDFium's errors mapped to docreader's codes.

use std::sync::OnceLock;

use pdfium_render::prelude::*;

use crate::error::{ApiError, ErrorCode};

/// PDFium, bound once per process (its bindings are process-global).
pub(super) fn pdfium() -> Result<&'static Pdfium, ApiError> {
    static PDFIUM: OnceLock<Result<Pdfium, String>> = OnceLock::new();
    PDFIUM
        .get_or_init(|| {
            let path = crate::native::find("libpdfium.so", Some("DOCREADER_PDFIUM_LIB"))?;
            let bindings =
                Pdfium::bind_to_library(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(Pdfium::new(bindings))
        })
        .as_ref()
        .map_err(|e| {
            ApiError::new(
                ErrorCode::Unavailable,
                "the PDF engine (PDFium) is not available",
            )
            .with_cause(e)
            .with_hint(crate::native::INSTALL_HINT)
        })
}

/// Whether PDFium can be loaded (for `/readyz` details and tests).
pub fn available() -> bool {
    pdfium().is_ok()
}

/// Open the PDF at `path`, with its password if it has one.
pub(super) fn open<'a>(
    pdfium: &'a Pdfium,
    path: &std::path::Path,
    password: Option<&str>,
) -> Result<PdfDocument<'a>, ApiError> {
    let first = pdfium.load_pdf_from_file(path, password);
    let result = match (first, password) {
        // AES-256 (R6) passwords are SASLprep'd; PDFium wants the prepared form.
        (
            Err(PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::PasswordError)),
            Some(pw),
        ) if saslprep(pw) != pw => pdfium.load_pdf_from_file(path, Some(&saslprep(pw))),
        (r, _) => r,
    };
    result.map_err(|e| match e {
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::PasswordError) => {
            match password {
                None => ApiError::new(ErrorCode::Encrypted, "the PDF is password-protected")
                    .with_hint("Send the document's password in the `password` option."),
                Some(_) => ApiError::new(
                    ErrorCode::Encrypted,
                    "the password is wrong for this PDF",
                )
                .with_hint(
                    "Check the password (it is case-sensitive) and send it again in `password`.",
                ),
            }
        }
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::SecurityError) => {
            ApiError::new(
                ErrorCode::Encrypted,
                "the PDF uses a security handler that cannot be opened",
            )
            .with_hint("Save an unprotected copy of the PDF and upload that.")
        }
        PdfiumError::IoError(e) => ApiError::internal(e),
        other => ApiError::new(
            ErrorCode::Corrupt,
            format!("the PDF cannot be opened: {}", describe(&other)),
        ),
    })
}

/// A PDF's pages as far as its page tree can be followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageCount {
    /// The pages that can be found: the first `found` of those the tree claims.
    pub found: u64,
    /// What the page tree claims (its `/Count`, which PDFium takes on trust).
    pub claimed: u64,
}

impl PageCount {
    /// Of `doc`. A tree whose `/Count` claims more pages than its kids hold (it loops back
    /// on itself, or is cut short) has only its first pages: found by asking for each
    /// page's size (the page dictionary is looked up; its content is not parsed), halving
    /// the range, so a damaged tree costs a few lookups, a sound one one.
    pub(crate) fn of(doc: &PdfDocument<'_>) -> Self {
        let pages = doc.pages();
        let claimed = pages.len().max(0) as u64;
        let there = |n: u64| n == 0 || pages.page_size((n - 1) as PdfPageIndex).is_ok();
        if there(claimed) {
            return Self {
                found: claimed,
                claimed,
            };
        }
        // `there(lo)` holds and `there(hi)` does not.
        let (mut lo, mut hi) = (0, claimed);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if there(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Self { found: lo, claimed }
    }

    /// Said in a warning, or added to an error about the page count, when pages are missing.
    pub(crate) fn shortfall(&self) -> Option<String> {
        (self.found < self.claimed).then(|| {
            format!(
                "the PDF's page tree claims {} pages, but only {} can be found in it (it is damaged: it loops back on itself or is cut short)",
                self.claimed, self.found
            )
        })
    }
}

/// The passwords `open` tries, in its order (none: an empty list).
pub(super) fn passwords(password: Option<&str>) -> Vec<String> {
    let Some(pw) = password else {
        return Vec::new();
    };
    let prepared = saslprep(pw);
    if prepared == pw {
        vec![pw.to_string()]
    } else {
        vec![pw.to_string(), prepared]
    }
}

fn describe(e: &PdfiumError) -> &'static str {
    match e {
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::FormatError) => {
            "it is damaged or not a PDF"
        }
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::FileError) => {
            "its file structure is unreadable"
        }
        _ => "PDFium rejected it",
    }
}

/// The parts of SASLprep (RFC 4013) that matter for passwords: NFKC, soft hyphens and
/// other "mapped to nothing" characters dropped, non-ASCII spaces made spaces.
fn saslprep(pw: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    pw.chars()
        .filter(|c| !matches!(*c, '\u{00AD}' | '\u{034F}' | '\u{1806}' | '\u{180B}'..='\u{180D}' | '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'))
        .map(|c| if c != ' ' && c.is_whitespace() { ' ' } else { c })
        .collect::<String>()
        .nfkc()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saslprep_drops_soft_hyphens() {
        assert_eq!(saslprep("S\u{AA}SL\u{AD}prep"), "SaSLprep");
        assert_eq!(saslprep("plain"), "plain");
    }
}

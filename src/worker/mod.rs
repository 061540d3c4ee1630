//! Worker processes: extraction runs in `docreader worker` children so that a native
//! parser (PDFium, ONNX Runtime) that crashes or balloons costs one read, not the service.
//!
//! Protocol: on the child's stdin/stdout, frames of a 4-byte little-endian length and a
//! JSON body — one `Job` in, one `Reply` out. Attachments found in a document travel as
//! files in the spool folder (the data dir's `tmp`). Each child has an address-space cap;
//! each job a deadline. A child that dies or overruns is killed and replaced.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{Mutex, Semaphore};

use crate::config::Limits;
use crate::detect::Format;
use crate::envelope::{Attachment, Envelope};
use crate::error::ApiError;
use crate::extract::page_image::{PageImage, PageImageRequest, PictureFormat};
use crate::extract::{self, Input};
use crate::options::Options;

mod allocator;
mod child;
mod pool;
mod protocol;

pub use allocator::*;
pub use child::*;
pub use pool::*;
pub use protocol::*;

#[cfg(test)]
mod tests {
    #[test]
    fn a_text_frame_must_be_utf8() {
        let text = "中文 text, ελληνικά\n".repeat(1000);
        assert_eq!(super::pool::utf8(text.clone().into_bytes()), Some(text));
        let mut bad = "中文".repeat(100).into_bytes();
        bad.insert(101, 0xFF);
        assert_eq!(super::pool::utf8(bad), None);
        // A character cut at the end.
        assert_eq!(super::pool::utf8("中文".as_bytes()[..5].to_vec()), None);
    }

    #[test]
    fn secrets_stay_out_of_workers() {
        use super::is_secret_var;
        for secret in [
            "DOCREADER_API_KEYS",
            "DOCREADER_API_KEYS_FILE",
            "DOCREADER_DATABASE_URL",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "PGPASSWORD",
            "GITHUB_TOKEN",
            "my_client_secret",
        ] {
            assert!(is_secret_var(secret), "{secret}");
        }
        for plain in [
            "PATH",
            "HOME",
            "DOCREADER_NATIVE_DIR",
            "DOCREADER_PDFIUM_LIB",
            "OMP_THREAD_LIMIT",
            "DOCREADER_LOG",
        ] {
            assert!(!is_secret_var(plain), "{plain}");
        }
    }
}

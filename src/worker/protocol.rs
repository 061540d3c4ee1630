//! The frames between the service and its workers: a 4-byte little-endian length and a
//! JSON body; one `Job` in, one `Reply` out.

use super::*;

/// Largest frame accepted either way (a reply carries at most the text of one read).
pub(super) const MAX_FRAME: usize = 512 * 1024 * 1024;
/// Replies larger than this are parsed on the blocking pool, not on a runtime thread.
pub(super) const INLINE_PARSE_BYTES: usize = 64 * 1024;

#[derive(Debug, Serialize, Deserialize)]
pub struct Job {
    pub path: PathBuf,
    pub name: String,
    pub mime: String,
    pub size: u64,
    pub task: Task,
    pub limits: Limits,
    /// Milliseconds left until the read's deadline.
    pub deadline_ms: u64,
    /// OCR lines the document memory holds for pages of these bytes.
    pub known_ocr: std::collections::HashMap<u64, Vec<crate::ocr::OcrLine>>,
    /// The request this read serves, for the worker's log lines.
    pub request_id: Option<String>,
    /// Whether progress frames are wanted (a streamed read, a job); without a listener
    /// they would cost the server a wake-up per page for nothing.
    #[serde(default)]
    pub progress: bool,
}

/// What a job does: read the file, or draw one of its pages (`GET /files/{id}/pages/{n}`).
#[derive(Debug, Serialize, Deserialize)]
pub enum Task {
    Read {
        file_id: Option<String>,
        opts: Options,
    },
    Draw(PageImageRequest),
}

/// What a job gave: a read's envelope, or a drawn page.
#[derive(Debug)]
pub enum Done {
    Read(Envelope),
    Picture(PageImage),
}

#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    /// Sent any number of times before the final reply.
    Progress(extract::Progress),
    Ok {
        envelope: Envelope,
        attachments: Vec<(String, PathBuf)>,
        fresh_ocr: Vec<(u64, Vec<crate::ocr::OcrLine>)>,
        /// Where the text's units stand (the envelope does not serialize them).
        #[serde(default)]
        spans: Vec<crate::model::Span>,
        /// The envelope's text is not in this frame but the next one, as its UTF-8 bytes
        /// (`TEXT_APART`): the server takes it as it comes, not a JSON string to parse and
        /// copy while the frame is still held.
        #[serde(default)]
        text_follows: bool,
    },
    /// A drawn page, its bytes in a spool file.
    Picture {
        path: PathBuf,
        format: PictureFormat,
        width: u32,
        height: u32,
    },
    Err(ApiError),
    /// An allocation failed under the memory cap; the worker is about to abort.
    OutOfMemory {
        cap_mb: u64,
    },
}

/// A read's text of more bytes than this goes to the server in a frame of its own
/// (`Reply::Ok::text_follows`): a 50 MB text was held twice in the server (the frame, and
/// the string parsed out of it) before its answer was even made. Low, since a text in the
/// reply's JSON costs an escaping pass in the worker and a parse in the server, where a
/// frame of its own costs one UTF-8 check (a 30 KB CJK text: ~6 % of its read).
pub(super) const TEXT_APART: usize = 4 * 1024;

/// A message as one frame: its length (4 bytes, little-endian), then its JSON. Built whole
/// so it goes out in one write: written in two, the reader may wake for the length alone
/// and wait again for the rest (a second wake-up each way, each job).
pub(super) fn frame<T: serde::Serialize>(message: &T) -> serde_json::Result<Vec<u8>> {
    let mut buf = vec![0u8; 4];
    serde_json::to_writer(&mut buf, message)?;
    let len = u32::try_from(buf.len() - 4).map_err(|_| {
        <serde_json::Error as serde::ser::Error>::custom("a message too large for one frame")
    })?;
    buf[..4].copy_from_slice(&len.to_le_bytes());
    Ok(buf)
}

pub(super) async fn write_frame<W: AsyncWriteExt + Unpin>(
    w: &mut W,
    frame: &[u8],
) -> std::io::Result<()> {
    w.write_all(frame).await?;
    w.flush().await
}

pub(super) async fn read_frame<R: AsyncReadExt + Unpin>(r: &mut R) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await?;
    let n = u32::from_le_bytes(len) as usize;
    if n > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "frame too large",
        ));
    }
    let mut body = vec![0u8; n];
    r.read_exact(&mut body).await?;
    Ok(body)
}

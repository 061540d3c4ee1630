//! The read service: every read — `POST /read`, its SSE stream, `file_ids`, jobs, the MCP
//! tools, search indexing and the CLI — is `ReadService::prepare` (or `read_local_with`
//! for the CLI's local file) then `ReadService::run`. A request becomes a checked
//! `ReadPlan` once (`plan`), runs on the one `Executor` (`executor`: in-process or worker
//! processes; it owns the slot, the deadline, the span and the timeout), and the service
//! (`service`) resolves the file, remembers OCR, keeps attachments and counts the read.
//! `many` reads several files with one budget (`file_ids`).

pub mod executor;
pub mod fair;
pub mod held;
pub mod many;
pub mod plan;
pub mod service;

pub use executor::Executor;
pub use many::{ReadResult, ReadResults};
pub use plan::{check_values, ReadPlan};
pub use service::{ReadService, Storage};

//! docreader: one service that reads any document and hands back its text in one JSON
//! envelope. `app(state)` is the whole HTTP service; `read::ReadService` is the one way a
//! read runs, with or without a server.
//!
//! Layers look only down: `http` → `read` → `extract` → (`ocr`, `sniff`, `options`,
//! `envelope`, `error`); `files`, `db` and `store` keep uploads beside them.

pub mod callbacks;
pub mod config;
pub mod db;
pub mod detect;
pub mod envelope;
pub mod error;
pub mod extract;
pub mod fetch;
pub mod files;
pub mod findings;
pub mod http;
pub mod jobs;
pub mod metrics;
pub mod model;
pub mod native;
pub mod ocr;
pub mod options;
pub mod read;
pub mod report;
pub mod request_id;
pub mod search;
pub mod store;
pub mod tokens;
pub mod worker;

pub use http::{app, AppState};

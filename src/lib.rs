//! docreader: one service that reads any document and hands back its text in one JSON
//! envelope. `app(state)` is the whole HTTP service; `extract::read_blocking` is the same
//! read without a server.

pub mod config;
pub mod db;
pub mod envelope;
pub mod error;
pub mod extract;
pub mod http;
pub mod native;
pub mod ocr;
pub mod options;
pub mod sniff;
pub mod store;
pub mod worker;

pub use http::{app, AppState};

#[global_allocator]
static ALLOC: worker::CapAwareAlloc = worker::CapAwareAlloc;

//! All integration tests, in one binary: they drive `app()` (and one runs the real binary).

mod common;
mod connections;
mod container_files;
mod corpus;
mod errors;
mod findings;
mod fuzz;
mod hardening;
mod many;
mod mcp;
mod memory;
mod ocr;
mod office;
mod openapi;
mod opendoc;
mod pages;
mod pdf;
mod profile;
mod read_text;
mod search;
mod server;
mod tokens;
mod upload;
mod upload_url;
mod url_input;
mod workers;

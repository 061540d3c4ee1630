//! `/mcp`: the Model Context Protocol over Streamable HTTP (rmcp), on the same app, behind
//! the same API keys and tenants (a Bearer key, as for every other endpoint). Stateless:
//! no session is kept, so any replica answers any request.
//!
//! Tools, written for a model to choose between them and page through a document:
//! `read_document` (every `/read` option; a compact header, then the text; the envelope as
//! structured content), `list_documents` and `document_info` (what a file is, without its
//! text), `upload_document` (a small file as base64, or an upload URL the host sends any
//! file to). Errors come back as tool errors with the same code, message and hint as HTTP.

use std::sync::Arc;

use axum::extract::{FromRequestParts, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServerHandler;
use serde_json::{json, Value};

use super::auth::Tenant;
use super::AppState;
use crate::error::{ApiError, ErrorCode};
use crate::extract::page_image::{PageImageRequest, PictureFormat};
use crate::extract::ProgressSink;
use crate::options::ReadRequest;
use crate::read::service::Drawn;

/// A read through MCP with no budget of its own stops at this many estimated tokens (an
/// upper bound: common MCP clients take 10k–25k tokens in one tool result), and says how
/// to read on.
pub const DEFAULT_MAX_TOKENS: u64 = 8_000;

/// The most text one tool call over HTTP asks for (`max_chars`; `max_tokens` a quarter of
/// it): more than any model's context, and a bound on what a stalled client holds.
pub const MAX_HTTP_CHARS: u64 = 1_000_000;

/// The tools' handler: the app's state; the tenant comes with each request (over
/// stdio, the one local user: the tenant a server without keys has).
#[derive(Clone)]
struct Docreader {
    st: AppState,
    /// Served over stdio to a local agent host (`docreader mcp`): `path` reads local files
    /// under the allowed roots; no upload URLs (there is no HTTP server to send them to).
    stdio: bool,
}

const READ_DESCRIPTION: &str = "Read the text of a document uploaded to docreader (PDF, Word, PowerPoint, Excel, OpenDocument, EPUB, e-mail, images with OCR, text and CSV in any encoding). \
Give `file_id` (from list_documents or an upload), or `file_ids` (up to 10, read in order within one budget), or `url` (an http(s) address on the operator's list; it becomes an upload whose file_id the answer gives), or a small file itself as `content_base64` with its `name` (read once and not kept, unless `keep`), and, if needed, options: `pages` (\"1-5\") for PDF and slides, `chapters` for EPUB, `sheet`/`range` for spreadsheets, `offset`/`limit` for lines of text, `section` for one heading's section (an outline id from document_info, or a title), `query` to get only matching lines, `ocr`/`ocr_lang` for scans. \
The answer holds at most about 8000 tokens unless `max_tokens` (or `max_chars`) says otherwise (a call takes at most 250000 tokens, 1000000 characters). It starts with a header line (format, what was read, whether it was cut) and then the text. When the text was cut, the header gives `next`: call read_document again with the same file_id and those option values to read on. \
An option that does not fit the format is an error that names the options that do.";

const START_DESCRIPTION: &str = "Start a read that may take longer than one tool call can wait (OCR of many scanned pages, a large file): the same arguments as read_document (the same 8000-token budget unless `max_tokens` or `max_chars` says otherwise), answered at once with a job_id. \
Then call read_result with that job_id: it waits up to `wait_seconds` for the read to end and gives the text with read_document's header, or the read's progress so far.";

const RESULT_DESCRIPTION: &str = "The outcome of a read started with start_read: the text with read_document's header once it is done (with `next` to read on), its progress while it runs (call again), or its error. \
`wait_seconds` (0 to 50, default 20) waits for the read to end before answering.";

/// The longest `read_result` waits for a job to end (below the minute common MCP clients
/// give a call).
const MAX_RESULT_WAIT_SECONDS: u64 = 50;

const LIST_DESCRIPTION: &str = "List the documents uploaded to docreader for this API key: file_id, name, format, size, upload time, newest first. Use a file_id with read_document or document_info.";

/// The largest file `upload_document` takes (decoded): base64 through a model's context
/// is for small files; larger ones go through `POST /upload`.
pub const MAX_UPLOAD_BYTES: usize = 8 << 20;

const UPLOAD_DESCRIPTION: &str = "Store a document the user gave you so it can be read; returns its file_id for read_document. Two ways: \
(1) a small file (at most 8 MiB): give `name` (with its extension, e.g. report.pdf) and `content_base64` (the file's bytes, base64); \
(2) any larger file, or one your host can send itself: give only `name`; the answer is an `upload_url` (single use, valid 15 minutes, no API key needed) to which the bytes are sent with plain HTTP, e.g. `curl -T report.pdf <upload_url>`; that answer carries the file_id. \
The type is decided from the content; executables and archives are refused.";

const SEARCH_DESCRIPTION: &str = "Search the user's uploaded documents for words (BM25 ranking: documents with more of the words, and rarer ones, first; words in double quotes, e.g. \"net total\", must stand together; Chinese, Japanese and Korean match from two characters). Returns the best places first: file_id, name, page/slide/sheet/chapter, line and a snippet; then read_document with that file_id and `pages` (or `sheet`, `chapters`) to read around it. \
Searched is what was read before; files named in `file_ids` that were never read are read whole first (that can take a while for long scans). `limit` (default 10, at most 100) caps the hits.";

const DELETE_DESCRIPTION: &str = "Delete a document uploaded to docreader: its file_id stops working, and its text leaves search (the bytes go once no other upload holds them). Use it when the user asks to remove a document, or for files you uploaded only to read once.";

const INDEX_DESCRIPTION: &str = "Make a whole document searchable: reads it from start to end (following every `next`) into the search index, so search_documents finds words anywhere in it, not only in the parts read so far. Answers with how many reads and characters that took. Long scans take a while (OCR).";

const INFO_DESCRIPTION: &str = "What a document is, without reading its text: name, format, mime, size, and its structure (pages, slides, sheets with their sizes, chapters, paragraphs and tables) and outline (headings with the id `section` takes). Use it to plan which `pages`, `sheet`, `chapters` or `section` to read.";

const RENDER_DESCRIPTION: &str = "Look at a page: a PDF page (or an image file's page) as a PNG picture, to see a chart, a table's layout, a signature or a scan that read_document's text cannot show. `page` from 1; `width` in pixels (default 1000, at most 2000: pictures cost context too). Other formats have no pages to draw: read them with read_document.";

/// The widest picture `render_page` gives a model (a page at 1000 px is about 1,300 tokens
/// of image in the models that count them by tiles).
const RENDER_MAX_WIDTH: u64 = 2000;

fn schema(v: Value) -> Arc<JsonObject> {
    Arc::new(v.as_object().cloned().unwrap_or_default())
}

/// read_document's input schema: the read options this transport takes (no `async` or
/// `callback_url`: a tool call answers with the read; `path` only over stdio; `url` only
/// where the operator lists hosts to fetch).
fn read_schema(stdio: bool, urls: bool, inline: bool) -> Value {
    let mut v = serde_json::to_value(schemars::schema_for!(ReadRequest)).unwrap_or_default();
    if let Some(props) = v.get_mut("properties").and_then(Value::as_object_mut) {
        props.remove("async");
        props.remove("callback_url");
        if !stdio {
            props.remove("path");
        }
        if !urls {
            props.remove("url");
        }
        // The one-shot form: the file in the call (`inline_file`); read_document's only, and
        // not over stdio, where a local host names the file by `path`.
        if inline {
            props.insert(
            "content_base64".into(),
            json!({"type": "string", "description": "Instead of file_id: the file itself, base64 (8 MiB at most)."}),
        );
            props.insert(
                "name".into(),
                json!({"type": "string", "description": "Its file name."}),
            );
            props.insert(
                "keep".into(),
                json!({"type": "boolean", "description": "Keep it as an upload."}),
            );
        }
        // An alias of `pages`: one name is enough for a model.
        props.remove("page_range");
        // An option is left out, never sent as null: its type without `null`.
        for p in props.values_mut() {
            not_null(p);
        }
    }
    // Each description's first sentence (options and their values alike): the whole of
    // ReadRequest's documentation is the HTTP API's (openapi.json); a model reads this on
    // every turn.
    shorten_descriptions(&mut v);
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
        // A closed set of strings as `enum` (its values' own descriptions are in the
        // option's): `oneOf` of `const`s costs a model four times the characters.
        if let Some(defs) = o.get_mut("$defs").and_then(Value::as_object_mut) {
            for d in defs.values_mut() {
                let consts: Option<Vec<Value>> = d
                    .get("oneOf")
                    .and_then(Value::as_array)
                    .and_then(|alts| alts.iter().map(|a| a.get("const").cloned()).collect());
                if let Some(values) = consts {
                    *d = json!({"type": "string", "enum": values});
                }
            }
        }
    }
    v
}

/// A property's schema without its `null` alternative (`["boolean","null"]` → `boolean`,
/// `anyOf: [{$ref}, {type: null}]` → the `$ref`, its description kept).
fn not_null(p: &mut Value) {
    let Some(o) = p.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(types)) = o.get("type") {
        let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if rest.len() == 1 {
            o.insert("type".into(), rest[0].clone());
        }
    }
    if let Some(Value::Array(alts)) = o.get("anyOf") {
        let rest: Vec<Value> = alts
            .iter()
            .filter(|a| a.get("type").and_then(Value::as_str) != Some("null"))
            .cloned()
            .collect();
        if let [Value::Object(only)] = rest.as_slice() {
            let only = only.clone();
            o.remove("anyOf");
            for (k, x) in only {
                o.entry(k).or_insert(x);
            }
        }
    }
}

fn shorten_descriptions(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match (k.as_str(), x.as_str()) {
                    ("description", Some(text)) => *x = Value::String(first_sentence(text)),
                    _ => shorten_descriptions(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(shorten_descriptions),
        _ => {}
    }
}

/// A description's first sentence (up to 120 characters, cut at a word), line breaks made
/// spaces.
fn first_sentence(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = flat
        .match_indices(". ")
        .map(|(i, _)| i + 1)
        .find(|&i| i >= 20)
        .unwrap_or(flat.len());
    let mut out = flat[..end].to_string();
    if out.chars().count() > 120 {
        let cut: String = out.chars().take(120).collect();
        out = match cut.rfind(' ') {
            Some(i) => format!("{}…", &cut[..i]),
            None => cut,
        };
    }
    out
}

fn tools(stdio: bool, urls: bool) -> Vec<Tool> {
    let read_only = ToolAnnotations::new().read_only(true).idempotent(true);
    let file_id_only = json!({
        "type": "object",
        "properties": {"file_id": {"type": "string", "description": "from list_documents or an upload"}},
        "required": ["file_id"],
        "additionalProperties": false
    });
    let read_description = if stdio {
        format!("{READ_DESCRIPTION} Over this local connection `path` reads a local file by its path (absolute, or `~/…`) when it lies under the folders docreader was started with (--allowed-roots).")
    } else {
        READ_DESCRIPTION.to_string()
    };
    vec![
        Tool::new("read_document", read_description, schema(read_schema(stdio, urls, !stdio)))
            .with_annotations(read_only.clone()),
        Tool::new(
            "list_documents",
            LIST_DESCRIPTION,
            schema(json!({
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100},
                    "offset": {"type": "integer", "minimum": 0, "default": 0}
                },
                "additionalProperties": false
            })),
        )
        .with_annotations(read_only.clone()),
        Tool::new(
            "upload_document",
            UPLOAD_DESCRIPTION,
            schema(json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "description": "file name with extension"},
                    "content_base64": {"type": "string", "description": "the file's bytes, base64 (standard alphabet), at most 8 MiB decoded; leave out to get an upload_url instead"}
                },
                "required": ["name"],
                "additionalProperties": false
            })),
        )
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(false)),
        Tool::new(
            "search_documents",
            SEARCH_DESCRIPTION,
            schema(serde_json::to_value(schemars::schema_for!(crate::search::SearchRequest)).unwrap_or_default()),
        )
        .with_annotations(read_only.clone()),
        Tool::new("document_info", INFO_DESCRIPTION, schema(file_id_only.clone()))
            .with_annotations(read_only.clone()),
        Tool::new("delete_document", DELETE_DESCRIPTION, schema(file_id_only.clone()))
            .with_annotations(
                ToolAnnotations::new()
                    .read_only(false)
                    .destructive(true)
                    .idempotent(true),
            ),
        Tool::new("index_document", INDEX_DESCRIPTION, schema(file_id_only))
            .with_annotations(
                ToolAnnotations::new()
                    .read_only(false)
                    .destructive(false)
                    .idempotent(true),
            ),
        Tool::new("start_read", START_DESCRIPTION, schema(read_schema(stdio, urls, false)))
            .with_annotations(ToolAnnotations::new().read_only(false).destructive(false)),
        Tool::new(
            "read_result",
            RESULT_DESCRIPTION,
            schema(json!({
                "type": "object",
                "properties": {
                    "job_id": {"type": "string", "description": "from start_read"},
                    "wait_seconds": {"type": "integer", "minimum": 0, "maximum": MAX_RESULT_WAIT_SECONDS, "default": 20}
                },
                "required": ["job_id"],
                "additionalProperties": false
            })),
        )
        .with_annotations(read_only.clone()),
        Tool::new(
            "render_page",
            RENDER_DESCRIPTION,
            schema(json!({
                "type": "object",
                "properties": {
                    "file_id": {"type": "string", "description": "from list_documents or an upload"},
                    "page": {"type": "integer", "minimum": 1, "default": 1},
                    "width": {"type": "integer", "minimum": 100, "maximum": RENDER_MAX_WIDTH, "default": 1000},
                    "password": {"type": "string", "description": "an encrypted PDF's password"}
                },
                "required": ["file_id"],
                "additionalProperties": false
            })),
        )
        .with_annotations(read_only),
    ]
    .into_iter()
    .map(|t| {
        let title = match t.name.as_ref() {
            "read_document" => "Read a document",
            "list_documents" => "List documents",
            "upload_document" => "Upload a document",
            "search_documents" => "Search documents",
            "document_info" => "Describe a document",
            "delete_document" => "Delete a document",
            "index_document" => "Index a whole document for search",
            "start_read" => "Start a long read",
            "read_result" => "Get a started read's result",
            _ => "Look at a page",
        };
        let t = t.with_title(title);
        match output_schema(&t.name) {
            Some(o) => t.with_raw_output_schema(o),
            None => t,
        }
    })
    .collect()
}

/// The schema of a tool's structured content (`outputSchema`), from the same types the
/// HTTP API documents (openapi.json's components, descriptions cut to their first
/// sentence). `render_page` answers with a picture and has none.
fn output_schema(tool: &str) -> Option<Arc<JsonObject>> {
    static SCHEMAS: std::sync::OnceLock<std::collections::HashMap<&'static str, Arc<JsonObject>>> =
        std::sync::OnceLock::new();
    SCHEMAS
        .get_or_init(|| {
            let file = json!({"$ref": "#/$defs/FileRecord"});
            // The description is built once for all the tools' schemas.
            let doc = super::openapi();
            let components = &doc["components"]["schemas"];
            let of = |top: Value| -> Arc<JsonObject> { closed(top, components) };
            [
                (
                    "read_document",
                    of(json!({"anyOf": [{"$ref": "#/$defs/Envelope"}, {"$ref": "#/$defs/ReadResults"}]})),
                ),
                (
                    "list_documents",
                    of(json!({"properties": {"files": {"type": "array", "items": file}}, "required": ["files"]})),
                ),
                (
                    "upload_document",
                    of(json!({"anyOf": [
                        {"$ref": "#/$defs/UploadUrl"},
                        {"properties": {"file": file}, "required": ["file"]}
                    ]})),
                ),
                ("search_documents", of(json!({"properties": {"hits": {"type": "array", "items": {"$ref": "#/$defs/Hit"}}}, "required": ["hits"]}))),
                (
                    "document_info",
                    of(json!({"properties": {
                        "file": file,
                        "structure": {"type": "object", "description": "pages, slides, sheets, chapters and their sizes, metadata"},
                        "ocr": {"type": "object", "description": "the OCR engine a read would use on scans and images"}
                    }, "required": ["file"]})),
                ),
                (
                    "delete_document",
                    of(json!({"properties": {"status": {"type": "string"}, "deleted": {"type": "string"}}, "required": ["status", "deleted"]})),
                ),
                (
                    "index_document",
                    of(json!({"properties": {
                        "status": {"type": "string"}, "file_id": {"type": "string"},
                        "reads": {"type": "integer", "minimum": 0}, "chars": {"type": "integer", "minimum": 0}
                    }, "required": ["status", "file_id", "reads", "chars"]})),
                ),
                ("start_read", of(json!({"$ref": "#/$defs/JobView"}))),
                ("read_result", of(json!({"$ref": "#/$defs/JobView"}))),
            ]
            .into_iter()
            .collect()
        })
        .get(tool)
        .cloned()
}

/// `top` (an object's schema) with every component (of openapi.json's) it reaches under
/// `$defs`.
fn closed(top: Value, components: &Value) -> Arc<JsonObject> {
    let mut defs = serde_json::Map::new();
    let mut todo = refs_in(&top);
    while let Some(name) = todo.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        let Some(mut def) = components.get(&name).cloned() else {
            continue;
        };
        todo.extend(refs_in(&def));
        rewrite_refs(&mut def);
        defs.insert(name, def);
    }
    let mut v = top;
    v["type"] = json!("object");
    rewrite_refs(&mut v);
    v["$defs"] = Value::Object(defs);
    shorten_descriptions(&mut v);
    schema(v)
}

/// The component names a schema's `$ref`s name.
fn refs_in(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                match (k.as_str(), x.as_str()) {
                    ("$ref", Some(r)) => {
                        let name = r.rsplit('/').next().unwrap_or(r);
                        out.push(name.to_string());
                    }
                    _ => out.extend(refs_in(x)),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| out.extend(refs_in(x))),
        _ => {}
    }
    out
}

/// OpenAPI's `#/components/schemas/X` as `#/$defs/X` (the tool schema stands alone);
/// `example`s dropped (not JSON Schema's, and a model needs none here); `oneOf` as `anyOf`
/// (utoipa's untagged enums overlap: an empty `boxes` array is both of its shapes, which
/// `oneOf` refuses).
fn rewrite_refs(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.remove("example");
            if let Some(alts) = o.remove("oneOf") {
                o.insert("anyOf".into(), alts);
            }
            for (k, x) in o.iter_mut() {
                match (k.as_str(), x.as_str()) {
                    ("$ref", Some(r)) => {
                        *x = Value::String(r.replace("#/components/schemas/", "#/$defs/"))
                    }
                    _ => rewrite_refs(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

/// A hint in the words of this server's tools: the HTTP routes a hint names become the
/// tools that do the same (`GET /files` → `list_documents`), the API docs the tool's
/// input schema.
fn mcp_words(hint: &str) -> String {
    let mut out = hint.to_string();
    for (http, tool) in [
        ("GET /files", "the list_documents tool"),
        ("POST /uploads", "the upload_document tool"),
        ("POST /upload", "the upload_document tool"),
        ("POST /read", "the read_document tool"),
        ("POST /search", "the search_documents tool"),
        (
            "the ReadRequest schema at /docs",
            "read_document's input schema",
        ),
        ("/docs", "the tool's input schema"),
    ] {
        out = out.replace(http, tool);
    }
    out
}

/// A tool error a model can act on: the error envelope's code, message and hint (in the
/// tools' words).
fn tool_error(mut e: ApiError) -> CallToolResult {
    e.hint = mcp_words(&e.hint);
    let body = json!({"status": "error", "error": {
        "code": e.code.as_str(), "message": e.message, "hint": e.hint}});
    let mut text = format!("error {}: {}", e.code.as_str(), e.message);
    if !e.hint.is_empty() {
        text.push_str(&format!("\nWhat to do: {}", e.hint));
    }
    let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
    r.structured_content = Some(body);
    r
}

/// The head of a read_document answer, one line before the text: what was read, how much
/// of it is shown, OCR and hidden text, how to read on — and what a model must not miss:
/// pages not read because they need OCR, and the read's warnings (a scan read without OCR
/// is no empty document).
fn header(env: &crate::envelope::Envelope) -> String {
    let r = &env.report;
    let mut parts = vec![format!("[{} · {}]", env.file, env.format.as_str())];
    for (shown, total, unit) in [
        (&r.page_range_read, r.total_pages, "pages"),
        (&r.slide_range_read, r.total_slides, "slides"),
        (&r.chapter_range_read, r.total_chapters, "chapters"),
    ] {
        match (shown.as_deref().filter(|s| !s.is_empty()), total) {
            (Some(s), Some(t)) => parts.push(format!("{unit} {s} of {t}")),
            (Some(s), None) => parts.push(format!("{unit} {s}")),
            (None, Some(t)) => parts.push(format!("no whole one of the {t} {unit} shown")),
            (None, None) => {}
        }
    }
    if let Some(m) = env.matches {
        parts.push(format!("matches {m}"));
    }
    // The text's characters, less the line that says it was cut.
    let shown = crate::envelope::without_truncation_line(&env.text)
        .chars()
        .count();
    parts.push(format!("{shown} chars shown"));
    if let Some(q) = &r.ocr_quality {
        let engine = r.ocr_engine.as_deref().unwrap_or("OCR");
        match q.quality_flag.as_str() {
            "" | "no_ocr_needed" => {}
            "no_ocr_engine" => parts.push("no OCR ran".to_string()),
            flag => {
                let pages = q.ocr_pages;
                let mut ocr = format!(
                    "OCR by {engine} on {pages} page{}, quality {flag}",
                    if pages == 1 { "" } else { "s" }
                );
                let mut scripts: Vec<&str> = q
                    .unsupported_script
                    .iter()
                    .flatten()
                    .map(|l| l.script.as_str())
                    .collect();
                scripts.sort_unstable();
                scripts.dedup();
                if !scripts.is_empty() {
                    ocr.push_str(&format!(" (lines in {} left out)", scripts.join(", ")));
                }
                parts.push(ocr);
            }
        }
    }
    if let Some(sec) = &env.security {
        // What a person would not see, before the model reads it.
        parts.push(format!(
            "WARNING {} (see structured content: security)",
            sec.summary
        ));
    }
    if let Some(t) = env.tokens {
        parts.push(format!("~{t} tokens shown"));
    }
    let skipped: Vec<String> = r
        .skipped_pages
        .iter()
        .flatten()
        .map(u64::to_string)
        .collect();
    // A read stopped by its deadline or a text file's byte window has more to read
    // without being `truncated`: `next` says so either way.
    match env.next.as_ref().filter(|n| !n.is_empty()) {
        Some(next) => parts.push(format!(
            "cut: read on with the same file_id and {}",
            serde_json::to_string(next).unwrap_or_default()
        )),
        _ if !skipped.is_empty() => parts.push("incomplete: pages not read (see NOT READ)".into()),
        _ => parts.push("complete".into()),
    }
    if !skipped.is_empty() {
        let (s, verb, them) = if skipped.len() == 1 {
            ("", "s", "it")
        } else {
            ("s", "", "them")
        };
        let engine = crate::ocr::local_engine().is_some()
            || !crate::ocr::tesseract::installed_data().is_empty();
        parts.push(if engine {
            format!(
                "NOT READ: page{s} {} need{verb} OCR and had none; call read_document with the same file_id, ocr \"auto\" and pages \"{}\" to read {them}.",
                skipped.join(", "),
                skipped.join(","),
            )
        } else {
            format!(
                "NOT READ: page{s} {} need{verb} OCR and no OCR engine is installed on this server: their text cannot be read here (render_page shows {them} as pictures).",
                skipped.join(", "),
            )
        });
    }
    for w in env.warnings.iter().take(MAX_HEADER_NOTES) {
        parts.push(format!("Note: {w}"));
    }
    if env.warnings.len() > MAX_HEADER_NOTES {
        parts.push(format!(
            "+{} more notes in structured content: warnings",
            env.warnings.len() - MAX_HEADER_NOTES
        ));
    }
    // One line: the text starts on the next.
    parts.join(" · ").replace('\n', " ")
}

/// A file's bytes from `content_base64` (upload_document's, and read_document's one-shot
/// form): at most `MAX_UPLOAD_BYTES` decoded, refused before decoding when longer.
fn decode_content(name: &str, content: &str) -> Result<Vec<u8>, ApiError> {
    use base64::Engine;
    if content.len() / 4 * 3 > MAX_UPLOAD_BYTES + 3 {
        return Err(ApiError::new(
            crate::error::ErrorCode::TooLarge,
            format!("{name}: over the {} MiB a tool call carries", MAX_UPLOAD_BYTES >> 20),
        )
        .with_hint("Call upload_document with only `name` to get an upload_url, and send the bytes there with HTTP PUT."));
    }
    let compact: String = content.split_whitespace().collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| {
            ApiError::invalid_option(format!("content_base64 is not base64: {e}"))
                .with_hint("Send the file's bytes base64-encoded with the standard alphabet (A–Z a–z 0–9 + /, = padding).")
        })
}

/// Warnings written out in a read's head at most (the rest are in structured content).
const MAX_HEADER_NOTES: usize = 5;

impl Docreader {
    /// read_document's one-shot form (#46 item 2): `content_base64` and `name` carry the
    /// file in the call, as `upload_document` takes it (8 MiB, sniffed and blocked the
    /// same). Not kept (the default), it is held for this read alone and never stored
    /// (`Files::carried`); with `keep` it is stored first and the call reads it by its new
    /// `file_id`. `Ok(None)` when the call names its file otherwise, or keeps it.
    async fn inline_file(
        &self,
        tenant: &str,
        args: &mut JsonObject,
    ) -> Result<Option<crate::files::Carried>, ApiError> {
        let Some(content) = args.remove("content_base64") else {
            if args.contains_key("name") || args.contains_key("keep") {
                return Err(ApiError::invalid_option(
                    "`name` and `keep` go with content_base64",
                )
                .with_hint("Give the file's bytes in content_base64 with its name, or read it by file_id."));
            }
            return Ok(None);
        };
        let Some(content) = content.as_str().map(str::to_string) else {
            return Err(ApiError::invalid_option("content_base64 must be a string"));
        };
        let name = match args.remove("name") {
            Some(Value::String(n)) if !n.trim().is_empty() => n,
            _ => {
                return Err(ApiError::invalid_option(
                    "`name` (with its extension) is required with content_base64",
                ))
            }
        };
        let keep = match args.remove("keep") {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(_) => return Err(ApiError::invalid_option("keep must be true or false")),
        };
        if let Some(e) = super::read::one_shot_misfit(args) {
            return Err(e);
        }
        let bytes = decode_content(&name, &content)?;
        if !keep {
            return self.st.files.carried_bytes(&name, &bytes).await.map(Some);
        }
        let (file, _) = self.st.files.store_bytes(tenant, &name, &bytes).await?;
        args.insert("file_id".into(), Value::String(file.file_id));
        Ok(None)
    }

    async fn read_document(
        &self,
        tenant: &str,
        mut args: JsonObject,
        progress: ProgressSink,
    ) -> CallToolResult {
        // A carried file's temp file goes when the read ends, a call the host drops
        // included.
        let carried = match self.inline_file(tenant, &mut args).await {
            Ok(c) => c,
            Err(e) => return tool_error(e),
        };
        self.read_document_named(tenant, args, progress, carried)
            .await
    }

    async fn read_document_named(
        &self,
        tenant: &str,
        args: JsonObject,
        progress: ProgressSink,
        carried: Option<crate::files::Carried>,
    ) -> CallToolResult {
        let req = match self.read_request(args, true) {
            Ok(r) => r,
            Err(e) => return tool_error(e),
        };
        if req.file_ids.is_some() {
            return match self.st.reader.read_many(tenant, req, None).await {
                Ok(results) => {
                    use crate::read::many::ReadResult;
                    let parts: Vec<String> = results
                        .results
                        .iter()
                        .map(|r| match r {
                            ReadResult::Read(env) => format!("{}\n{}", header(env), env.text),
                            ReadResult::Failed(f) => format!(
                                "[{}] error {}: {} What to do: {}",
                                f.file_id,
                                f.error.code.as_str(),
                                f.error.message,
                                mcp_words(&f.error.hint)
                            ),
                            ReadResult::NotRead(n) => format!(
                                "[{}] not read: {} {}",
                                n.file_id,
                                n.message,
                                mcp_words(&n.hint)
                            ),
                        })
                        .collect();
                    let mut r =
                        CallToolResult::success(vec![ContentBlock::text(parts.join("\n\n"))]);
                    r.structured_content = serde_json::to_value(&results).ok();
                    r
                }
                Err(e) => tool_error(e),
            };
        }
        let prepared = match carried {
            Some(file) => self.st.reader.prepare_carried(tenant, req, file),
            None => self.st.reader.prepare(tenant, req).await,
        };
        let prepared = match prepared {
            Ok(p) => p,
            Err(e) => return tool_error(e),
        };
        match self.st.reader.run(prepared, progress).await {
            Ok(env) => {
                let text = format!("{}\n{}", header(&env), env.text);
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = serde_json::to_value(&env).ok();
                r
            }
            Err(e) if e.code == ErrorCode::Timeout => tool_error(e.with_hint(
                "Nothing was done before the deadline: start the read with start_read and fetch it with read_result, which can wait for it.",
            )),
            Err(e) => tool_error(e),
        }
    }

    /// read_document's (and start_read's) arguments as a read request, with what MCP
    /// adds: a token budget and, for a call answered with the read (`wait`), a deadline a
    /// client waits out (a read cut by it comes back `partial` with `next`), unless the call
    /// gives its own.
    fn read_request(&self, args: JsonObject, wait: bool) -> Result<ReadRequest, ApiError> {
        let mut req: ReadRequest = serde_json::from_value(Value::Object(args)).map_err(|e| {
            ApiError::invalid_option(format!("bad option: {e}"))
                .with_hint("The tool's input schema lists every option and its type.")
        })?;
        if req.path.is_some() && !self.stdio {
            return Err(ApiError::invalid_option(
                "`path` is not available over MCP's HTTP endpoint: read uploaded files by file_id",
            ));
        }
        if req.run_async.is_some() || req.callback_url.is_some() {
            return Err(ApiError::invalid_option(
                "`async` and `callback_url` are not available over MCP: a tool call answers with the read itself (or start_read runs it as a job)",
            ));
        }
        if req.max_chars.is_none() && req.max_tokens.is_none() {
            req.max_tokens = Some(DEFAULT_MAX_TOKENS as i64);
        }
        // A tool answer carries its text twice (content and structured content) and is
        // written whole: over HTTP it is held to what a model's context takes.
        let over = req.max_chars.is_some_and(|n| n > MAX_HTTP_CHARS as i64)
            || req
                .max_tokens
                .is_some_and(|n| n > MAX_HTTP_CHARS as i64 / 4);
        if over && !self.stdio {
            return Err(ApiError::invalid_option(format!(
                "a tool call over HTTP answers at most {MAX_HTTP_CHARS} characters ({} tokens)",
                MAX_HTTP_CHARS / 4
            ))
            .with_hint("Ask for less and read on with the `next` the answer gives, or read the whole text with POST /read."));
        }
        if wait && req.deadline_ms.is_none() && self.st.mcp_deadline_ms > 0 {
            req.deadline_ms = Some(self.st.mcp_deadline_ms.min(i64::MAX as u64) as i64);
        }
        Ok(req)
    }

    /// Queue a read as a job (the same job `POST /read` with `async` makes): what can be
    /// checked without reading is checked now.
    async fn start_read(&self, tenant: &str, args: JsonObject) -> CallToolResult {
        if args.contains_key("content_base64") {
            return tool_error(
                ApiError::invalid_option("start_read reads a stored file: content_base64 does not fit it")
                    .with_hint("Store the file with upload_document and start the read with its file_id, or read a small file at once with read_document and content_base64."),
            );
        }
        // A job is held to the job deadline, not the MCP one, unless the call gives its own.
        let req = match self.read_request(args, false) {
            Ok(r) => r,
            Err(e) => return tool_error(e),
        };
        if req.file_ids.is_some() {
            return tool_error(
                ApiError::invalid_option("start_read reads one file: give file_id, not file_ids")
                    .with_hint("Call start_read once per file."),
            );
        }
        if let Err(e) = crate::read::check_values(&req, self.st.reader.limits.max_chars) {
            return tool_error(e);
        }
        if let Some(id) = &req.file_id {
            if let Err(e) = self.st.files.get(tenant, id).await {
                return tool_error(e);
            }
        }
        match self.st.jobs.submit(tenant, &req).await {
            Ok(job) => {
                let text = format!(
                    "Started read job {id} ({state}). Call read_result with job_id \"{id}\" to get its text; it can wait up to {MAX_RESULT_WAIT_SECONDS} seconds for the read to end.",
                    id = job.job_id,
                    state = job.state
                );
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = serde_json::to_value(&job).ok();
                r
            }
            Err(e) => tool_error(e),
        }
    }

    /// A job's state, waiting up to `wait_seconds` for it to end; once done, its text
    /// under read_document's header.
    async fn read_result(&self, tenant: &str, args: JsonObject) -> CallToolResult {
        let Some(id) = args.get("job_id").and_then(Value::as_str) else {
            return tool_error(ApiError::invalid_option("job_id is required"));
        };
        let wait = match args.get("wait_seconds") {
            None => 20,
            Some(v) => match v.as_u64().filter(|&w| w <= MAX_RESULT_WAIT_SECONDS) {
                Some(w) => w,
                None => {
                    return tool_error(ApiError::invalid_option(format!(
                        "wait_seconds must be 0 to {MAX_RESULT_WAIT_SECONDS}"
                    )))
                }
            },
        };
        let until = tokio::time::Instant::now() + std::time::Duration::from_secs(wait);
        let job = loop {
            let job = match self.st.jobs.get(tenant, id).await {
                Ok(j) => j,
                Err(e) => return tool_error(e),
            };
            if job.state.ended() || tokio::time::Instant::now() >= until {
                break job;
            }
            tokio::time::sleep_until(
                until.min(tokio::time::Instant::now() + std::time::Duration::from_millis(250)),
            )
            .await;
        };
        let structured = serde_json::to_value(&job).ok();
        use crate::jobs::JobState;
        let text = match job.state {
            JobState::Done => {
                let env = job.envelope.as_ref().and_then(|raw| {
                    serde_json::from_str::<crate::envelope::Envelope>(raw.get()).ok()
                });
                match env {
                    Some(env) => format!("{}\n{}", header(&env), env.text),
                    None => {
                        return tool_error(ApiError::internal(format!(
                            "job {id} is done but its result cannot be read"
                        )))
                    }
                }
            }
            JobState::Failed | JobState::Cancelled => {
                // A job's error is an error body's `error`: code, message, hint.
                let (code, message, hint) = match &job.error {
                    Some(e) => (
                        e.code.as_str().to_string(),
                        e.message.clone(),
                        e.hint.clone(),
                    ),
                    None => (
                        job.state.to_string(),
                        format!("the read was {}", job.state),
                        String::new(),
                    ),
                };
                let mut text = format!("error {code}: {message}");
                if !hint.is_empty() {
                    text.push_str(&format!("\nWhat to do: {}", mcp_words(&hint)));
                }
                let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
                r.structured_content = structured;
                return r;
            }
            state => {
                let progress = match &job.progress {
                    Some(p) => format!(": {} of {} pages ({})", p.done, p.total, p.stage),
                    None => String::new(),
                };
                format!(
                    "Read job {id} is {state}{progress}. Call read_result with job_id \"{id}\" again to wait for it."
                )
            }
        };
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        r.structured_content = structured;
        r
    }

    async fn list_documents(&self, tenant: &str, args: JsonObject) -> CallToolResult {
        let num = |k: &str, d: i64| args.get(k).and_then(Value::as_i64).unwrap_or(d);
        let (limit, offset) = (num("limit", 100), num("offset", 0));
        if !(1..=1000).contains(&limit) || offset < 0 {
            return tool_error(ApiError::invalid_option(
                "limit must be 1..1000 and offset ≥ 0",
            ));
        }
        match crate::db::list(&self.st.db, tenant, limit, offset).await {
            Ok(files) => {
                let lines: Vec<String> = files
                    .iter()
                    .map(|f| {
                        format!(
                            "{}\t{}\t{}\t{} bytes\t{}",
                            f.file_id, f.name, f.format, f.size, f.created_at
                        )
                    })
                    .collect();
                let text = if lines.is_empty() {
                    "No documents uploaded yet.".to_string()
                } else {
                    format!(
                        "file_id\tname\tformat\tsize\tuploaded\n{}",
                        lines.join("\n")
                    )
                };
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(json!({"files": files}));
                r
            }
            Err(e) => tool_error(ApiError::internal(e)),
        }
    }

    async fn upload_document(
        &self,
        tenant: &str,
        headers: &axum::http::HeaderMap,
        args: JsonObject,
    ) -> CallToolResult {
        let Some(name) = args.get("name").and_then(Value::as_str) else {
            return tool_error(ApiError::invalid_option("name is required"));
        };
        let Some(content) = args.get("content_base64").and_then(Value::as_str) else {
            if self.stdio {
                return tool_error(
                    ApiError::invalid_option(
                        "upload URLs need docreader's HTTP server; this connection is local (stdio)",
                    )
                    .with_hint("Read the file where it lies with read_document and `path`, or give content_base64."),
                );
            }
            // No bytes through the model: a URL the host sends them to.
            return match super::upload_url::issue(&self.st, tenant, name, None, headers).await {
                Ok(u) => {
                    let text = format!(
                        "Send the file's bytes to this URL with HTTP PUT (no API key; once; until {}): {}\nFor example: curl -T {name} '{}'\nThe answer is JSON with files[0].file_id: read it with read_document.",
                        u.expires_at, u.upload_url, u.upload_url
                    );
                    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                    r.structured_content = serde_json::to_value(&u).ok();
                    r
                }
                Err(e) => tool_error(e),
            };
        };
        let bytes = match decode_content(name, content) {
            Ok(b) => b,
            Err(e) => return tool_error(e),
        };
        match self.st.files.store_bytes(tenant, name, &bytes).await {
            Ok((file, _)) => {
                let text = format!(
                    "Stored {} as file_id {} ({}, {} bytes). Read it with read_document.",
                    file.name, file.file_id, file.format, file.size
                );
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(json!({"file": file}));
                r
            }
            Err(e) => tool_error(e),
        }
    }

    async fn search_documents(&self, tenant: &str, args: JsonObject) -> CallToolResult {
        let req: crate::search::SearchRequest = match serde_json::from_value(Value::Object(args)) {
            Ok(r) => r,
            Err(e) => {
                return tool_error(
                    ApiError::invalid_option(format!("bad search: {e}"))
                        .with_hint("Give {\"query\": \"words\"}, optionally file_ids and limit."),
                )
            }
        };
        match super::search::run(&self.st, tenant, &req).await {
            Ok(hits) => {
                let lines: Vec<String> = hits
                    .iter()
                    .map(|h| {
                        let p = &h.place;
                        let place = match (&p.page, &p.slide, &p.sheet, &p.chapter) {
                            (Some(p), ..) => format!("page {p}"),
                            (_, Some(s), ..) => format!("slide {s}"),
                            (_, _, Some(s), _) => format!("sheet {s:?}"),
                            (.., Some(c)) => format!("chapter {c}"),
                            _ => "text".into(),
                        };
                        // A file only partly indexed is said so: words in what was not
                        // read are not found until index_document reads it whole.
                        let partly = match (&h.coverage.whole, h.coverage.total_units) {
                            (true, _) => String::new(),
                            (false, Some(t)) => format!(
                                " [indexed {} of {t} parts; index_document searches all of it]",
                                h.coverage.indexed_units
                            ),
                            (false, None) => {
                                " [partly indexed; index_document searches all of it]".into()
                            }
                        };
                        format!(
                            "{} ({}) {place}, line {}: {}{partly}",
                            h.file_id, h.name, h.line, h.snippet
                        )
                    })
                    .collect();
                let text = if lines.is_empty() {
                    "No matches. Documents are searchable once read (or named in file_ids)."
                        .to_string()
                } else {
                    lines.join("\n")
                };
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(json!({"hits": hits}));
                r
            }
            Err(e) => tool_error(e),
        }
    }

    async fn document_info(&self, tenant: &str, args: JsonObject) -> CallToolResult {
        let Some(id) = args.get("file_id").and_then(Value::as_str) else {
            return tool_error(ApiError::invalid_option("file_id is required"));
        };
        let file = match self.st.files.get(tenant, id).await {
            Ok(f) => f,
            Err(e) => return tool_error(e),
        };
        // The structure comes from a read that keeps one character (no OCR: what a file
        // holds, not its scanned text).
        let probe = ReadRequest {
            file_id: Some(id.to_string()),
            max_chars: Some(1),
            ocr: matches!(file.format.as_str(), "pdf" | "image")
                .then_some(crate::options::Ocr::None),
            ..Default::default()
        };
        let mut info = json!({"file": file});
        if let Ok(p) = self.st.reader.prepare(tenant, probe).await {
            if let Ok(env) = self.st.reader.run(p, ProgressSink::default()).await {
                info["structure"] = serde_json::to_value(Structure::of(env)).unwrap_or_default();
            }
        }
        // The outline: the document read whole as its model (no OCR: OCR'd text makes no
        // headings). Sheets and images have none.
        if !matches!(file.format.as_str(), "image" | "excel") {
            let whole = ReadRequest {
                file_id: Some(id.to_string()),
                ocr: (file.format == "pdf").then_some(crate::options::Ocr::None),
                ..Default::default()
            };
            let outline = match self.st.reader.prepare(tenant, whole).await {
                Ok(p) => self.st.reader.outline(p).await,
                Err(e) => Err(e),
            };
            match outline {
                Ok((entries, cut)) => {
                    info["outline"] = serde_json::to_value(entries).unwrap_or_default();
                    if let Some(why) = cut {
                        info["outline_note"] =
                            json!(format!("the outline of the part that could be read: {why}"));
                    }
                }
                Err(e) => info["outline_note"] = json!(format!("no outline: {}", e.message)),
            }
        }
        // The OCR a read would use on what has no text layer (scans, images): named, not
        // guessed from a probe that ran none.
        if matches!(file.format.as_str(), "pdf" | "image") {
            let engine = crate::ocr::local_engine().map(|e| e.name()).or_else(|| {
                (!crate::ocr::tesseract::installed_data().is_empty()).then_some("tesseract")
            });
            info["ocr"] = match engine {
                Some(name) => json!({
                    "engine": name,
                    "runs_on": "pages without a usable text layer (scans) and images, when read with ocr \"auto\" (the default)"
                }),
                None => json!({
                    "engine": null,
                    "runs_on": "nothing: no OCR engine is installed, so scanned pages and images cannot be read"
                }),
            };
        }
        let text = serde_json::to_string_pretty(&info).unwrap_or_default();
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        r.structured_content = Some(info);
        r
    }

    async fn delete_document(&self, tenant: &str, args: JsonObject) -> CallToolResult {
        let Some(id) = args.get("file_id").and_then(Value::as_str) else {
            return tool_error(ApiError::invalid_option("file_id is required"));
        };
        match self.st.files.forget(tenant, id).await {
            Ok(true) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
                    "Deleted {id}: it no longer reads, lists or shows in search."
                ))]);
                r.structured_content = Some(json!({"status": "ok", "deleted": id}));
                r
            }
            Ok(false) => tool_error(ApiError::not_found()),
            Err(e) => tool_error(e),
        }
    }

    async fn index_document(&self, tenant: &str, args: JsonObject) -> CallToolResult {
        let Some(id) = args.get("file_id").and_then(Value::as_str) else {
            return tool_error(ApiError::invalid_option("file_id is required"));
        };
        match super::search::index_whole(&self.st, tenant, id).await {
            Ok((reads, chars)) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
                    "Indexed {id} whole: {chars} characters in {reads} read{}. search_documents now finds words anywhere in it.",
                    if reads == 1 { "" } else { "s" }
                ))]);
                r.structured_content =
                    Some(json!({"status": "ok", "file_id": id, "reads": reads, "chars": chars}));
                r
            }
            Err(e) => tool_error(e),
        }
    }

    async fn render_page(&self, tenant: &str, args: JsonObject) -> CallToolResult {
        let Some(id) = args.get("file_id").and_then(Value::as_str) else {
            return tool_error(ApiError::invalid_option("file_id is required"));
        };
        let page = args.get("page").and_then(Value::as_u64).unwrap_or(1);
        let width = args.get("width").and_then(Value::as_u64).unwrap_or(1000);
        if !(100..=RENDER_MAX_WIDTH).contains(&width) {
            return tool_error(ApiError::invalid_option(format!(
                "width must be 100 to {RENDER_MAX_WIDTH} pixels"
            )));
        }
        let req = PageImageRequest {
            page,
            format: PictureFormat::Png,
            dpi: None,
            width: Some(width as u32),
            password: args
                .get("password")
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        match self.st.reader.draw(tenant, id, req, None).await {
            Ok(Drawn::Picture { picture, .. }) => {
                use base64::Engine;
                let data = base64::engine::general_purpose::STANDARD.encode(&picture.bytes);
                let caption = format!(
                    "file {id}, page {page}: {}×{} PNG",
                    picture.width, picture.height
                );
                CallToolResult::success(vec![
                    ContentBlock::text(caption),
                    ContentBlock::image(data, picture.format.mime()),
                ])
            }
            Ok(Drawn::NotModified { .. }) => tool_error(ApiError::internal(
                "a page drawn without a copy held came back unchanged",
            )),
            Err(e) => tool_error(e),
        }
    }
}

impl ServerHandler for Docreader {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("docreader", env!("CARGO_PKG_VERSION")))
            .with_instructions(if self.stdio {
                format!("{INSTRUCTIONS} Over this local connection, read_document also reads a local file by `path` (under the folders docreader was started with).")
            } else {
                INSTRUCTIONS.to_string()
            })
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, rmcp::ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, rmcp::ErrorData> {
        // The HTTP request the call came in: its tenant (set by `authenticate`) and headers.
        // Over stdio, the local user: the tenant of a server without keys.
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let tenant = match parts.and_then(|p| p.extensions.get::<Tenant>()) {
            Some(t) => Some(t.0.clone()),
            None if self.stdio => Some(super::auth::LOCAL_TENANT.to_string()),
            None => None,
        };
        let Some(tenant) = tenant else {
            return Err(rmcp::ErrorData::internal_error(
                "no tenant on the request",
                None,
            ));
        };
        let headers = parts.map(|p| p.headers.clone()).unwrap_or_default();
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "read_document" => {
                let (progress, forwarding) = progress_sink(&context);
                let answer = self.read_document(&tenant, args, progress).await;
                // Every notification out before the answer: a client forgets a call's
                // progress token once it has its result.
                if let Some(f) = forwarding {
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), f).await;
                }
                answer
            }
            "list_documents" => self.list_documents(&tenant, args).await,
            "document_info" => self.document_info(&tenant, args).await,
            "search_documents" => self.search_documents(&tenant, args).await,
            "upload_document" => self.upload_document(&tenant, &headers, args).await,
            "render_page" => self.render_page(&tenant, args).await,
            "delete_document" => self.delete_document(&tenant, args).await,
            "index_document" => self.index_document(&tenant, args).await,
            "start_read" => self.start_read(&tenant, args).await,
            "read_result" => self.read_result(&tenant, args).await,
            other => {
                return Err(rmcp::ErrorData::invalid_params(
                    format!(
                        "no tool named {other:?}: the tools are {}",
                        TOOL_NAMES.join(", ")
                    ),
                    None,
                ))
            }
        };
        Ok(result.into())
    }
}

/// What `document_info` says of a file's structure: what the one-character probe read
/// measured of the whole file (pages, slides, chapters, sheets and their sizes, metadata),
/// not what the probe happened to read (no text, no `pages_read`, no OCR of a probe that
/// ran none: a scan is no file without text, its sheets not "not read").
#[derive(serde::Serialize)]
struct Structure {
    format: crate::detect::Family,
    mime: String,
    #[serde(flatten)]
    report: crate::report::Report,
    /// Each sheet's name, size, visibility and kind (`chart`).
    #[serde(skip_serializing_if = "Option::is_none")]
    sheets: Option<Vec<SheetShape>>,
}

#[derive(serde::Serialize)]
struct SheetShape {
    name: String,
    rows: u64,
    cols: u64,
    hidden: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
}

impl Structure {
    fn of(env: crate::envelope::Envelope) -> Self {
        let mut report = env.report;
        let sheets = report.sheets.take().map(|v| {
            v.into_iter()
                .map(|s| SheetShape {
                    name: s.name,
                    rows: s.rows,
                    cols: s.cols,
                    hidden: s.hidden,
                    kind: s.kind,
                })
                .collect()
        });
        // What the probe read, not what the file holds.
        report.pages_read = None;
        report.page_range_read = None;
        report.ocr_pages = None;
        report.ocr_engine = None;
        report.skipped_pages = None;
        report.pages_ocr = None;
        report.ocr_quality = None;
        report.ocr_pages_from_memory = None;
        report.boxes = None;
        report.slides = None;
        report.slide_range_read = None;
        report.chapter_range_read = None;
        report.byte_range = None;
        report.note = None;
        report.partial = None;
        Self {
            format: env.format,
            mime: env.mime,
            report,
            sheets,
        }
    }
}

/// Progress of a read as MCP progress notifications, when the call asked for them (a
/// `progressToken` in its `_meta`): pages done of pages selected, and the stage, in order,
/// each only when it goes further; the forwarding ends when the read drops its sink. Over
/// stdio they reach the host as the read runs (tested); over HTTP rmcp sends them too.
fn progress_sink(
    context: &RequestContext<RoleServer>,
) -> (ProgressSink, Option<tokio::task::JoinHandle<()>>) {
    let Some(token) = context.meta.get_progress_token() else {
        return (ProgressSink::default(), None);
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<crate::extract::Progress>();
    let peer = context.peer.clone();
    let forwarding = tokio::spawn(async move {
        let mut sent: Option<f64> = None;
        while let Some(p) = rx.recv().await {
            // Monotonic, as the protocol asks: stages that count pages again send nothing
            // until they pass what was said.
            let done = p.done as f64;
            if sent.is_some_and(|s| done <= s) {
                continue;
            }
            sent = Some(done);
            let mut n = rmcp::model::ProgressNotificationParam::new(token.clone(), done);
            n.total = Some(p.total as f64);
            n.message = Some(format!("{} of {} pages ({})", p.done, p.total, p.stage));
            if peer.notify_progress(n).await.is_err() {
                break;
            }
        }
    });
    let sink = ProgressSink::new(move |p| {
        let _ = tx.send(p);
    });
    (sink, Some(forwarding))
}

/// Every tool, as the instructions and an unknown tool's error name them.
const TOOL_NAMES: [&str; 10] = [
    "read_document",
    "start_read",
    "read_result",
    "list_documents",
    "document_info",
    "search_documents",
    "upload_document",
    "render_page",
    "delete_document",
    "index_document",
];

const INSTRUCTIONS: &str = "docreader reads documents of any format (PDF with OCR for scans, Word, PowerPoint, Excel, OpenDocument, EPUB, e-mail, images, text in any encoding). \
Tools: list_documents (what is uploaded), upload_document (store a file the user gave you), document_info (a file's structure: pages, sheets, chapters, outline; plan what to read), \
read_document (the text, a part at a time: follow the `next` it gives until the answer says complete), start_read and read_result (the same read as a job, for long OCR reads that outlast a tool call), search_documents (words across the documents read so far), \
index_document (make a whole document searchable), render_page (a page as a picture), delete_document (remove a document).";

impl Docreader {
    fn tools(&self) -> Vec<Tool> {
        tools(self.stdio, !self.st.reader.fetch.hosts.is_empty())
    }
}

/// MCP over stdio for a local agent host (`docreader mcp`): the same tools on the same
/// state as `/mcp`, for the one local user, with `path` reads under the allowed roots.
/// Ends when the host closes stdin.
pub async fn serve_stdio(st: AppState) -> Result<(), String> {
    use rmcp::ServiceExt;
    let handler = Docreader { st, stdio: true };
    let running = handler
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
        .map_err(|e| format!("MCP over stdio could not start: {e}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("MCP over stdio stopped: {e}"))
}

/// The API key decides the tenant here, as on every endpoint; the tools find it in the
/// request's extensions.
async fn authenticate(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    let host = parts
        .headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string);
    match Tenant::from_request_parts(&mut parts, &st).await {
        Ok(t) => {
            parts.extensions.insert(t);
            let answer = next.run(Request::from_parts(parts, body)).await;
            refused_host(answer, host.as_deref())
        }
        Err(e) => e.into_response(),
    }
}

/// rmcp refuses a `Host` it was not told of (DNS rebinding) with a plain-text 403; said
/// here as every other refusal is, in JSON, naming the setting that lets the name in.
fn refused_host(answer: Response, host: Option<&str>) -> Response {
    let plain = answer.status() == axum::http::StatusCode::FORBIDDEN
        && !answer
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("json"));
    if !plain {
        return answer;
    }
    ApiError::new(
        ErrorCode::Forbidden,
        format!(
            "/mcp does not answer requests for the host {:?}",
            host.unwrap_or("")
        ),
    )
    .with_hint(
        "List the name clients use (a gateway's public name, with its port if not 80/443) in \
         DOCREADER_MCP_ALLOWED_HOSTS (comma-separated; `*` for any), or reach the service as \
         localhost.",
    )
    .into_response()
}

/// `/mcp`, for `hosts` as `Host` headers (a gateway's public name; `*` for any; empty:
/// loopback only, rmcp's default).
pub fn router(st: AppState, hosts: &[String]) -> Router<AppState> {
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(super::guard::MAX_MCP_BODY as usize);
    if hosts.iter().any(|h| h == "*") {
        config = config.disable_allowed_hosts();
    } else if !hosts.is_empty() {
        config = config.with_allowed_hosts(hosts.iter().cloned());
    }
    let handler = Docreader {
        st: st.clone(),
        stdio: false,
    };
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(st, authenticate))
}

#[cfg(test)]
mod schema_tests {
    /// Output schemas stand alone and accept what overlaps: no `oneOf` (an empty `boxes`
    /// array is both of `Boxes`' shapes), no reference outside `$defs`.
    #[test]
    fn output_schemas_stand_alone() {
        for t in super::tools(false, true) {
            let Some(o) = &t.output_schema else {
                assert_eq!(t.name, "render_page");
                continue;
            };
            let text = serde_json::to_string(o.as_ref()).unwrap();
            assert!(!text.contains("\"oneOf\""), "{}: {text}", t.name);
            assert!(!text.contains("#/components/"), "{}", t.name);
            for name in super::refs_in(&serde_json::Value::Object(o.as_ref().clone())) {
                assert!(o["$defs"].get(&name).is_some(), "{}: {name}", t.name);
            }
        }
    }

    #[test]
    fn read_schema_is_short() {
        // The longest: with `url` (a server that fetches) and `path` (stdio, which has no
        // one-shot form).
        let v = super::read_schema(true, true, false);
        // Counted as the SDK test counts it (Python's `json.dumps`: `, ` and `: ` between
        // items, a character outside ASCII as `\uXXXX`).
        fn dumped(v: &serde_json::Value) -> usize {
            use serde_json::Value;
            let string = |s: &str| {
                2 + s
                    .chars()
                    .map(|c| match c {
                        '"' | '\\' | '\n' | '\t' | '\r' => 2,
                        c if c.is_ascii() => 1,
                        c => 6 * c.len_utf16(),
                    })
                    .sum::<usize>()
            };
            match v {
                Value::Object(o) => {
                    2 + o
                        .iter()
                        .map(|(k, x)| string(k) + 2 + dumped(x))
                        .sum::<usize>()
                        + 2 * o.len().saturating_sub(1)
                }
                Value::Array(a) => {
                    2 + a.iter().map(dumped).sum::<usize>() + 2 * a.len().saturating_sub(1)
                }
                Value::String(s) => string(s),
                x => x.to_string().len(),
            }
        }
        let total = dumped(&v);
        let mut parts: Vec<(String, usize)> = Vec::new();
        for (k, p) in v.as_object().unwrap() {
            parts.push((k.clone(), p.to_string().len()));
        }
        if let Some(props) = v["properties"].as_object() {
            for (k, p) in props {
                parts.push((format!("properties.{k}"), p.to_string().len()));
            }
        }
        if let Some(defs) = v["$defs"].as_object() {
            for (k, p) in defs {
                parts.push((format!("$defs.{k}"), p.to_string().len()));
            }
        }
        parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        assert!(total < 6000, "{total}: {parts:?}");
        // Over HTTP, with `url` and the one-shot form's three properties.
        let http = dumped(&super::read_schema(false, true, true));
        assert!(http < 6000, "{http}");
    }
}

//! The HTTP service: `AppState`, `app(state) -> Router`, and the OpenAPI description.
//! Each endpoint family lives in its own module with its own `router()`.

mod answers;
pub mod auth;
pub mod console;
pub mod error;
pub mod files;
pub mod framing;
pub mod guard;
pub mod health;
pub mod jobs;
pub mod mcp;
pub mod metrics;
pub mod pages;
pub mod read;
pub mod request_id;
pub mod responses;
pub mod search;
pub mod serve;
pub mod upload_url;

use std::path::PathBuf;
use std::sync::Arc;

use axum::http::{header, HeaderName, Method};
use axum::Router;
use tower_http::cors::{AllowOrigin, CorsLayer};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_swagger_ui::SwaggerUi;

use crate::config::{Limits, ServeArgs};
use crate::error::{ApiError, ErrorCode};
use crate::files::Files;
use crate::metrics::Metrics;
use crate::read::{Executor, ReadService, Storage};
use crate::worker::{Pool, PoolConfig};

/// Everything a handler needs, cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub db: crate::db::Db,
    /// The tenants' files (uploads, lookups, deletes).
    pub files: Files,
    pub data_dir: PathBuf,
    pub limits: Limits,
    /// `Some` when API keys are configured: key → tenant (reloaded on SIGHUP from a file).
    pub api_keys: Option<Arc<auth::Keys>>,
    pub cors_origins: Vec<String>,
    /// Whether `/metrics` is served without a key when keys are configured.
    pub metrics_public: bool,
    /// The longest pause between chunks of an upload's body.
    pub body_timeout: std::time::Duration,
    /// The one way a read runs.
    pub reader: Arc<ReadService>,
    /// `Host` headers `/mcp` answers (`*`: any; empty: loopback only).
    pub mcp_hosts: Vec<String>,
    /// `deadline_ms` of an MCP read that gives none (0: the server's default).
    pub mcp_deadline_ms: u64,
    /// The address clients reach the service at, for upload URLs (else from the request).
    pub public_url: Option<String>,
    /// Without API keys: `Host` names answered besides loopback ones (`*`: any).
    pub allowed_hosts: Vec<String>,
    /// Gateways whose `X-Forwarded-*` headers are believed.
    pub trusted_proxies: Vec<(std::net::IpAddr, u8)>,
    pub metrics: Arc<Metrics>,
    /// Read jobs (`"async": true`), shared by the replicas through the database.
    pub jobs: Arc<crate::jobs::Jobs>,
}

impl AppState {
    /// Open the database (applying migrations) and the upload directory.
    pub async fn new(args: &ServeArgs) -> Result<Self, String> {
        let db = crate::db::open(&args.data_dir, args.database_url.as_deref()).await?;
        let derived = crate::search::open(&args.data_dir, &db).await?;
        let remote = match &args.blob_store {
            Some(url) => Some(crate::store::Remote::connect(url).await?),
            None => None,
        };
        let shared_blobs = remote.is_some();
        let store = crate::store::Store::open_with(&args.data_dir, remote)
            .map_err(|e| format!("cannot use the data dir {}: {e}", args.data_dir.display()))?;
        let api_keys = match args.api_key_spec()? {
            Some(spec) => Some(Arc::new(auth::Keys::new(
                auth::parse_keys(&spec)?,
                args.api_keys_file(),
            ))),
            None => None,
        };
        let mut roots = Vec::new();
        for r in args
            .allowed_roots
            .iter()
            .flat_map(|s| s.split(':'))
            .filter(|s| !s.is_empty())
        {
            let c = std::fs::canonicalize(r).map_err(|e| format!("allowed root {r}: {e}"))?;
            roots.push(c);
        }
        let cors_origins = cors_origins(args.cors_origins.as_deref())?;
        let store = Arc::new(store);
        crate::files::recover_unsynced(&db, &store).await?;
        if shared_blobs {
            // This replica's cache of the shared blobs keeps what was used in the last hour.
            let cache = store.clone();
            tokio::spawn(async move {
                let hour = std::time::Duration::from_secs(3600);
                loop {
                    tokio::time::sleep(std::time::Duration::from_secs(600)).await;
                    let c = cache.clone();
                    let _ = tokio::task::spawn_blocking(move || c.sweep_cache(hour)).await;
                }
            });
        }
        let metrics = Arc::new(Metrics::default());
        let files = Files {
            db: db.clone(),
            store: store.clone(),
            limits: args.limits.clone(),
            indexing: Arc::new(crate::search::Pending::new(
                derived,
                crate::search::IndexPolicy {
                    max_bytes: args.index_max_mb.saturating_mul(1024 * 1024) as usize,
                    reads: Some(metrics.clone()),
                },
            )),
            rows: crate::files::RowQueue::new(
                db.clone(),
                store.clone(),
                std::time::Duration::from_millis(args.blob_sync_delay_ms),
            ),
            recent: (!db.is_shared()).then(Default::default),
            memory_keys: match db.is_shared() {
                true => None,
                false => Some(Arc::new(
                    crate::files::MemoryKeys::load(&db)
                        .await
                        .map_err(|e| format!("cannot read the document memory: {e}"))?,
                )),
            },
        };
        let max_reads = args.limits.max_concurrent_reads;
        // Fairness caps matter only where there is someone else to be fair to.
        // (Counted at start: tenants added by a SIGHUP reload share these caps.)
        let tenants = api_keys.as_ref().map(|k| k.tenants()).unwrap_or(1);
        let lanes = match args.workers {
            0 => max_reads,
            n => n.min(max_reads),
        }
        .max(1);
        let per_tenant = match (args.limits.max_reads_per_tenant, tenants) {
            (0, 0 | 1) => usize::MAX,
            (0, _) => lanes.saturating_sub((lanes / 4).max(1)).max(1),
            (n, _) => n,
        };
        let jobs_per_tenant = match (args.max_jobs_per_tenant, tenants) {
            (0, 0 | 1) => i64::MAX,
            (0, _) => args.job_runners.saturating_sub(1).max(1) as i64,
            (n, _) => n as i64,
        };
        let executor = match args.workers {
            0 => Executor::in_process(max_reads, per_tenant),
            n => {
                let bin = match &args.worker_bin {
                    Some(b) => b.clone(),
                    None => std::env::current_exe()
                        .map_err(|e| format!("cannot find this executable for workers: {e}"))?,
                };
                let pool = Pool::new(PoolConfig {
                    bin,
                    spool: args.data_dir.join("tmp"),
                    workers: n,
                    memory_bytes: args.worker_memory_mb * 1024 * 1024,
                    log_format: args.log_format.clone(),
                    logs_to_stdout: !args.stdout_is_protocol,
                    test_hooks: args.worker_test_hooks,
                });
                Executor::with_workers(pool, max_reads, per_tenant)
            }
        };
        let reader = ReadService {
            executor,
            limits: args.limits.clone(),
            storage: Some(Storage {
                files: files.clone(),
                store_attachments: !args.no_store_attachments,
                index_reads: args.index_reads,
            }),
            allowed_roots: roots,
            fetch: crate::fetch::FetchPolicy::parse(
                args.url_allowlist.as_deref(),
                args.url_allow_addresses.as_deref(),
                args.url_timeout_ms,
            )?,
            metrics: metrics.clone(),
        };
        let reader = Arc::new(reader);
        let callbacks = Arc::new(crate::callbacks::Callbacks::new(
            db.clone(),
            crate::fetch::FetchPolicy::for_callbacks(
                args.callback_allowlist.as_deref(),
                args.url_allow_addresses.as_deref(),
                crate::callbacks::ATTEMPT_TIMEOUT_MS,
            )?,
            std::time::Duration::from_millis(args.callback_retry_ms),
        ));
        callbacks.start();
        Ok(Self {
            db: db.clone(),
            files,
            data_dir: args.data_dir.clone(),
            limits: args.limits.clone(),
            api_keys,
            cors_origins,
            metrics_public: args.metrics_public,
            body_timeout: std::time::Duration::from_millis(args.body_timeout_ms.max(1)),
            jobs: {
                let jobs = Arc::new(
                    crate::jobs::Jobs::new(
                        db.clone(),
                        store.clone(),
                        reader.clone(),
                        std::time::Duration::from_secs(args.job_ttl_hours.max(1) * 3600),
                        args.job_runners,
                        args.job_deadline_ms,
                        jobs_per_tenant,
                        callbacks,
                    )
                    .with_result_budget(args.max_job_result_bytes),
                );
                jobs.start();
                jobs
            },
            reader,
            metrics,
            public_url: args
                .public_url
                .as_deref()
                .map(|u| u.trim_end_matches('/').to_string())
                .filter(|u| !u.is_empty()),
            allowed_hosts: args
                .allowed_hosts
                .iter()
                .flat_map(|s| s.split(','))
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
                .collect(),
            trusted_proxies: args.trusted_proxy_ranges()?,
            mcp_deadline_ms: args.mcp_deadline_ms,
            mcp_hosts: args
                .mcp_allowed_hosts
                .iter()
                .flat_map(|s| s.split(','))
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
                .collect(),
        })
    }
}

/// `--cors-origins` checked at start: `*` (any origin), or origins as a browser sends them
/// (`https://app.example`, `http://localhost:3000`; a trailing `/` is dropped), each refused
/// at start when it is not one — never a panic at the first request.
fn cors_origins(spec: Option<&str>) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for o in spec
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let o = o.trim_end_matches('/');
        if o == "*" {
            out.push(o.to_string());
            continue;
        }
        let ok = url::Url::parse(o).ok().is_some_and(|u| {
            matches!(u.scheme(), "http" | "https")
                && u.host_str().is_some()
                && u.path() == "/"
                && u.query().is_none()
                && u.fragment().is_none()
                && u.username().is_empty()
        }) && o.parse::<axum::http::HeaderValue>().is_ok();
        if !ok {
            return Err(format!(
                "DOCREADER_CORS_ORIGINS: {o:?} is not an origin such as https://app.example or http://localhost:3000 (or * for any)"
            ));
        }
        out.push(o.to_ascii_lowercase());
    }
    Ok(out)
}

/// The whole service as a router: what `serve` runs and tests drive.
pub fn app(state: AppState) -> Router {
    let mut router = Router::new()
        .merge(health::router())
        .merge(metrics::router())
        .merge(files::router(state.limits.max_request_bytes))
        .merge(read::router(state.limits.max_request_bytes))
        .merge(jobs::router())
        .merge(pages::router())
        .merge(search::router())
        .merge(upload_url::router(state.limits.max_file_bytes))
        .merge(mcp::router(state.clone(), &state.mcp_hosts))
        .merge(console::router())
        .merge(SwaggerUi::new("/docs").config(utoipa_swagger_ui::Config::from("/openapi.json")))
        .route("/openapi.json", axum::routing::get(openapi_document))
        .fallback(|| async {
            ApiError::new(ErrorCode::NotFound, "no such endpoint")
                .with_hint("See /docs for the endpoints.")
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                ErrorCode::MethodNotAllowed,
                "method not allowed on this endpoint",
            )
        });
    if !state.cors_origins.is_empty() {
        let allow = if state.cors_origins.iter().any(|o| o == "*") {
            AllowOrigin::any()
        } else {
            AllowOrigin::list(state.cors_origins.iter().filter_map(|o| o.parse().ok()))
        };
        // What the documented browser flows need: PUT to an upload URL, a page image's
        // password, `Prefer: respond-async`; and the answers' headers they read.
        router = router.layer(
            CorsLayer::new()
                .allow_origin(allow)
                .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE])
                .allow_headers([
                    header::AUTHORIZATION,
                    header::CONTENT_TYPE,
                    header::IF_NONE_MATCH,
                    HeaderName::from_static("x-request-id"),
                    HeaderName::from_static("last-event-id"),
                    HeaderName::from_static("x-document-password"),
                    HeaderName::from_static("prefer"),
                ])
                .expose_headers([
                    HeaderName::from_static("x-request-id"),
                    header::LOCATION,
                    header::RETRY_AFTER,
                    header::ETAG,
                ]),
        );
    }
    router
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::bodies,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::keyless,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::forwarded,
        ))
        .layer(axum::middleware::from_fn(security_headers))
        .layer(axum::middleware::from_fn(catch_panic))
        // Layers of a router run after routing: the route is known to every one of them.
        .layer(axum::middleware::from_fn(metrics::note_route))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            metrics::count,
        ))
        .layer(axum::middleware::from_fn(request_id::layer))
        .with_state(state)
}

/// A handler that panics answers 500 `internal` with the request id (the panic's message
/// goes to the log under that id), never a dropped connection. Inside the request-id
/// layer, so the id is known; the future is polled under `catch_unwind` step by step.
async fn catch_panic(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    use std::future::Future;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let mut run = Box::pin(next.run(req));
    let caught = std::future::poll_fn(move |cx| {
        match catch_unwind(AssertUnwindSafe(|| run.as_mut().poll(cx))) {
            Ok(std::task::Poll::Ready(r)) => std::task::Poll::Ready(Ok(r)),
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Err(panic) => std::task::Poll::Ready(Err(panic)),
        }
    })
    .await;
    match caught {
        Ok(resp) => resp,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            ApiError::internal(format!("a handler panicked: {what}")).into_response()
        }
    }
}

/// Headers every response carries: no content sniffing, and a Content-Security-Policy —
/// for `/docs` one that lets its own scripts and styles run and nothing else, for the API's
/// JSON none at all.
async fn security_headers(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::HeaderValue;
    let docs = req.uri().path().starts_with("/docs");
    let console = console::is_console(req.uri().path());
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(if console {
            // The console: its own script and style only (no inline code), page images as
            // blob: URLs made from fetched bytes, calls to this service alone.
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        } else if docs {
            "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        } else {
            "default-src 'none'; frame-ancestors 'none'"
        }),
    );
    resp
}

#[derive(OpenApi)]
#[openapi(
    info(title = "docreader", description = "Reads any document and hands back its text in one JSON envelope. Upload with POST /upload, then POST /read. Every error is {\"status\":\"error\",\"error\":{\"code\",\"message\",\"hint\"}} with a stable code (see the ErrorCode schema)."),
    paths(files::upload, upload_url::create, upload_url::receive, upload_url::receive_post, files::list, files::show, files::remove, pages::page, read::read, jobs::show, jobs::cancel, jobs::events, jobs::callback_secret, search::search, search::index, health::healthz, health::readyz, metrics::metrics),
    components(schemas(crate::error::ErrorCode, crate::error::ErrorBody, crate::error::ErrorDetail,
        crate::envelope::Envelope, crate::options::ReadRequest, crate::db::FileRecord, crate::detect::Family, crate::extract::page_image::PictureFormat,
        files::UploadResponse, upload_url::UploadUrlRequest, upload_url::UploadUrl, crate::search::SearchRequest, crate::search::SearchResults, search::Indexed, files::FileList, files::FileInfo, files::Deleted, crate::jobs::JobView, crate::jobs::JobLinks, jobs::JobStreamEvent, crate::callbacks::CallbackView, crate::callbacks::CallbackSecret, crate::callbacks::CallbackBody)),
    modifiers(&BearerAuth),
    tags((name = "files", description = "Upload and manage files"), (name = "read", description = "Read a document"), (name = "health", description = "Probes"))
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// `GET /openapi.json`: the description, made on its first request and kept (made while
/// the router was built, it cost every start ~3 ms).
async fn openapi_document() -> axum::response::Response {
    use axum::response::IntoResponse;
    static BODY: std::sync::OnceLock<axum::body::Bytes> = std::sync::OnceLock::new();
    let body = BODY
        .get_or_init(|| {
            serde_json::to_vec(&openapi())
                .expect("the OpenAPI description serializes")
                .into()
        })
        .clone();
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// The OpenAPI description: what utoipa derives from the code, plus the rules between
/// `ReadRequest`'s fields that derive macros cannot state (exactly one of `file_id`,
/// `file_ids`, `url` and `path`; options that exclude each other; options that need `query`). A schema-valid
/// request is then never refused for its shape, only for its content (the file's format,
/// its size, a range past its end).
pub fn openapi() -> serde_json::Value {
    use serde_json::json;
    let mut doc =
        serde_json::to_value(ApiDoc::openapi()).expect("the OpenAPI description serializes");
    let given = |k: &str| json!({"required": [k], "properties": {k: {"not": {"type": "null"}}}});
    let both = |a: &str, b: &str| json!({"required": [a, b], "properties": {a: {"not": {"type": "null"}}, b: {"not": {"type": "null"}}}});
    let without_query = |k: &str| json!({"required": [k], "properties": {k: {"not": {"type": "null"}}}, "not": given("query")});
    doc["components"]["schemas"]["ReadRequest"]["allOf"] = json!([
        {"description": "Exactly one of file_id, file_ids, url and path names the file(s).",
         "oneOf": [given("file_id"), given("file_ids"), given("url"), given("path")]},
        {"description": "max_chars and max_tokens exclude each other.",
         "not": both("max_chars", "max_tokens")},
        {"description": "byte_offset/byte_length exclude offset/limit and query.",
         "not": {"anyOf": [
            both("byte_offset", "offset"), both("byte_offset", "limit"),
            both("byte_length", "offset"), both("byte_length", "limit"),
            both("query", "byte_offset"), both("query", "byte_length")]}},
        {"description": "A read of several files (file_ids) is not run as a job (async, or a callback_url).",
         "not": {"anyOf": [
            {"required": ["async", "file_ids"], "properties": {"async": {"const": true}, "file_ids": {"not": {"type": "null"}}}},
            both("callback_url", "file_ids")]}},
        {"description": "query_mode and context_lines need a query.",
         "not": {"anyOf": [without_query("query_mode"), without_query("context_lines")]}}
    ]);
    // The strict rule as data, for forms (the console offers a file only its options): by
    // the media type `/files` lists. Plain text (`text/plain`) stands for every text kind
    // that shares it (ini, source code, plain), which take the same options.
    let mut by_type = serde_json::Map::new();
    for f in crate::detect::ALL_FORMATS
        .iter()
        .copied()
        .chain([crate::detect::Format::Text(crate::detect::TextKind::Plain)])
    {
        by_type.insert(f.mime().to_string(), json!(crate::options::accepted(f)));
    }
    doc["components"]["schemas"]["ReadRequest"]["x-options-by-media-type"] =
        serde_json::Value::Object(by_type);
    doc
}

/// The OpenAPI description as committed in `openapi/openapi.json`.
pub fn openapi_json() -> String {
    let mut s =
        serde_json::to_string_pretty(&openapi()).expect("the OpenAPI description serializes");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    /// Every error response of every operation lists the codes it may carry (the words
    /// before a `:` in its description); each is a code of `ErrorCode` whose status is that
    /// response's, and every code is listed under its status somewhere. The lists are made
    /// from the table (`responses::error_responses!`); this holds any response written by
    /// hand to it too, and keeps every code answered by some operation.
    #[test]
    fn error_responses_list_codes_of_their_status() {
        use crate::error::ErrorCode;
        let doc = super::openapi();
        let mut listed = std::collections::HashSet::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                let Some(responses) = op.get("responses").and_then(|r| r.as_object()) else {
                    continue;
                };
                for (status, resp) in responses {
                    let status: u16 = status.parse().unwrap();
                    // Error envelopes only.
                    let body = resp["content"]["application/json"]["schema"]["$ref"].as_str();
                    if status < 400 || body != Some("#/components/schemas/ErrorBody") {
                        continue;
                    }
                    let desc = resp["description"].as_str().unwrap_or("");
                    let codes = desc.split(':').next().unwrap_or("");
                    assert!(
                        !codes.trim().is_empty(),
                        "{method} {path} {status}: no error code listed"
                    );
                    for word in codes.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                        let code = ErrorCode::ALL
                            .iter()
                            .find(|c| c.as_str() == word)
                            .unwrap_or_else(|| {
                                panic!(
                                    "{method} {path} {status}: {word:?} is no error code ({desc})"
                                )
                            });
                        assert_eq!(
                            code.status(),
                            status,
                            "{method} {path}: {word} is answered with {}, listed under {status}",
                            code.status()
                        );
                        listed.insert(word.to_string());
                    }
                }
            }
        }
        // Codes no operation lists: a method a route does not take (the router's own
        // answer), and a job's end that no request answers (`cancelled`, in its record).
        let by_layers = ["method_not_allowed", "cancelled"];
        for code in ErrorCode::ALL {
            assert!(
                listed.contains(code.as_str()) || by_layers.contains(&code.as_str()),
                "{} is listed by no operation",
                code.as_str()
            );
        }
    }

    /// A handler that panics answers 500 `internal` with the request id, through the same
    /// two layers `app()` puts around every route; the connection is not dropped.
    #[tokio::test]
    async fn a_panicking_handler_answers_500_internal_with_the_request_id() {
        async fn boom() -> &'static str {
            panic!("boom")
        }
        let app = axum::Router::new()
            .route("/boom", axum::routing::get(boom))
            .layer(axum::middleware::from_fn(super::catch_panic))
            .layer(axum::middleware::from_fn(super::request_id::layer));
        let resp = app
            .oneshot(
                Request::get("/boom")
                    .header("x-request-id", "panic-test-1")
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(resp.status(), 500);
        let body = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["error"]["code"], "internal", "{v}");
        assert_eq!(v["error"]["request_id"], "panic-test-1", "{v}");
        assert!(
            !v.to_string().contains("boom"),
            "the panic stays in the log: {v}"
        );
    }
}

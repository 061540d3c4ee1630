//! Configuration: the CLI (`serve`, `read`, `migrate`, `openapi`) with every flag also
//! settable as a `DOCREADER_*` environment variable, and `Limits`, every cap in one place.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "docreader",
    version,
    about = "Reads any document and hands back its text in one JSON envelope"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP service.
    Serve(ServeArgs),
    /// Read one file and print the envelope on stdout (no server).
    Read(ReadArgs),
    /// MCP over stdio, for a local agent host (a desktop app, an IDE): the tools `/mcp`
    /// has, for the local user, and `path` reads of local files under `--allowed-roots`.
    /// Takes `serve`'s settings (not its address: nothing listens); the data dir defaults
    /// to `$XDG_DATA_HOME/docreader` (`~/.local/share/docreader`). Logs go to stderr.
    Mcp(ServeArgs),
    /// Create or upgrade the SQLite database under the data dir, then exit.
    Migrate {
        #[arg(long, env = "DOCREADER_DATA_DIR", default_value = "./data")]
        data_dir: PathBuf,
        /// The Postgres database to migrate instead of SQLite under the data dir.
        #[arg(long, env = "DOCREADER_DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
    },
    /// Answer extraction jobs on stdin/stdout (started by `serve`; not for people).
    #[command(hide = true)]
    Worker {
        /// Where attachments found in documents are written for the server.
        #[arg(long)]
        spool: PathBuf,
        /// Log format of the server that started it: `text` or `json`.
        #[arg(long, default_value = "text")]
        log_format: String,
        /// Files of two magic names crash the worker or print on stdout (tests only).
        #[arg(long)]
        test_hooks: bool,
    },
    /// Ask a running service whether it is ready (`GET /readyz`): exit 0 when it answers
    /// 200, else 1 with one line saying why. For container health checks (no curl there).
    Healthcheck {
        /// The service's address (`0.0.0.0` and `::` are asked on loopback).
        #[arg(long, env = "DOCREADER_ADDR", default_value = "127.0.0.1:8080")]
        addr: SocketAddr,
        /// Give up after this many milliseconds.
        #[arg(long, default_value_t = 3000)]
        timeout_ms: u64,
    },
    /// Print the OpenAPI description (or write it to a file).
    Openapi {
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on (`127.0.0.1:8080`, `[::1]:8080`, `localhost:8080`, `:8080` for
    /// every address). Without API keys only loopback addresses are allowed.
    #[arg(long, env = "DOCREADER_ADDR", default_value = "127.0.0.1:8080", value_parser = listen_addr)]
    pub addr: SocketAddr,
    /// Where the database and the uploaded files live.
    #[arg(long, env = "DOCREADER_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Read jobs (`POST /read` with `"async": true`) this replica runs at once; 0: it runs
    /// none (it still queues jobs and answers for them).
    #[arg(long, env = "DOCREADER_JOB_RUNNERS", default_value_t = 2)]
    pub job_runners: usize,
    /// Deadline of a read job that gives no `deadline_ms`, in milliseconds (jobs are for
    /// reads longer than a request may wait: a 300-page scan takes minutes).
    #[arg(long, env = "DOCREADER_JOB_DEADLINE_MS", default_value_t = 3_600_000)]
    pub job_deadline_ms: u64,
    /// Read jobs one tenant may have running at once, across every replica (0: the job
    /// runners of one replica less one, at least 1, when more than one tenant is configured;
    /// else no cap). Queued jobs are claimed a tenant at a time: the tenant with the fewest
    /// running first.
    #[arg(long, env = "DOCREADER_MAX_JOBS_PER_TENANT", default_value_t = 0)]
    pub max_jobs_per_tenant: usize,
    /// Hours a job and its result are kept after it was submitted.
    #[arg(long, env = "DOCREADER_JOB_TTL_HOURS", default_value_t = 24)]
    pub job_ttl_hours: u64,
    /// Bytes of job results one tenant may have kept at once (until they expire); a job
    /// whose result would go past it fails as `too_large` (0: no cap but the disk's
    /// reserve).
    #[arg(long, env = "DOCREADER_MAX_JOB_RESULT_BYTES", default_value_t = 2 << 30)]
    pub max_job_result_bytes: u64,
    /// Hosts a job's `callback_url` may name (`hooks.example.com,*.corp.example`), checked
    /// like URL inputs (the addresses too, `DOCREADER_URL_ALLOW_ADDRESSES`). Empty: no
    /// callbacks.
    #[arg(long, env = "DOCREADER_CALLBACK_ALLOWLIST")]
    pub callback_allowlist: Option<String>,
    /// The first retry of a failed callback after this many milliseconds, doubling with
    /// every attempt (8 attempts, at most 15 minutes apart).
    #[arg(long, env = "DOCREADER_CALLBACK_RETRY_MS", default_value_t = 5_000)]
    pub callback_retry_ms: u64,
    /// A Postgres database shared by replicas (`postgres://user:password@host:port/db`);
    /// without it, SQLite under the data dir.
    #[arg(long, env = "DOCREADER_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// An S3-compatible bucket for the uploaded bytes, shared by replicas
    /// (`s3://bucket/prefix`; endpoint, region and credentials from `AWS_ENDPOINT_URL`,
    /// `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`); without it, the data
    /// dir. The data dir then holds this replica's cache of the bytes (`blob-cache/`).
    #[arg(long, env = "DOCREADER_BLOB_STORE")]
    pub blob_store: Option<String>,
    /// API keys as `key:tenant` pairs separated by commas. When set, Bearer auth is required.
    /// Prefer `--api-keys-file`: a flag's value shows in `ps`.
    #[arg(long, env = "DOCREADER_API_KEYS", hide_env_values = true)]
    pub api_keys: Option<String>,
    /// A file holding the API keys (`key:tenant` pairs, separated by commas or newlines;
    /// lines starting with `#` are comments).
    #[arg(long, env = "DOCREADER_API_KEYS_FILE")]
    pub api_keys_file: Option<PathBuf>,
    /// Serve `/metrics` without an API key even when keys are configured (for a scraper
    /// that cannot send one). Without keys configured, `/metrics` is open anyway.
    #[arg(long, env = "DOCREADER_METRICS_PUBLIC", default_value_t = false)]
    pub metrics_public: bool,
    /// Serve on a non-loopback address without API keys (only behind a gateway that authenticates).
    #[arg(long, env = "DOCREADER_ALLOW_UNAUTHENTICATED", default_value_t = false)]
    pub allow_unauthenticated: bool,
    /// Folders (`:`-separated) from which `path` reads are allowed. Unset: `path` is refused.
    #[arg(long, env = "DOCREADER_ALLOWED_ROOTS")]
    pub allowed_roots: Option<String>,
    /// Browser origins (comma-separated) allowed by CORS. Unset: CORS is closed.
    #[arg(long, env = "DOCREADER_CORS_ORIGINS")]
    pub cors_origins: Option<String>,
    /// `Host` names (comma-separated, `host` or `host:port`) that `/mcp` answers behind a
    /// gateway; `*` for any. Unset: loopback names only (rmcp's guard against DNS rebinding).
    #[arg(long, env = "DOCREADER_MCP_ALLOWED_HOSTS")]
    pub mcp_allowed_hosts: Option<String>,
    /// `deadline_ms` of an MCP read that gives none, in milliseconds: below the minute MCP
    /// clients commonly wait for a tool call, so a long read answers in time with the pages
    /// done, `partial` and `next` (0: the server's `deadline_ms`).
    #[arg(long, env = "DOCREADER_MCP_DEADLINE_MS", default_value_t = 45_000)]
    pub mcp_deadline_ms: u64,
    /// The service's address as clients reach it (`https://docs.example.com`), for the
    /// upload URLs it hands out. Unset: taken from the request (`X-Forwarded-Proto`,
    /// `X-Forwarded-Host`, `Host`).
    #[arg(long, env = "DOCREADER_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Hosts `/read` may fetch a `url` from (comma-separated; `*.example.com` for its
    /// subdomains). Unset: URL inputs are off.
    #[arg(long, env = "DOCREADER_URL_ALLOWLIST")]
    pub url_allowlist: Option<String>,
    /// Internal address ranges URL inputs may reach anyway (`127.0.0.0/8,10.0.0.0/8`);
    /// loopback, private, link-local and metadata addresses are refused otherwise.
    #[arg(long, env = "DOCREADER_URL_ALLOW_ADDRESSES")]
    pub url_allow_addresses: Option<String>,
    /// How long fetching a URL may take, redirects and body included.
    #[arg(long, env = "DOCREADER_URL_TIMEOUT_MS", default_value_t = 30_000)]
    pub url_timeout_ms: u64,
    /// List e-mail attachments without storing them as uploads (a read-only deployment).
    #[arg(long, env = "DOCREADER_NO_STORE_ATTACHMENTS", default_value_t = false)]
    pub no_store_attachments: bool,
    /// What goes into the search index: `all` (every read of an upload from its start, after
    /// it answers), `on_demand` (only `POST /files/{id}/index`, MCP's index_document and
    /// searches that name files, which read them whole), `off` (no index: search answers
    /// `forbidden`).
    #[arg(long, env = "DOCREADER_INDEX_READS", value_enum, default_value_t = IndexReads::All)]
    pub index_reads: IndexReads,
    /// The most text, in MiB, one read adds to the search index by itself (its first
    /// units, a unit cut at a line); `POST /files/{id}/index` indexes the whole document
    /// whatever its size. 0: no cap.
    #[arg(long, env = "DOCREADER_INDEX_MAX_MB", default_value_t = 8)]
    pub index_max_mb: u64,
    /// Worker processes that run extraction (0: in the server process, no isolation).
    #[arg(long, env = "DOCREADER_WORKERS", default_value_t = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2))]
    pub workers: usize,
    /// Address-space cap of each worker process, in MiB (0: none).
    #[arg(long, env = "DOCREADER_WORKER_MEMORY_MB", default_value_t = 4096)]
    pub worker_memory_mb: u64,
    /// The executable workers run (default: this one).
    #[arg(long, env = "DOCREADER_WORKER_BIN", hide = true)]
    pub worker_bin: Option<PathBuf>,
    /// Workers crash or print on files of two magic names (the isolation tests only).
    #[arg(long, hide = true, default_value_t = false)]
    pub worker_test_hooks: bool,
    /// stdout carries a protocol (`docreader mcp`): no log line may reach it, the workers'
    /// JSON logs included.
    #[arg(skip)]
    pub stdout_is_protocol: bool,
    /// How long, in milliseconds, small uploads' blob files wait to be synced together
    /// after their answer (their bytes are committed with their row before it).
    #[arg(long, hide = true, default_value_t = 500)]
    pub blob_sync_delay_ms: u64,
    /// A request's headers must arrive within this many milliseconds; a keep-alive
    /// connection idle for as long is closed.
    #[arg(
        long,
        env = "DOCREADER_HEADER_READ_TIMEOUT_MS",
        default_value_t = 10_000
    )]
    pub header_read_timeout_ms: u64,
    /// An upload whose body pauses longer than this many milliseconds between chunks is
    /// refused (`request_timeout`), so a slow client cannot hold a slot forever.
    #[arg(long, env = "DOCREADER_BODY_TIMEOUT_MS", default_value_t = 30_000)]
    pub body_timeout_ms: u64,
    /// Connections served at once (0: from the open-file limit, which is raised to its
    /// maximum at start).
    #[arg(long, env = "DOCREADER_MAX_CONNECTIONS", default_value_t = 0)]
    pub max_connections: usize,
    /// Connections served at once from one client address (0: a quarter of
    /// `max_connections`, at least 8). Gateways in `--trusted-proxies` are not held to it.
    #[arg(long, env = "DOCREADER_MAX_CONNECTIONS_PER_PEER", default_value_t = 0)]
    pub max_connections_per_peer: usize,
    /// The gateways in front of the service (comma-separated addresses or CIDR ranges, e.g.
    /// `10.0.0.0/8,127.0.0.1`): only their `X-Forwarded-Host`/`-Proto` are believed (for
    /// upload URLs), and they are not held to the per-peer connection cap.
    #[arg(long, env = "DOCREADER_TRUSTED_PROXIES")]
    pub trusted_proxies: Option<String>,
    /// Without API keys: `Host` names the service answers besides loopback ones (`localhost`,
    /// `127.0.0.1`, `[::1]`) and `DOCREADER_PUBLIC_URL`'s host, comma-separated (`*`: any;
    /// for a gateway that authenticates). Guards against DNS rebinding.
    #[arg(long, env = "DOCREADER_ALLOWED_HOSTS")]
    pub allowed_hosts: Option<String>,
    /// How long a shutdown (SIGTERM) waits for requests in progress, in milliseconds
    /// (0: the longest a read with the default deadline may take, `deadline_ms` +
    /// `grace_ms`; a read that asks for a longer `deadline_ms` may be cut).
    #[arg(long, env = "DOCREADER_DRAIN_TIMEOUT_MS", default_value_t = 0)]
    pub drain_timeout_ms: u64,
    /// Log format: `text` or `json`.
    #[arg(long, env = "DOCREADER_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,
    #[command(flatten)]
    pub limits: Limits,
}

/// Every cap the service enforces, with its default (each also a flag and a `DOCREADER_*`
/// variable). Extraction gets it whole; no cap lives as a constant elsewhere.
#[derive(Debug, Clone, Args, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    /// Largest accepted file, in bytes.
    #[arg(long, env = "DOCREADER_MAX_FILE_BYTES", value_parser = byte_size, default_value_t = 100 * 1024 * 1024)]
    pub max_file_bytes: u64,
    /// Largest upload request (all its files together), in bytes.
    #[arg(long, env = "DOCREADER_MAX_REQUEST_BYTES", value_parser = byte_size, default_value_t = 512 * 1024 * 1024)]
    pub max_request_bytes: u64,
    /// Files in one upload request.
    #[arg(long, env = "DOCREADER_MAX_FILES_PER_UPLOAD", default_value_t = 64)]
    pub max_files_per_upload: usize,
    /// Default truncation budget in characters (`max_chars`).
    #[arg(long, env = "DOCREADER_MAX_CHARS", default_value_t = 15_000)]
    pub max_chars: usize,
    /// Bytes read by `byte_offset` when `byte_length` is not given.
    #[arg(long, env = "DOCREADER_DEFAULT_BYTE_LENGTH", value_parser = byte_size, default_value_t = 1024 * 1024)]
    pub default_byte_length: u64,
    /// Default deadline of one read, in milliseconds (`deadline_ms`).
    #[arg(long, env = "DOCREADER_DEADLINE_MS", default_value_t = 120_000)]
    pub deadline_ms: u64,
    /// The longest `deadline_ms` a read may ask for (longer ones run within this, and the
    /// envelope says so); read jobs have their own cap, `--job-deadline-ms`.
    #[arg(long, env = "DOCREADER_MAX_DEADLINE_MS", default_value_t = 600_000)]
    pub max_deadline_ms: u64,
    /// How long past its deadline a read may take to hand back its finished pages (only
    /// work stuck inside one page runs into it), in milliseconds.
    #[arg(long, env = "DOCREADER_GRACE_MS", default_value_t = 10_000)]
    pub grace_ms: u64,
    /// Reads extracted at once; more wait their turn.
    #[arg(long, env = "DOCREADER_MAX_CONCURRENT_READS", default_value_t = default_concurrency())]
    pub max_concurrent_reads: usize,
    /// Reads one tenant may run at once (0: when more than one tenant is configured, the
    /// workers less a quarter of them — at least one left for the others; else no cap).
    /// Waiting reads are served a tenant at a time in turn.
    #[arg(long, env = "DOCREADER_MAX_READS_PER_TENANT", default_value_t = 0)]
    pub max_reads_per_tenant: usize,
    /// Pixels rendered for OCR in one PDF read (pages past it render smaller, with a warning).
    #[arg(
        long,
        env = "DOCREADER_MAX_RENDER_PIXELS_PER_READ",
        default_value_t = 400_000_000
    )]
    pub max_render_pixels_per_read: u64,
    /// Pixels of one PDF page rendered for OCR (300 dpi, or less above it).
    #[arg(
        long,
        env = "DOCREADER_MAX_RENDER_PIXELS_PER_PAGE",
        default_value_t = 9_000_000
    )]
    pub max_render_pixels_per_page: u64,
    /// Pixels of an image OCR'd at most; larger images are scaled down (with a warning).
    #[arg(long, env = "DOCREADER_MAX_OCR_PIXELS", default_value_t = 40_000_000)]
    pub max_ocr_pixels: u64,
    /// Longest side of an image that is decoded at all.
    #[arg(long, env = "DOCREADER_MAX_IMAGE_SIDE", default_value_t = 40_000)]
    pub max_image_side: u32,
    /// Memory one image decode may allocate, in bytes.
    #[arg(long, env = "DOCREADER_MAX_IMAGE_DECODE_BYTES", value_parser = byte_size, default_value_t = 1024 * 1024 * 1024)]
    pub max_image_decode_bytes: u64,
    /// Pixels one image (or one TIFF page) may have to be decoded at all, checked from its
    /// header before a byte is decoded (`too_large` naming the page).
    #[arg(
        long,
        env = "DOCREADER_MAX_IMAGE_PIXELS",
        default_value_t = 256_000_000
    )]
    pub max_image_pixels: u64,
    /// Pixels one read (or page drawing) may decode across an image's pages, checked from
    /// the pages' headers before the first is decoded: a 500-page TIFF costs what its pixels
    /// cost.
    #[arg(
        long,
        env = "DOCREADER_MAX_IMAGE_PIXELS_PER_READ",
        default_value_t = 1_000_000_000
    )]
    pub max_image_pixels_per_read: u64,
    /// Pages of a multi-page TIFF read at most.
    #[arg(long, env = "DOCREADER_MAX_TIFF_PAGES", default_value_t = 500)]
    pub max_tiff_pages: usize,
    /// Text a workbook's shared strings may expand to (cells × string length), in bytes.
    #[arg(long, env = "DOCREADER_MAX_EXPANDED_TEXT_BYTES", value_parser = byte_size, default_value_t = 512 * 1024 * 1024)]
    pub max_expanded_text_bytes: u64,
    /// Bytes a compressed RTF e-mail body may claim to decompress to.
    #[arg(long, env = "DOCREADER_MAX_RTF_BYTES", value_parser = byte_size, default_value_t = 64 * 1024 * 1024)]
    pub max_rtf_bytes: u64,
    /// Attachments found in one read (an e-mail, with the messages nested in it) that are
    /// stored as uploads; the rest are listed as not stored.
    #[arg(long, env = "DOCREADER_MAX_ATTACHMENTS_PER_READ", default_value_t = 64)]
    pub max_attachments_per_read: usize,
    /// Bytes of attachments one read may store as uploads.
    #[arg(long, env = "DOCREADER_MAX_ATTACHMENT_BYTES_PER_READ", value_parser = byte_size, default_value_t = 256 * 1024 * 1024)]
    pub max_attachment_bytes_per_read: u64,
    /// Size of the document memory (remembered OCR pages) before the least recently used
    /// pages are dropped, in bytes.
    #[arg(long, env = "DOCREADER_DOCUMENT_MEMORY_BYTES", value_parser = byte_size, default_value_t = 256 * 1024 * 1024)]
    pub document_memory_bytes: u64,
    #[command(flatten)]
    pub package: PackageLimits,
}

/// Caps for one Office or OpenDocument package (a zip), checked on the bytes actually
/// inflated (declared sizes are not trusted).
#[derive(Debug, Clone, Copy, Args, serde::Serialize, serde::Deserialize)]
pub struct PackageLimits {
    /// Entries in one package.
    #[arg(
        long = "package-max-entries",
        env = "DOCREADER_PACKAGE_MAX_ENTRIES",
        default_value_t = 20_000
    )]
    pub max_entries: usize,
    /// Inflated bytes of one entry.
    #[arg(long = "package-max-entry-bytes", env = "DOCREADER_PACKAGE_MAX_ENTRY_BYTES", value_parser = byte_size, default_value_t = 256 * 1024 * 1024)]
    pub max_entry_bytes: u64,
    /// Inflated bytes of the whole package.
    #[arg(long = "package-max-total-bytes", env = "DOCREADER_PACKAGE_MAX_TOTAL_BYTES", value_parser = byte_size, default_value_t = 1024 * 1024 * 1024)]
    pub max_total_bytes: u64,
    /// Inflated ÷ compressed, checked once an entry passes `ratio_floor` bytes.
    #[arg(
        long = "package-max-ratio",
        env = "DOCREADER_PACKAGE_MAX_RATIO",
        default_value_t = 250
    )]
    pub max_ratio: u64,
    /// Bytes an entry inflates to before its ratio is checked.
    #[arg(long = "package-ratio-floor", env = "DOCREADER_PACKAGE_RATIO_FLOOR", default_value_t = 16 * 1024 * 1024)]
    pub ratio_floor: u64,
    /// Nesting depth of the XML inside.
    #[arg(
        long = "package-max-xml-depth",
        env = "DOCREADER_PACKAGE_MAX_XML_DEPTH",
        default_value_t = 512
    )]
    pub max_xml_depth: usize,
}

impl Default for PackageLimits {
    fn default() -> Self {
        Self {
            max_entries: 20_000,
            max_entry_bytes: 256 * 1024 * 1024,
            max_total_bytes: 1024 * 1024 * 1024,
            max_ratio: 250,
            ratio_floor: 16 * 1024 * 1024,
            max_xml_depth: 512,
        }
    }
}

/// A listen address: an IP and port, `localhost:PORT` (the IPv4 loopback), or `:PORT`
/// (every address); a port alone is refused with what to write.
pub fn listen_addr(s: &str) -> Result<SocketAddr, String> {
    let s = s.trim();
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    let port = |p: &str| {
        p.parse::<u16>()
            .map_err(|_| format!("{s:?}: the port must be a number from 0 to 65535"))
    };
    if let Some(p) = s.strip_prefix("localhost:") {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port(p)?)));
    }
    if let Some(p) = s.strip_prefix(':') {
        return Ok(SocketAddr::from(([0, 0, 0, 0], port(p)?)));
    }
    Err(format!(
        "{s:?} is not an address to listen on: give IP:PORT (127.0.0.1:8080, [::1]:8080), localhost:PORT or :PORT"
    ))
}

/// A size in bytes as people write it: `104857600`, `100MiB`, `100 MB`, `1.5GiB`, `64k`.
/// Binary units (KiB, MiB, GiB, TiB) are powers of 1024; decimal ones (kB, MB, GB, TB) of
/// 1000; a bare `k`, `M`, `G`, `T` is binary, as the README writes sizes.
pub fn byte_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num = num.replace('_', "");
    let unit = unit.trim();
    let factor: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => {
            return Err(format!(
                "{s:?} is not a size: give bytes (104857600) or a number with a unit \
                 (100MiB, 1.5GiB, 500kB)"
            ))
        }
    };
    let bad =
        || format!("{s:?} is not a size: give bytes (104857600) or a number with a unit (100MiB)");
    if num.is_empty() {
        return Err(bad());
    }
    if let Ok(n) = num.parse::<u64>() {
        return n
            .checked_mul(factor)
            .ok_or_else(|| format!("{s:?} is more bytes than this machine can count"));
    }
    let f: f64 = num.parse().map_err(|_| bad())?;
    let bytes = f * factor as f64;
    if !(bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64) {
        return Err(format!("{s:?} is more bytes than this machine can count"));
    }
    Ok(bytes.round() as u64)
}

fn default_concurrency() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        * 2
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: 100 * 1024 * 1024,
            max_request_bytes: 512 * 1024 * 1024,
            max_files_per_upload: 64,
            max_chars: 15_000,
            default_byte_length: 1024 * 1024,
            deadline_ms: 120_000,
            max_deadline_ms: 600_000,
            grace_ms: 10_000,
            max_concurrent_reads: default_concurrency(),
            max_reads_per_tenant: 0,
            max_render_pixels_per_read: 400_000_000,
            max_render_pixels_per_page: 9_000_000,
            max_ocr_pixels: 40_000_000,
            max_image_side: 40_000,
            max_image_decode_bytes: 1024 * 1024 * 1024,
            max_image_pixels: 256_000_000,
            max_image_pixels_per_read: 1_000_000_000,
            max_tiff_pages: 500,
            max_expanded_text_bytes: 512 * 1024 * 1024,
            max_rtf_bytes: 64 * 1024 * 1024,
            max_attachments_per_read: 64,
            max_attachment_bytes_per_read: 256 * 1024 * 1024,
            document_memory_bytes: 256 * 1024 * 1024,
            package: PackageLimits::default(),
        }
    }
}

/// Options of `docreader read`: the file, then the very options of `POST /read` (one type,
/// `ReadRequest`, flattened), with the same names in `--kebab-case`.
#[derive(Debug, Clone, Args)]
pub struct ReadArgs {
    /// The file to read.
    pub file: PathBuf,
    #[command(flatten)]
    pub req: crate::options::ReadRequest,
    /// Print the whole envelope as JSON (what `POST /read` answers) instead of the text.
    /// Without it the text of the whole file goes to stdout (`--max-chars`/`--max-tokens`
    /// still cut it, and then stderr says how to read on), warnings, findings and errors
    /// to stderr.
    #[arg(long)]
    pub json: bool,
    /// Pretty-print the envelope (implies `--json`).
    #[arg(long)]
    pub pretty: bool,
}

impl ServeArgs {
    /// `--trusted-proxies` as address ranges.
    pub fn trusted_proxy_ranges(&self) -> Result<Vec<(std::net::IpAddr, u8)>, String> {
        parse_ranges("DOCREADER_TRUSTED_PROXIES", self.trusted_proxies.as_deref())
    }

    /// The keys file, when the keys come from one (it can be read again on SIGHUP).
    pub fn api_keys_file(&self) -> Option<PathBuf> {
        self.api_keys_file
            .clone()
            .filter(|_| self.api_keys.is_none())
    }

    /// The API key spec, from `--api-keys` or the file `--api-keys-file` names (not both);
    /// `None` when neither is set or it holds no key.
    pub fn api_key_spec(&self) -> Result<Option<String>, String> {
        let spec = match (&self.api_keys, &self.api_keys_file) {
            (Some(_), Some(_)) => return Err(
                "give the API keys once: DOCREADER_API_KEYS or DOCREADER_API_KEYS_FILE, not both"
                    .into(),
            ),
            (Some(s), None) => s.clone(),
            (None, Some(path)) => read_keys_file(path)?,
            (None, None) => return Ok(None),
        };
        Ok((!spec.trim().is_empty()).then_some(spec))
    }

    /// Defaults for tests and embedding: a data dir, nothing else configured.
    pub fn with_data_dir(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            addr: "127.0.0.1:0".parse().expect("static addr"),
            data_dir: data_dir.into(),
            database_url: None,
            blob_store: None,
            job_runners: 2,
            job_deadline_ms: 3_600_000,
            job_ttl_hours: 24,
            max_job_result_bytes: 2 << 30,
            callback_allowlist: None,
            callback_retry_ms: 5_000,
            max_jobs_per_tenant: 0,
            api_keys: None,
            api_keys_file: None,
            metrics_public: false,
            allow_unauthenticated: false,
            index_reads: IndexReads::All,
            index_max_mb: 8,
            no_store_attachments: false,
            workers: 0,
            worker_memory_mb: 4096,
            worker_bin: None,
            worker_test_hooks: false,
            stdout_is_protocol: false,
            blob_sync_delay_ms: 500,
            allowed_roots: None,
            cors_origins: None,
            mcp_deadline_ms: 45_000,
            mcp_allowed_hosts: None,
            public_url: None,
            url_allowlist: None,
            url_allow_addresses: None,
            url_timeout_ms: 30_000,
            log_format: "text".into(),
            header_read_timeout_ms: 10_000,
            body_timeout_ms: 30_000,
            max_connections: 0,
            max_connections_per_peer: 0,
            trusted_proxies: None,
            allowed_hosts: None,
            drain_timeout_ms: 0,
            limits: Limits::default(),
        }
    }
}

/// Address ranges (`127.0.0.0/8,::1`, a bare address being its own range) from the
/// comma-separated setting named `setting`.
pub fn parse_ranges(
    setting: &str,
    ranges: Option<&str>,
) -> Result<Vec<(std::net::IpAddr, u8)>, String> {
    use std::net::IpAddr;
    let mut out = Vec::new();
    for r in ranges
        .unwrap_or("")
        .split(',')
        .map(|h| h.trim().to_ascii_lowercase())
        .filter(|h| !h.is_empty())
    {
        let (addr, bits) = r.split_once('/').unwrap_or((r.as_str(), ""));
        let ip: IpAddr = addr
            .parse()
            .map_err(|_| format!("{setting}: {r:?} is not an address range such as 127.0.0.0/8"))?;
        let max = if ip.is_ipv4() { 32 } else { 128 };
        let bits = if bits.is_empty() {
            max
        } else {
            bits.parse::<u8>()
                .ok()
                .filter(|b| *b <= max)
                .ok_or_else(|| format!("{setting}: {r:?} has a bad prefix length"))?
        };
        out.push((ip, bits));
    }
    Ok(out)
}

/// Whether `ip` lies in `net`/`bits`.
pub fn in_range(ip: std::net::IpAddr, net: std::net::IpAddr, bits: u8) -> bool {
    use std::net::IpAddr;
    let (a, b, len) = match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(b)) => (u32::from(a) as u128, u32::from(b) as u128, 32),
        (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), 128),
        _ => return false,
    };
    if bits == 0 {
        return true;
    }
    let shift = len - bits as u32;
    (a >> shift) == (b >> shift)
}

/// Whether `ip` lies in one of `ranges` (an IPv4-mapped IPv6 address counts as its IPv4).
pub fn in_ranges(ip: std::net::IpAddr, ranges: &[(std::net::IpAddr, u8)]) -> bool {
    use std::net::IpAddr;
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    ranges.iter().any(|(net, bits)| in_range(ip, *net, *bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_people_write_them() {
        assert_eq!(byte_size("104857600"), Ok(104_857_600));
        assert_eq!(byte_size("100MiB"), Ok(100 << 20));
        assert_eq!(byte_size("100 MiB"), Ok(100 << 20));
        assert_eq!(byte_size("100M"), Ok(100 << 20));
        assert_eq!(byte_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(byte_size("500kB"), Ok(500_000));
        assert_eq!(byte_size("2 GB"), Ok(2_000_000_000));
        assert!(byte_size("100 parsecs").unwrap_err().contains("not a size"));
        assert!(byte_size("MiB").unwrap_err().contains("not a size"));
        assert!(byte_size("99999999999TiB")
            .unwrap_err()
            .contains("more bytes"));
    }

    #[test]
    fn listen_addresses_as_people_write_them() {
        assert_eq!(
            listen_addr("localhost:8080").unwrap().to_string(),
            "127.0.0.1:8080"
        );
        assert_eq!(listen_addr(":9000").unwrap().to_string(), "0.0.0.0:9000");
        assert_eq!(listen_addr("[::1]:80").unwrap().to_string(), "[::1]:80");
        assert!(listen_addr("8080").unwrap_err().contains("IP:PORT"));
        assert!(listen_addr("localhost:http").unwrap_err().contains("port"));
    }

    /// The caps are stated twice (clap's defaults, `Default`): they must agree, or the CLI
    /// and embedders would read under other limits than the server.
    #[test]
    fn limits_default_is_what_the_flags_default_to() {
        #[derive(Parser)]
        struct Flags {
            #[command(flatten)]
            limits: Limits,
        }
        let parsed = Flags::try_parse_from(["docreader"]).unwrap().limits;
        let mut a = serde_json::to_value(parsed).unwrap();
        let mut b = serde_json::to_value(Limits::default()).unwrap();
        // The one default that depends on the machine is computed the same way by both.
        a["max_concurrent_reads"] = serde_json::Value::Null;
        b["max_concurrent_reads"] = serde_json::Value::Null;
        assert_eq!(a, b);
    }
}

impl Limits {
    /// The caps as `serve` would have them from the `DOCREADER_*` variables alone (no
    /// flags): what `docreader read` reads under, so the CLI and the server agree.
    pub fn from_env() -> Result<Self, String> {
        #[derive(clap::Parser)]
        struct Env {
            #[command(flatten)]
            limits: Limits,
        }
        <Env as clap::Parser>::try_parse_from(["docreader"])
            .map(|e| e.limits)
            .map_err(|e| e.to_string())
    }
}

/// What goes into the search index (`--index-reads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum IndexReads {
    /// Every read of an upload from its start.
    #[default]
    All,
    /// Only documents indexed on request (read whole).
    #[value(name = "on_demand")]
    OnDemand,
    /// Nothing: search is off.
    Off,
}

/// The keys file's `key:tenant` lines (blank lines and `#` comments skipped) as one spec.
pub fn read_keys_file(path: &std::path::Path) -> Result<String, String> {
    Ok(std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the API keys file {}: {e}", path.display()))?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join(","))
}

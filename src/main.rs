//! The `docreader` binary: `serve`, `read`, `migrate`, `openapi`.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use docreader::config::{Cli, Command, ReadArgs, ServeArgs};
use docreader::{app, AppState};

/// The allocator of the binary (server, CLI and workers): the system's, plus a frame on the
/// worker's reply channel when an allocation fails under its memory cap.
#[global_allocator]
static ALLOC: docreader::worker::CapAwareAlloc = docreader::worker::CapAwareAlloc;

fn main() -> ExitCode {
    // SAFETY: the process has one thread here (nothing has been spawned yet).
    unsafe { docreader::native::init_process_env() };
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => {
            // glibc gives each thread that allocates its own arena and keeps what it freed:
            // a long-running server with a blocking pool grows by arenas, not by use (soak:
            // +15 % RSS over 3,000-attachment reads; with two arenas, flat). An operator's
            // MALLOC_ARENA_MAX wins.
            if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
                // SAFETY: a plain setting of the allocator, before any thread is spawned.
                unsafe { libc::mallopt(libc::M_ARENA_MAX, 2) };
            }
            init_tracing(&args.log_format, true);
            runtime().block_on(serve(args))
        }
        Command::Mcp(args) => {
            if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
                // SAFETY: a plain setting of the allocator, before any thread is spawned.
                unsafe { libc::mallopt(libc::M_ARENA_MAX, 2) };
            }
            // stdout carries the protocol: logs go to stderr, in either format.
            init_tracing(&args.log_format, false);
            runtime().block_on(mcp(args))
        }
        Command::Read(args) => {
            // Quiet by default (stdout is the envelope); DOCREADER_LOG=debug shows the stages.
            if std::env::var_os("DOCREADER_LOG").is_some() {
                init_tracing("text", false);
            }
            read(args)
        }
        Command::Migrate {
            data_dir,
            database_url,
        } => {
            init_tracing("text", false);
            runtime().block_on(async {
                let opened = match docreader::db::open(&data_dir, database_url.as_deref()).await {
                    // The search index's own file too (embedded).
                    Ok(db) => docreader::search::open(&data_dir, &db).await,
                    Err(e) => Err(e),
                };
                match opened {
                    Ok(_) => {
                        match &database_url {
                            Some(u) => {
                                println!("database ready: {}", docreader::db::display_url(u))
                            }
                            None => println!("database ready under {}", data_dir.display()),
                        }
                        ExitCode::SUCCESS
                    }
                    Err(e) => {
                        eprintln!("docreader: {e}");
                        ExitCode::FAILURE
                    }
                }
            })
        }
        Command::Worker {
            spool,
            log_format,
            test_hooks,
        } => match {
            // A worker reads one document after another: glibc's default gives the heap's
            // top back as soon as 128 KiB of it are free, and the next read faults those
            // pages in again. Keep up to 16 MiB of it (the worker trims past that between
            // jobs: `worker::serve_jobs`), and map only blocks from 4 MiB up on their own.
            // An operator's MALLOC_* settings win.
            if std::env::var_os("MALLOC_TRIM_THRESHOLD_").is_none()
                && std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none()
            {
                // SAFETY: plain settings of the allocator, before any thread is spawned.
                unsafe {
                    libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
                    libc::mallopt(libc::M_TRIM_THRESHOLD, 16 << 20);
                }
            }
            // Log lines go to stderr, which the server points where it logs.
            init_tracing(&log_format, false);
            docreader::worker::serve_jobs(&spool, test_hooks)
        } {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("docreader worker: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Healthcheck { addr, timeout_ms } => {
            runtime().block_on(healthcheck(addr, timeout_ms))
        }
        Command::Openapi { out } => {
            let json = docreader::http::openapi_json();
            match out {
                Some(p) => match std::fs::write(&p, json) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        eprintln!("docreader: cannot write {}: {e}", p.display());
                        ExitCode::FAILURE
                    }
                },
                None => {
                    // A closed pipe (`| head`) ends it quietly, as other tools do.
                    let _ = std::io::stdout().lock().write_all(json.as_bytes());
                    ExitCode::SUCCESS
                }
            }
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Text logs go to stderr. The server's JSON logs (a container's) go to stdout; a worker's
/// stdout carries its replies, so it logs to stderr, which the server points at its stdout.
fn init_tracing(format: &str, json_to_stdout: bool) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("DOCREADER_LOG")
        // rmcp says three things at info for every MCP request (session up, stream ended,
        // serve finished): an MCP call logs what a REST call does, the read and the answer.
        .unwrap_or_else(|_| EnvFilter::new("info,ort=warn,rmcp=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    if format == "json" {
        let out = move || -> Box<dyn std::io::Write> {
            if json_to_stdout {
                Box::new(std::io::stdout())
            } else {
                Box::new(std::io::stderr())
            }
        };
        builder
            .with_writer(out)
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .init();
    } else {
        // Colours only for a terminal: in a log file or a collector, escape codes are noise.
        builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_writer(std::io::stderr)
            .init();
    }
}

/// `docreader mcp`: the service's state (database, uploads, search, workers) behind MCP
/// over stdio, until the host closes stdin; then what is still being indexed is written.
async fn mcp(mut args: ServeArgs) -> ExitCode {
    // A host starts the server wherever it likes (often `/`): the data dir is the user's
    // unless one was set.
    if std::env::var_os("DOCREADER_DATA_DIR").is_none()
        && args.data_dir == std::path::Path::new("./data")
    {
        let base = std::env::var_os("XDG_DATA_HOME")
            .filter(|d| !d.is_empty())
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".local/share"))
            });
        if let Some(base) = base {
            args.data_dir = base.join("docreader");
        }
    }
    if let Err(e) = check_data_dir(&args.data_dir) {
        eprintln!("docreader: {e}");
        return ExitCode::FAILURE;
    }
    // stdout is the protocol: the workers log to stderr too.
    args.stdout_is_protocol = true;
    let state = match AppState::new(&args).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("docreader: {e}");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(data_dir = %args.data_dir.display(), "docreader MCP on stdio");
    let (jobs, indexing) = (state.jobs.clone(), state.files.indexing.clone());
    let served = docreader::http::mcp::serve_stdio(state).await;
    jobs.stop();
    jobs.release().await;
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), indexing.settled()).await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("docreader: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: ServeArgs) -> ExitCode {
    #[cfg(unix)]
    let hangups = docreader::http::auth::hangups();
    let keys_set = match args.api_key_spec() {
        Ok(spec) => spec.is_some(),
        Err(e) => {
            eprintln!("docreader: {e}");
            return ExitCode::FAILURE;
        }
    };
    if !keys_set && !args.addr.ip().is_loopback() && !args.allow_unauthenticated {
        eprintln!(
            "docreader: refusing to serve on {} without API keys. Set DOCREADER_API_KEYS=key:tenant \
             (or DOCREADER_API_KEYS_FILE), or DOCREADER_ALLOW_UNAUTHENTICATED=true \
             (--allow-unauthenticated) when a gateway in front authenticates.",
            args.addr
        );
        return ExitCode::FAILURE;
    }
    if !keys_set
        && !args.addr.ip().is_loopback()
        && args.allowed_hosts.is_none()
        && args.public_url.is_none()
    {
        // Without keys only loopback Host names are answered (DNS rebinding): behind a
        // gateway that is almost surely not what the operator wants, so say it at once.
        eprintln!(
            "docreader: without API keys only requests for a loopback host (localhost, 127.0.0.1) \
             are answered; list the gateway's public name in DOCREADER_ALLOWED_HOSTS or set \
             DOCREADER_PUBLIC_URL"
        );
    }
    if let Err(e) = check_data_dir(&args.data_dir) {
        eprintln!("docreader: {e}");
        return ExitCode::FAILURE;
    }
    // The port first: a port in use is said before the database (or a bucket) is touched,
    // and nothing is created for a server that cannot start.
    let listener = match tokio::net::TcpListener::bind(args.addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("docreader: cannot listen on {}: {e}", args.addr);
            return ExitCode::FAILURE;
        }
    };
    let state = match AppState::new(&args).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("docreader: {e}");
            return ExitCode::FAILURE;
        }
    };
    #[cfg(unix)]
    if let Some(h) = hangups {
        docreader::http::auth::reload_on_hangup(h, state.api_keys.clone());
    }
    let addr = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    tracing::info!(%addr, data_dir = %args.data_dir.display(), auth = keys_set, "docreader listening");
    // Printed plainly too, so scripts and people see where to go (JSON logs stay JSON only).
    if args.log_format != "json" {
        eprintln!("docreader listening on http://{addr} (docs at http://{addr}/docs)");
    }
    let fd_limit = docreader::http::serve::raise_fd_limit();
    let max_connections = docreader::http::serve::connection_cap(args.max_connections, fd_limit);
    let trusted_proxies = match args.trusted_proxy_ranges() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("docreader: {e}");
            return ExitCode::FAILURE;
        }
    };
    let limits = docreader::http::serve::ConnLimits {
        header_read_timeout: std::time::Duration::from_millis(args.header_read_timeout_ms.max(1)),
        max_connections,
        per_peer: docreader::http::serve::per_peer_cap(
            args.max_connections_per_peer,
            max_connections,
        ),
        trusted_proxies,
        drain_timeout: std::time::Duration::from_millis(match args.drain_timeout_ms {
            0 => args.limits.deadline_ms + args.limits.grace_ms,
            ms => ms,
        }),
    };
    tracing::info!(
        max_connections = limits.max_connections,
        per_peer = limits.per_peer,
        fd_limit,
        drain_ms = limits.drain_timeout.as_millis() as u64,
        "serving"
    );
    // Stopping: runners claim no more jobs at once; jobs still running once requests have
    // drained go back to the queue for another replica (not left until their leases end).
    let jobs = state.jobs.clone();
    let indexing = state.files.indexing.clone();
    let stopping = jobs.clone();
    let shutdown = async move {
        shutdown_signal().await;
        stopping.stop();
    };
    let drained = docreader::http::serve::serve(listener, app(state), limits, shutdown).await;
    let released = jobs.release().await;
    // Reads' texts the search index writer is still gathering are written, not dropped
    // with the process (a few seconds at most: the service is stopping).
    let indexed = tokio::time::timeout(std::time::Duration::from_secs(5), indexing.settled())
        .await
        .is_ok();
    tracing::info!(drained, released, indexed, "docreader stopped");
    ExitCode::SUCCESS
}

/// `GET /readyz` on the service at `addr`.
async fn healthcheck(mut addr: std::net::SocketAddr, timeout_ms: u64) -> ExitCode {
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    let ask = async {
        let tcp = tokio::net::TcpStream::connect(addr).await?;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
                .await
                .map_err(std::io::Error::other)?;
        tokio::spawn(conn);
        let req = hyper::Request::get("/readyz")
            .header(hyper::header::HOST, addr.to_string())
            .body(http_body_util::Empty::<hyper::body::Bytes>::new())
            .map_err(std::io::Error::other)?;
        let resp = sender
            .send_request(req)
            .await
            .map_err(std::io::Error::other)?;
        Ok::<_, std::io::Error>(resp.status())
    };
    match tokio::time::timeout(std::time::Duration::from_millis(timeout_ms), ask).await {
        Ok(Ok(status)) if status.is_success() => ExitCode::SUCCESS,
        Ok(Ok(status)) => {
            eprintln!("docreader healthcheck: http://{addr}/readyz answered {status}");
            ExitCode::FAILURE
        }
        Ok(Err(e)) => {
            eprintln!("docreader healthcheck: cannot reach http://{addr}/readyz: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!(
                "docreader healthcheck: http://{addr}/readyz did not answer in {timeout_ms} ms"
            );
            ExitCode::FAILURE
        }
    }
}

/// The data dir must be a folder this process can write: said in one line with the path and
/// the user, before anything else fails less clearly (a container's volume mounted for
/// another user, a typo).
fn check_data_dir(dir: &std::path::Path) -> Result<(), String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "the data dir {} is a file, not a folder: point DOCREADER_DATA_DIR (--data-dir) at a \
             folder (it is created when missing)",
            dir.display()
        ));
    }
    let probe = dir.join(format!(".write-check-{}", std::process::id()));
    let tried = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&probe, b"ok"))
        .and_then(|()| std::fs::remove_file(&probe));
    tried.map_err(|e| {
        // SAFETY: plain getters of the process's ids.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        format!(
            "the data dir {} is not writable by this process (uid {uid}, gid {gid}): {e}. \
             Give that user a writable folder or volume there (e.g. podman run -v docreader-data:{}), \
             or point DOCREADER_DATA_DIR elsewhere.",
            dir.display(),
            dir.display()
        )
    })
}

/// SIGTERM or Ctrl-C: stop accepting, let in-flight requests finish.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutting down: finishing in-flight requests");
}

fn read(args: ReadArgs) -> ExitCode {
    use std::io::IsTerminal;
    let json = args.json || args.pretty;
    let mut req = args.req.clone();
    // The text of the whole file, as pdftotext gives it, unless a budget is named.
    let whole = !json && req.max_chars.is_none() && req.max_tokens.is_none();
    if whole {
        req.max_chars = Some(docreader::options::MAX_CHARS as i64);
    }
    // The server's caps, from the same `DOCREADER_*` variables.
    let limits = match docreader::config::Limits::from_env() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("docreader: {}", e.trim_end());
            return ExitCode::from(2);
        }
    };
    let service = docreader::read::ReadService::local(limits);
    // A line on the terminal as pages are read (OCR takes seconds a page); never into a
    // pipe or a file.
    let terminal = std::io::stderr().is_terminal();
    let progress = if terminal {
        docreader::extract::ProgressSink::new(|p| {
            if p.total > 1 || p.stage == docreader::extract::Stage::Ocr {
                let mut err = std::io::stderr().lock();
                let _ = write!(
                    err,
                    "\r\x1b[Kdocreader: page {} of {} ({})",
                    p.done, p.total, p.stage
                );
                let _ = err.flush();
            }
        })
    } else {
        docreader::extract::ProgressSink::default()
    };
    let result = runtime().block_on(service.read_local_with(&args.file, req.clone(), progress));
    if terminal {
        eprint!("\r\x1b[K");
    }
    let ok = result.is_ok();
    if let Err(e) = &result {
        // The cause of an internal failure, which the JSON body does not carry.
        if let Some(cause) = &e.cause {
            eprintln!("docreader: {}: {cause}", e.code.as_str());
        }
    }
    // Straight to stdout: no JSON value or string copy of a text that can be 50 MB.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = if json {
        match (&result, args.pretty) {
            (Ok(env), false) => serde_json::to_writer(&mut out, env),
            (Ok(env), true) => serde_json::to_writer_pretty(&mut out, env),
            (Err(e), false) => serde_json::to_writer(&mut out, &e.body(None)),
            (Err(e), true) => serde_json::to_writer_pretty(&mut out, &e.body(None)),
        }
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out))
    } else {
        match &result {
            Ok(env) => {
                // The text, less the line saying it was cut (stderr says so, and the outputs
                // of the read-on commands then join into the whole text).
                let text = docreader::envelope::without_truncation_line(&env.text);
                let mut w = out.write_all(text.as_bytes());
                if !text.is_empty() && !text.ends_with('\n') {
                    w = w.and_then(|()| writeln!(out));
                }
                if let Some(note) = &env.report.note {
                    eprintln!("docreader: note: {}", cli_words(note));
                }
                for warning in &env.warnings {
                    eprintln!("docreader: warning: {}", cli_words(warning));
                }
                if let Some(sec) = &env.security {
                    eprintln!(
                        "docreader: {} (each one: --json, under security)",
                        sec.summary
                    );
                }
                if let Some(next) = &env.next {
                    eprintln!(
                        "docreader: the text is cut here ({} characters shown); read on with:\n  {}",
                        text.chars().count(),
                        read_on_line(&args.file, &req, next, whole)
                    );
                }
                w
            }
            Err(e) => {
                eprintln!("docreader: {}", e.message);
                eprintln!("  hint: {}", cli_words(&e.hint));
                Ok(())
            }
        }
    };
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = written.and_then(|()| out.flush());
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The long names of `docreader read`'s options, as `snake_case` (the request's keys):
/// built once (each hint and warning asks).
fn read_option_names() -> &'static [String] {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        use clap::CommandFactory;
        docreader::config::Cli::command()
            .find_subcommand("read")
            .map(|c| {
                c.get_arguments()
                    .filter_map(|a| a.get_long())
                    .map(|l| l.replace('-', "_"))
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// A hint in command-line words: the request's option names (`` `password` ``) as the
/// flags that set them (`--password`).
fn cli_words(hint: &str) -> String {
    let names = read_option_names();
    let mut out = String::with_capacity(hint.len());
    let mut rest = hint;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else {
            break;
        };
        let name = &rest[open + 1..open + 1 + len];
        out.push_str(&rest[..open]);
        if names.iter().any(|n| n == name) {
            out.push_str("--");
            out.push_str(&name.replace('_', "-"));
        } else {
            out.push_str(&rest[open..open + len + 2]);
        }
        rest = &rest[open + len + 2..];
    }
    out.push_str(rest);
    out
}

/// The command line that reads on from `next`: the file, the options given (less a
/// budget the CLI chose itself), the ones `next` changes.
fn read_on_line(
    file: &std::path::Path,
    req: &docreader::options::ReadRequest,
    next: &docreader::envelope::Next,
    chosen_budget: bool,
) -> String {
    let names = read_option_names();
    let mut opts: serde_json::Map<String, serde_json::Value> = match serde_json::to_value(req) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => Default::default(),
    };
    if chosen_budget {
        opts.remove("max_chars");
    }
    if let Ok(serde_json::Value::Object(n)) = serde_json::to_value(next) {
        opts.extend(n);
    }
    let mut line = format!("docreader read {}", shell_quote(&file.to_string_lossy()));
    for (k, v) in opts {
        if !names.contains(&k) {
            continue;
        }
        // `--flag=value`: a value starting with `-` (a query, a sheet's name) stays a value.
        let flag = format!("--{}", k.replace('_', "-"));
        let value = match v {
            serde_json::Value::Null => continue,
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        line.push(' ');
        line.push_str(&shell_quote(&format!("{flag}={value}")));
    }
    line
}

/// A word as a POSIX shell reads it back: as is when plain, else in single quotes.
fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,=+@%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

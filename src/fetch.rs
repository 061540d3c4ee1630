//! URL inputs (`url` instead of `file_id`), off unless the operator lists hosts
//! (`DOCREADER_URL_ALLOWLIST`). Guarded against server-side request forgery:
//!
//! - only `http` and `https`; only listed hosts (`docs.example.com`, or `*.example.com` for
//!   its subdomains), at every redirect too (at most 5);
//! - the host is resolved once, every address checked, and the connection goes to the
//!   address that was checked (no second lookup a rebinding DNS server could answer
//!   differently); loopback, private, link-local (cloud metadata at 169.254.169.254),
//!   shared, multicast and unspecified addresses are refused unless the operator lists
//!   their range (`DOCREADER_URL_ALLOW_ADDRESSES`, e.g. `127.0.0.0/8` in tests);
//! - the body streams into the upload store under the file size limit and a deadline for
//!   the whole fetch, and the bytes are then checked like an upload (executables and
//!   archives refused). The fetched file becomes an upload of the tenant.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;

pub use crate::config::{in_ranges, parse_ranges};
use crate::db::FileRecord;
use crate::error::{ApiError, ErrorCode};
use crate::files::Files;

const MAX_REDIRECTS: usize = 5;

/// The operator's rules for URL inputs.
#[derive(Clone, Debug, Default)]
pub struct FetchPolicy {
    /// Hosts that may be fetched (`*.example.com`: its subdomains). Empty: URL inputs off.
    pub hosts: Vec<String>,
    /// Address ranges allowed even though they are internal (`127.0.0.0/8`, `10.0.0.0/8`).
    pub allowed_ranges: Vec<(IpAddr, u8)>,
    /// The whole fetch (connect, redirects, body) must end within this.
    pub timeout: Duration,
    /// The setting that lists the hosts, named in refusals' hints.
    pub setting: &'static str,
}

impl FetchPolicy {
    /// From the comma-separated settings.
    pub fn parse(
        hosts: Option<&str>,
        ranges: Option<&str>,
        timeout_ms: u64,
    ) -> Result<Self, String> {
        let list = |s: Option<&str>| -> Vec<String> {
            s.unwrap_or("")
                .split(',')
                .map(|h| h.trim().to_ascii_lowercase())
                .filter(|h| !h.is_empty())
                .collect()
        };
        let allowed_ranges = parse_ranges("DOCREADER_URL_ALLOW_ADDRESSES", ranges)?;
        Ok(Self {
            hosts: list(hosts),
            allowed_ranges,
            timeout: Duration::from_millis(timeout_ms.max(1)),
            setting: "DOCREADER_URL_ALLOWLIST",
        })
    }

    /// The rules for job callbacks (`callback_url`): the hosts of
    /// `DOCREADER_CALLBACK_ALLOWLIST`, the same address ranges as URL inputs, `timeout_ms`
    /// for one delivery attempt.
    pub fn for_callbacks(
        hosts: Option<&str>,
        ranges: Option<&str>,
        timeout_ms: u64,
    ) -> Result<Self, String> {
        Ok(Self {
            setting: "DOCREADER_CALLBACK_ALLOWLIST",
            ..Self::parse(hosts, ranges, timeout_ms)?
        })
    }

    fn host_allowed(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.hosts.iter().any(|h| match h.strip_prefix("*.") {
            Some(domain) => host.ends_with(&format!(".{domain}")),
            None => *h == host,
        })
    }

    fn address_allowed(&self, ip: IpAddr) -> bool {
        !internal(ip)
            || self
                .allowed_ranges
                .iter()
                .any(|(net, bits)| crate::config::in_range(ip, *net, *bits))
    }
}

/// Addresses a service should not be made to reach on a client's behalf.
pub fn internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()          // 169.254/16: cloud metadata
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1])) // shared (CGNAT)
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)   // IETF protocol assignments
                || o[0] >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return internal(IpAddr::V4(v4));
            }
            let s = v6.segments();
            // IPv4-compatible (`::127.0.0.1`, deprecated but still routed by some stacks
            // to the IPv4 inside) and the rest of ::/96, `::1` and `::` included.
            if s[..6] == [0; 6] {
                return true;
            }
            // 6to4 (2002::/16) carries an IPv4 address in its next 32 bits.
            if s[0] == 0x2002 {
                let v4 = std::net::Ipv4Addr::new(
                    (s[1] >> 8) as u8,
                    s[1] as u8,
                    (s[2] >> 8) as u8,
                    s[2] as u8,
                );
                if internal(IpAddr::V4(v4)) {
                    return true;
                }
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00   // unique local
                || (s[0] & 0xffc0) == 0xfe80   // link-local
                || (s[0] == 0x64 && s[1] == 0xff9b) // NAT64 (reaches IPv4 inside)
                || (s[0] == 0x2001 && s[1] == 0x0db8)
        }
    }
}

fn refusal(code: ErrorCode, message: String, hint: &str) -> ApiError {
    ApiError::new(code, message).with_hint(hint)
}

/// Fetch `url` for `tenant` and keep it as an upload.
pub async fn fetch(
    files: &Files,
    policy: &FetchPolicy,
    tenant: &str,
    url: &str,
) -> Result<FileRecord, ApiError> {
    if policy.hosts.is_empty() {
        return Err(refusal(
            ErrorCode::UrlNotAllowed,
            "this service does not fetch URLs".into(),
            "Upload the file (POST /upload), or ask the operator to list the host in DOCREADER_URL_ALLOWLIST.",
        ));
    }
    let deadline = Instant::now() + policy.timeout;
    let mut current = parse(url)?;
    for _ in 0..=MAX_REDIRECTS {
        let left = deadline.saturating_duration_since(Instant::now());
        let resp = tokio::time::timeout(left, get(policy, &current))
            .await
            .map_err(|_| timed_out(policy))??;
        let status = resp.status();
        if status.is_redirection() {
            let Some(loc) = resp
                .headers()
                .get(hyper::header::LOCATION)
                .and_then(|v| v.to_str().ok())
            else {
                return Err(failed(format!(
                    "{} answered {status} without a Location",
                    host_of(&current)
                )));
            };
            let next = current.join(loc).map_err(|_| {
                failed(format!(
                    "{} redirected to an address that does not parse",
                    host_of(&current)
                ))
            })?;
            check_scheme(&next)?;
            if !policy.host_allowed(next.host_str().unwrap_or("")) {
                return Err(refusal(
                    ErrorCode::UrlRedirectBlocked,
                    format!("{} redirected to {}, a host not on the list", host_of(&current), host_of(&next)),
                    "Give the final URL directly if its host is allowed, or ask the operator to list the host in DOCREADER_URL_ALLOWLIST.",
                ));
            }
            current = next;
            continue;
        }
        if !status.is_success() {
            return Err(failed(format!(
                "{} answered HTTP {status}",
                host_of(&current)
            )));
        }
        if let Some(len) = resp
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
        {
            if len > files.limits.max_file_bytes {
                return Err(too_large(files, &current));
            }
        }
        let name = crate::store::clean_name(&file_name(&current));
        let mut inc = files.store.incoming().await.map_err(ApiError::internal)?;
        let mut body = resp.into_body();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = match tokio::time::timeout(left, body.frame()).await {
                Err(_) => {
                    inc.discard().await;
                    return Err(timed_out(policy));
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    inc.discard().await;
                    return Err(failed(format!(
                        "the body from {} broke off: {e}",
                        host_of(&current)
                    )));
                }
                Ok(Some(Ok(f))) => f,
            };
            if let Ok(data) = frame.into_data() {
                if inc.size + data.len() as u64 > files.limits.max_file_bytes {
                    inc.discard().await;
                    return Err(too_large(files, &current));
                }
                if let Err(e) = inc.write(&data).await {
                    inc.discard().await;
                    return Err(ApiError::internal(e));
                }
            }
        }
        tracing::info!(host = %host_of(&current), size = inc.size, "fetched a URL");
        return files.finalize(tenant, &name, inc).await;
    }
    Err(refusal(
        ErrorCode::UrlRedirectBlocked,
        format!("more than {MAX_REDIRECTS} redirects"),
        "Give the final URL directly.",
    ))
}

fn parse(url: &str) -> Result<url::Url, ApiError> {
    let u = url::Url::parse(url).map_err(|e| {
        ApiError::invalid_option(format!("url does not parse: {e}"))
            .with_hint("Give an absolute http:// or https:// URL.")
    })?;
    check_scheme(&u)?;
    Ok(u)
}

fn check_scheme(u: &url::Url) -> Result<(), ApiError> {
    if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() {
        return Ok(());
    }
    Err(refusal(
        ErrorCode::UrlSchemeNotAllowed,
        format!("{}: URLs are fetched over http and https only", u.scheme()),
        "Give an http:// or https:// URL, or upload the file.",
    ))
}

fn host_of(u: &url::Url) -> String {
    u.host_str().unwrap_or("").to_string()
}

fn file_name(u: &url::Url) -> String {
    u.path_segments()
        .and_then(|mut s| s.next_back().map(str::to_string))
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_encoding::percent_decode_str(&s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .unwrap_or_else(|| "download".into())
}

fn failed(message: String) -> ApiError {
    refusal(
        ErrorCode::FetchFailed,
        message,
        "Check that the URL works from the service's network, or upload the file.",
    )
}

fn timed_out(policy: &FetchPolicy) -> ApiError {
    refusal(
        ErrorCode::Timeout,
        format!(
            "fetching the URL took longer than {} ms",
            policy.timeout.as_millis()
        ),
        "Upload the file instead, or ask the operator to raise DOCREADER_URL_TIMEOUT_MS.",
    )
}

fn too_large(files: &Files, u: &url::Url) -> ApiError {
    refusal(
        ErrorCode::TooLarge,
        format!(
            "the file at {} is over the limit of {} bytes",
            host_of(u),
            files.limits.max_file_bytes
        ),
        "Split the document, or ask the operator to raise DOCREADER_MAX_FILE_BYTES.",
    )
}

/// One GET of a URL input.
async fn get(policy: &FetchPolicy, u: &url::Url) -> Result<hyper::Response<Body>, ApiError> {
    let req = hyper::Request::get(path_of(u))
        .header(hyper::header::ACCEPT, "*/*")
        .body(Full::default())
        .map_err(ApiError::internal)?;
    exchange(policy, u, req).await
}

/// A URL the policy allows (scheme and host; its addresses are checked when it is used):
/// a job's `callback_url` when the job is submitted.
pub fn check_target(policy: &FetchPolicy, url: &str) -> Result<url::Url, ApiError> {
    let u = parse(url)?;
    let host = u.host_str().unwrap_or("");
    if !policy.host_allowed(host) {
        return Err(host_refused(policy, host));
    }
    Ok(u)
}

/// POST `body` to `u` under the policy (no redirects followed), within its timeout: the
/// answer's status.
pub async fn post(
    policy: &FetchPolicy,
    u: &url::Url,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
) -> Result<hyper::StatusCode, ApiError> {
    let mut req = hyper::Request::post(path_of(u));
    for (k, v) in headers {
        req = req.header(k, v);
    }
    let req = req
        .body(Full::new(hyper::body::Bytes::from(body)))
        .map_err(ApiError::internal)?;
    let resp = tokio::time::timeout(policy.timeout, exchange(policy, u, req))
        .await
        .map_err(|_| {
            failed(format!(
                "{} did not answer within {} ms",
                host_of(u),
                policy.timeout.as_millis()
            ))
        })??;
    Ok(resp.status())
}

fn path_of(u: &url::Url) -> String {
    let path = &u[url::Position::BeforePath..url::Position::AfterQuery];
    if path.is_empty() {
        "/".into()
    } else {
        path.into()
    }
}

fn host_refused(policy: &FetchPolicy, host: &str) -> ApiError {
    refusal(
        ErrorCode::UrlHostNotAllowed,
        format!(
            "{host} is not on this service's list of hosts ({})",
            policy.setting
        ),
        &format!(
            "Use a listed host, or ask the operator to add the host to {}.",
            policy.setting
        ),
    )
}

/// One request to an address checked once: resolve, check every address, connect to the
/// first (no second lookup a rebinding DNS server could answer differently).
async fn exchange(
    policy: &FetchPolicy,
    u: &url::Url,
    mut req: hyper::Request<Full<hyper::body::Bytes>>,
) -> Result<hyper::Response<Body>, ApiError> {
    let host = u.host_str().unwrap_or("");
    if !policy.host_allowed(host) {
        return Err(host_refused(policy, host));
    }
    let port = u.port_or_known_default().unwrap_or(80);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| failed(format!("{host} does not resolve: {e}")))?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(failed(format!("{host} does not resolve")));
    }
    // Every address must pass: a name that also points inside is refused as a whole.
    if let Some(bad) = addrs.iter().find(|a| !policy.address_allowed(a.ip())) {
        return Err(refusal(
            ErrorCode::UrlAddressBlocked,
            format!("{host} resolves to {}, an internal address this service does not connect to", bad.ip()),
            "Use a public address, or ask the operator to allow the range in DOCREADER_URL_ALLOW_ADDRESSES.",
        ));
    }
    let tcp = tokio::net::TcpStream::connect(addrs[0])
        .await
        .map_err(|e| failed(format!("cannot connect to {host}: {e}")))?;
    let host_header = match u.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    let h = req.headers_mut();
    h.insert(
        hyper::header::HOST,
        host_header.parse().map_err(ApiError::internal)?,
    );
    h.insert(
        hyper::header::USER_AGENT,
        hyper::header::HeaderValue::from_static(concat!("docreader/", env!("CARGO_PKG_VERSION"))),
    );
    if u.scheme() == "https" {
        let name = rustls::pki_types::ServerName::try_from(bare.to_string())
            .map_err(|_| failed(format!("{host} is not a name TLS can check")))?;
        let tls = tokio_rustls::TlsConnector::from(tls_config())
            .connect(name, tcp)
            .await
            .map_err(|e| failed(format!("TLS with {host} failed: {e}")))?;
        send(hyper_util::rt::TokioIo::new(tls), req, host).await
    } else {
        send(hyper_util::rt::TokioIo::new(tcp), req, host).await
    }
}

async fn send<T>(
    io: T,
    req: hyper::Request<Full<hyper::body::Bytes>>,
    host: &str,
) -> Result<hyper::Response<Body>, ApiError>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| failed(format!("HTTP with {host} failed: {e}")))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender
        .send_request(req)
        .await
        .map_err(|e| failed(format!("{host} did not answer: {e}")))
}

fn tls_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: std::sync::OnceLock<Arc<rustls::ClientConfig>> = std::sync::OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            Arc::new(
                rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .expect("the ring provider supports TLS 1.2 and 1.3")
                    .with_root_certificates(roots)
                    .with_no_client_auth(),
            )
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_known() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            // Issue #41 item 13: IPv4-compatible IPv6 and 6to4 around internal IPv4.
            "::127.0.0.1",
            "::169.254.169.254",
            "::a00:1",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::",
        ] {
            assert!(internal(a.parse().unwrap()), "{a}");
        }
        for a in [
            "93.184.216.34",
            "2606:4700::1111",
            "8.8.8.8",
            "2002:5db8:d822::1",
        ] {
            assert!(!internal(a.parse().unwrap()), "{a}");
        }
    }

    #[test]
    fn file_names_come_decoded_from_the_last_segment() {
        let name = |u: &str| file_name(&url::Url::parse(u).unwrap());
        assert_eq!(name("https://x.test/docs/a%20b+c.pdf?x=1"), "a b+c.pdf");
        assert_eq!(name("https://x.test/"), "download");
    }

    #[test]
    fn hosts_and_ranges_are_matched() {
        let p = FetchPolicy::parse(
            Some("docs.example.com, *.corp.test"),
            Some("127.0.0.0/8"),
            1000,
        )
        .unwrap();
        assert!(p.host_allowed("DOCS.example.com"));
        assert!(p.host_allowed("a.b.corp.test"));
        assert!(!p.host_allowed("corp.test"));
        assert!(!p.host_allowed("docs.example.com.evil.test"));
        assert!(p.address_allowed("127.0.0.2".parse().unwrap()));
        assert!(!p.address_allowed("169.254.169.254".parse().unwrap()));
        assert!(p.address_allowed("8.8.8.8".parse().unwrap()));
        assert!(FetchPolicy::parse(None, Some("10.0.0.0/33"), 1).is_err());
    }
}

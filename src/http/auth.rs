//! Tenancy: with API keys configured every request carries `Authorization: Bearer <key>`
//! and sees only its tenant's files; without keys everything belongs to one local tenant.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use super::AppState;
use crate::error::{ApiError, ErrorCode};

/// The tenant of the calling client.
#[derive(Debug, Clone)]
pub struct Tenant(pub String);

/// Tenant used when no API keys are configured.
pub const LOCAL_TENANT: &str = "local";

/// Parse `key:tenant,key2:tenant2`.
pub fn parse_keys(spec: &str) -> Result<HashMap<String, String>, String> {
    let mut keys = HashMap::new();
    for (n, pair) in spec
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .enumerate()
    {
        // The entry itself is not said: without its `:` it is all key, a secret for logs.
        let (k, t) = pair.split_once(':').ok_or_else(|| {
            format!(
                "API key entry {} (counting key:tenant entries, not lines) is not key:tenant",
                n + 1
            )
        })?;
        if k.len() < 16 {
            return Err("every API key must be at least 16 characters".into());
        }
        if t.is_empty() {
            return Err("every API key needs a tenant name after ':'".into());
        }
        // One key naming two tenants would give its holder whichever tenant won the
        // parse: refused, whatever the order.
        if let Some(other) = keys.get(k).filter(|other: &&String| *other != t) {
            return Err(format!(
                "an API key is listed for two tenants ({other} and {t}); give each tenant its own key"
            ));
        }
        keys.insert(k.to_string(), t.to_string());
    }
    if keys.is_empty() {
        return Err("the API keys list no key:tenant pair".into());
    }
    Ok(keys)
}

/// The API keys (key → tenant), replaced whole when the keys file is read again (SIGHUP):
/// a request sees the old set or the new one, never a mix.
#[derive(Debug)]
pub struct Keys {
    current: RwLock<Arc<HashMap<String, String>>>,
    /// `DOCREADER_API_KEYS_FILE`, when the keys come from a file (they can be reloaded).
    file: Option<PathBuf>,
}

impl Keys {
    pub fn new(keys: HashMap<String, String>, file: Option<PathBuf>) -> Self {
        Self {
            current: RwLock::new(Arc::new(keys)),
            file,
        }
    }

    fn now(&self) -> Arc<HashMap<String, String>> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The tenant a key belongs to (compared in constant time, whichever key it is).
    pub fn tenant_of(&self, given: &str) -> Option<String> {
        let keys = self.now();
        let mut found = None;
        for (key, tenant) in keys.iter() {
            if constant_time_eq(key.as_bytes(), given.as_bytes()) {
                found = Some(tenant.clone());
            }
        }
        found
    }

    /// How many tenants the keys name now.
    pub fn tenants(&self) -> usize {
        self.now()
            .values()
            .collect::<std::collections::HashSet<_>>()
            .len()
    }

    /// Read the keys file again and use what it lists from now on. A file that cannot be
    /// read, lists no key or is malformed changes nothing (the service never falls back to
    /// serving without keys): the error says why. Keys given in `DOCREADER_API_KEYS` have
    /// no file to read again.
    pub fn reload(&self) -> Result<usize, String> {
        let Some(path) = &self.file else {
            return Err(
                "the API keys come from DOCREADER_API_KEYS, which cannot change while \
                        the service runs; give them in DOCREADER_API_KEYS_FILE to reload them"
                    .into(),
            );
        };
        let spec = crate::config::read_keys_file(path)?;
        if spec.trim().is_empty() {
            return Err(format!(
                "the API keys file {} lists no key now; the keys in use are kept",
                path.display()
            ));
        }
        let keys = parse_keys(&spec)?;
        let n = keys.len();
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(keys);
        Ok(n)
    }
}

/// SIGHUP, listened for from the start of `serve` (before the database is opened): from
/// then on it never ends the process, as its default action would.
#[cfg(unix)]
pub fn hangups() -> Option<tokio::signal::unix::Signal> {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::hangup()) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!("cannot listen for SIGHUP ({e}): API keys are read at start only");
            None
        }
    }
}

/// Reload the keys file on every SIGHUP, for as long as the process runs (each outcome is
/// logged: the number of keys now in use, or why the old ones are kept; without keys, that
/// there are none to reload).
#[cfg(unix)]
pub fn reload_on_hangup(mut hangups: tokio::signal::unix::Signal, keys: Option<Arc<Keys>>) {
    tokio::spawn(async move {
        while hangups.recv().await.is_some() {
            match keys.as_ref().map(|k| k.reload()) {
                Some(Ok(n)) => tracing::info!(keys = n, "SIGHUP: API keys reloaded"),
                Some(Err(e)) => tracing::error!("SIGHUP: API keys not reloaded: {e}"),
                None => {
                    tracing::info!("SIGHUP: this service runs without API keys; nothing to reload")
                }
            }
        }
    });
}

impl FromRequestParts<AppState> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let Some(keys) = &state.api_keys else {
            return Ok(Tenant(LOCAL_TENANT.to_string()));
        };
        let given = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim);
        match given {
            None => Err(ApiError::new(
                ErrorCode::Unauthorized,
                "this service requires an API key",
            )),
            Some(k) => match keys.tenant_of(k) {
                Some(tenant) => Ok(Tenant(tenant)),
                None => Err(ApiError::new(ErrorCode::Unauthorized, "unknown API key")),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_key_for_two_tenants_is_refused() {
        let k = "0123456789abcdef0123";
        let err = super::parse_keys(&format!("{k}:alice,{k}:bob")).unwrap_err();
        assert!(err.contains("two tenants") && !err.contains(k), "{err}");
        // The same pair twice is harmless.
        assert_eq!(
            super::parse_keys(&format!("{k}:alice,{k}:alice"))
                .unwrap()
                .len(),
            1
        );
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

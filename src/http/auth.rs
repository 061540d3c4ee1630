//! Tenancy: with API keys configured every request carries `Authorization: Bearer <key>`
//! and sees only its tenant's files; without keys everything belongs to one local tenant.

use std::collections::HashMap;

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
    for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, t) = pair.split_once(':').ok_or_else(|| {
            format!(
                "DOCREADER_API_KEYS entry {:?} is not key:tenant",
                pair.split(':').next().unwrap_or("")
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
        return Err("DOCREADER_API_KEYS is set but lists no key:tenant pair".into());
    }
    Ok(keys)
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
            Some(k) => match keys
                .iter()
                .find(|(key, _)| constant_time_eq(key.as_bytes(), k.as_bytes()))
            {
                Some((_, tenant)) => Ok(Tenant(tenant.clone())),
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

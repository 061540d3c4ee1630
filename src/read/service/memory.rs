//! The document memory: OCR already done for these bytes comes back, fresh OCR is kept
//! (under a lock per bytes, so two reads of one scan recognise it once).

use super::*;

impl ReadService {
    /// Keep what this read recognised; count what it reused.
    pub(super) async fn remember(
        &self,
        st: &Storage,
        tenant: &str,
        sha256: &str,
        variant: &str,
        env: &Envelope,
    ) {
        if let Some(n) = env.report.ocr_pages_from_memory {
            self.metrics.cache_hits.fetch_add(n, Ordering::Relaxed);
        }
        if env.fresh_ocr.is_empty() {
            return;
        }
        // Under the lock a delete holds: written only while an upload of these bytes still
        // exists for the tenant, so a file deleted during its read leaves no memory behind.
        let Ok(lock) = st.files.lock_bytes(sha256).await else {
            tracing::warn!("document memory not written: the database is unavailable");
            return;
        };
        self.remember_locked(st, tenant, sha256, variant, env).await;
        lock.release().await;
    }

    pub(super) async fn remember_locked(
        &self,
        st: &Storage,
        tenant: &str,
        sha256: &str,
        variant: &str,
        env: &Envelope,
    ) {
        match crate::db::tenant_refs(&st.files.db, tenant, sha256).await {
            Ok(n) if n > 0 => {}
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(error = %e, "document memory not written");
                return;
            }
        }
        let _turn = st.files.write_turn().await;
        if let Some(keys) = &st.files.memory_keys {
            keys.add(sha256);
        }
        for (page, lines) in &env.fresh_ocr {
            let Ok(json) = serde_json::to_string(lines) else {
                continue;
            };
            let put = crate::db::memory_put(
                &st.files.db,
                tenant,
                sha256,
                variant,
                *page as i64,
                &json,
                self.limits.document_memory_bytes as i64,
            );
            if let Err(e) = put.await {
                tracing::warn!(error = %e, "document memory not written");
            }
        }
    }
}

/// OCR lines the document memory holds for a tenant's bytes.
pub(super) async fn remembered(
    st: &Storage,
    tenant: &str,
    sha256: &str,
    variant: &str,
) -> HashMap<u64, Vec<OcrLine>> {
    if let Some(keys) = &st.files.memory_keys {
        if !keys.may_hold(sha256) {
            return HashMap::new();
        }
    }
    let rows = match crate::db::memory_get(&st.files.db, tenant, sha256, variant).await {
        Ok(rows) => rows,
        Err(e) => {
            tracing::warn!(error = %e, "document memory unavailable");
            return Default::default();
        }
    };
    rows.into_iter()
        .filter_map(|(page, json)| Some((page as u64, serde_json::from_str(&json).ok()?)))
        .collect()
}

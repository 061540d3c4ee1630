//! `/healthz` (the process answers) and `/readyz` (the database and data dir work).

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::responses::error_responses;
use super::AppState;
use crate::error::{ApiError, ErrorCode};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

/// Liveness: the process is up.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, description = "alive", body = Object)))]
pub async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}))
}

error_responses!(
    /// The errors `GET /readyz` answers with.
    ReadyErrors:
    Unavailable => "not ready (the database, the bucket or the data dir does not answer; the message says which)",
);

/// Readiness: the database answers and the upload directory is writable. `engines` says
/// which native parts (PDFium, OCR) are installed; reads that need a missing one fail alone.
#[utoipa::path(get, path = "/readyz", tag = "health", responses(
    (status = 200, description = "ready", body = Object),
    ReadyErrors))]
pub async fn readyz(State(st): State<AppState>) -> Result<Json<Value>, ApiError> {
    let unavailable =
        |what: &str| ApiError::new(ErrorCode::Unavailable, format!("not ready: {what}"));
    st.db.ping().await.map_err(|_| unavailable("database"))?;
    if let Some(r) = st.files.store.remote() {
        r.ping().await.map_err(|_| unavailable("blob store"))?;
    }
    let probe = st.data_dir.join("tmp").join(".ready");
    tokio::fs::write(&probe, b"")
        .await
        .map_err(|_| unavailable("data directory not writable"))?;
    let _ = tokio::fs::remove_file(&probe).await;
    // Native parts are optional: the service is ready without them, and says which work.
    let pdf = tokio::task::spawn_blocking(crate::extract::pdf::available)
        .await
        .unwrap_or(false);
    let ocr = crate::ocr::local_engine().map(|e| e.name());
    // Tesseract's installed languages (empty when it is missing): what `ocr_lang` can name.
    let tesseract = tokio::task::spawn_blocking(crate::ocr::tesseract::installed)
        .await
        .unwrap_or_default();
    Ok(Json(
        json!({"status": "ok", "engines": {"pdf": pdf, "ocr": ocr, "tesseract": tesseract}}),
    ))
}

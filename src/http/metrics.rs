//! `GET /metrics`: the service counters (`crate::metrics`) in the Prometheus text format.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use super::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/metrics", get(metrics))
}

/// Prometheus metrics (text exposition format).
/// With API keys configured it needs one, unless the service runs with `--metrics-public`.
#[utoipa::path(get, path = "/metrics", tag = "health",
    responses((status = 200, description = "Prometheus text format", body = String),
        (status = 401, description = "unauthorized", body = crate::error::ErrorBody)),
    security((), ("bearer" = [])))]
pub async fn metrics(
    State(st): State<AppState>,
    auth: Result<super::auth::Tenant, crate::error::ApiError>,
) -> Result<impl IntoResponse, crate::error::ApiError> {
    // With keys configured, counters are for key holders unless the operator opens them.
    if !st.metrics_public {
        auth?;
    }
    let out = st.metrics.render(st.reader.executor.restarts());
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out))
}

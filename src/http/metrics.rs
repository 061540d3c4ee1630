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
#[utoipa::path(get, path = "/metrics", tag = "health", responses((status = 200, description = "Prometheus text format", body = String)))]
pub async fn metrics(State(st): State<AppState>) -> impl IntoResponse {
    let out = st.metrics.render(st.reader.executor.restarts());
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out)
}

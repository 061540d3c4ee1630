//! `GET /metrics`: the service counters (`crate::metrics`) in the Prometheus text format.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use super::responses::error_responses;
use super::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/metrics", get(metrics))
}

error_responses!(
    /// The errors `GET /metrics` answers with.
    MetricsErrors:
    Unauthorized,
);

/// Prometheus metrics (text exposition format).
/// With API keys configured it needs one, unless the service runs with `--metrics-public`.
#[utoipa::path(get, path = "/metrics", tag = "health",
    responses((status = 200, description = "Prometheus text format", body = String),
        MetricsErrors),
    security((), ("bearer" = [])))]
pub async fn metrics(
    State(st): State<AppState>,
    auth: Result<super::auth::Tenant, crate::error::ApiError>,
) -> Result<impl IntoResponse, crate::error::ApiError> {
    // With keys configured, counters are for key holders unless the operator opens them.
    if !st.metrics_public {
        auth?;
    }
    let jobs = st.jobs.depth().await.ok();
    // Off the runtime: rendering reads /proc (every process's stat, for the workers' memory).
    let (metrics, restarts) = (st.metrics.clone(), st.reader.executor.restarts());
    let out = tokio::task::spawn_blocking(move || metrics.render(restarts, jobs))
        .await
        .map_err(crate::error::ApiError::internal)?;
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out))
}

/// The matched route's template, handed outward on the response (the request's
/// extensions are gone by the time the outer layer sees the status).
#[derive(Clone)]
pub struct Route(pub axum::extract::MatchedPath);

/// Inside the router (after routing): note which route answered.
pub async fn note_route(
    route: Option<axum::extract::MatchedPath>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let mut res = next.run(req).await;
    if let Some(r) = route {
        res.extensions_mut().insert(Route(r));
    }
    res
}

/// Outside every other layer but the request id: count each answer by method, route and
/// status, the guards' refusals, CORS preflights and panics' 500s included (`note_route`
/// wraps them all).
pub async fn count(
    State(st): State<AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    // Methods outside HTTP's own set are one label value: any token is a method to the
    // server, and a label value per token would let any client grow the metrics.
    let method: &'static str = match req.method().as_str() {
        "GET" => "GET",
        "HEAD" => "HEAD",
        "POST" => "POST",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "PATCH" => "PATCH",
        "OPTIONS" => "OPTIONS",
        _ => "other",
    };
    let res = next.run(req).await;
    let route = res
        .extensions()
        .get::<Route>()
        .map_or("unmatched", |r| r.0.as_str());
    st.metrics
        .request_done(method, route, res.status().as_u16());
    res
}

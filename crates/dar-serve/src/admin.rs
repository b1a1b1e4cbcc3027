//! The admin port: `GET /health` (JSON: each table's version and refresh
//! lag) and `GET /metrics` (Prometheus text), with axum.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::Router;
use axum::extract::State as Shared;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::service::State;

/// The admin routes over `state`.
pub(crate) fn router(state: Arc<State>) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .with_state(state)
}

async fn health(Shared(state): Shared<Arc<State>>) -> impl IntoResponse {
    let mut body = String::from("{\"status\":\"ok\",\"tables\":[");
    for (i, table) in state.tables.iter().enumerate() {
        let _ = write!(
            body,
            "{}{{\"name\":\"{}\",\"version\":{},\"refresh_lag_seconds\":{:.3}}}",
            if i == 0 { "" } else { "," },
            table.name,
            table.version(),
            table.lag().as_secs_f64()
        );
    }
    body.push_str("]}\n");
    ([(header::CONTENT_TYPE, "application/json")], body)
}

async fn metrics(Shared(state): Shared<Arc<State>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(&state.tables, &state.admission),
    )
}

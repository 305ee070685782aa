//! The operator's HTTP endpoint (`METRICS_ADDR`, `run` only): Prometheus metrics at
//! `/metrics`, a health check at `/healthz`, and the status page at `/` with its data at
//! `/status.json` (`page.rs`, `chart.rs`, `cache.rs`; the data is [`crate::journal`]'s), on
//! one small HTTP/1 listener. Every path is read-only.
//!
//! The exporter crate (`metrics-exporter-prometheus`) only *renders* here: its own listener
//! (feature `http-listener`) answers every path with the metrics, so it cannot also serve a
//! health check. One hyper listener serving both keeps the operator to one port.
//!
//! Metric names are the constants in [`names`]; every counter is cumulative since start.

pub mod cache;
pub mod chart;
pub mod page;

use crate::app::App;
use cache::PageCache;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Metric names (see [`crate::metric_names`]).
pub use crate::metric_names as names;

/// Buckets of [`names::CYCLE_DURATION`], seconds: a cycle is a few page fetches and posts, so
/// from tens of milliseconds to the two-minute mark where fetch and post timeouts pile up.
pub const CYCLE_DURATION_BUCKETS_SECS: [f64; 10] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0];

/// The endpoint could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    /// The global metrics recorder could not be installed (e.g. one is already installed).
    #[error("cannot install the Prometheus recorder: {0}")]
    Recorder(#[from] metrics_exporter_prometheus::BuildError),
}

/// Installs the global Prometheus recorder and describes every metric. Call once per process.
///
/// # Errors
/// [`StatusError::Recorder`] when a recorder is already installed.
pub fn install_recorder() -> Result<PrometheusHandle, StatusError> {
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(names::CYCLE_DURATION.to_string()),
            &CYCLE_DURATION_BUCKETS_SECS,
        )?
        .install_recorder()?;
    describe();
    Ok(handle)
}

fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
    describe_counter!(names::POLLS, "Poll cycles run.");
    describe_counter!(names::SOURCE_READS, "Sources read and parsed, by source.");
    describe_counter!(names::SOURCE_ERRORS, "Source reads that failed, by source.");
    describe_counter!(
        names::SOURCE_BACKOFF_SKIPS,
        "Cycles a failing source was skipped, by source."
    );
    describe_counter!(names::MATCHES_SEEN, "Distinct matches seen, summed over cycles.");
    describe_gauge!(names::MATCHES_LAST_CYCLE, "Distinct matches seen in the last cycle.");
    describe_counter!(names::CLAIMS, "Claim outcomes, by result: won, lost (another worker won the SET NX race), held (already claimed when the cycle looked it up; no claim attempted).");
    describe_counter!(names::POSTS, "Posts by outcome (posted, failed, deferred, would_post).");
    describe_gauge!(names::STUCK_CLAIMS, "Stuck claims seen in the last cycle.");
    describe_gauge!(
        names::MATCHES_WAITING,
        "Matches the last cycle left unclaimed until their announcement window (ANNOUNCE_BEFORE) opens."
    );
    describe_counter!(names::STORE_ERRORS, "Store errors.");
    describe_histogram!(names::CYCLE_DURATION, Unit::Seconds, "Duration of one poll cycle.");
}

/// Serves `/metrics`, `/healthz` and, when `page`, `/` and `/status.json` on `listener` until
/// `cancel` fires. `/healthz` answers 200 `ok`, or 503 with the reasons (see [`App::health`]);
/// the page and its JSON come from [`App::snapshot`], cached for [`cache::CACHE_FOR`]; without
/// `page` (`STATUS_PAGE`) they answer 404 saying how to turn them on.
pub async fn serve(
    listener: TcpListener,
    metrics: PrometheusHandle,
    app: Arc<App>,
    page: bool,
    cancel: CancellationToken,
) {
    let pages = Arc::new(page.then(PageCache::default));
    loop {
        let stream = tokio::select! {
            _ = cancel.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!(error.message = %e, "status listener: accept failed");
                    continue;
                }
            },
        };
        let (metrics, app, pages) = (metrics.clone(), app.clone(), pages.clone());
        let service = hyper::service::service_fn(move |req: Request<Incoming>| {
            let (metrics, app, pages) = (metrics.clone(), app.clone(), pages.clone());
            async move { Ok::<_, Infallible>(answer(&req, &metrics, &app, &pages).await) }
        });
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await
            {
                tracing::debug!(error.message = %e, "status connection ended with an error");
            }
        });
    }
}

async fn answer(
    req: &Request<Incoming>,
    metrics: &PrometheusHandle,
    app: &App,
    pages: &Option<PageCache>,
) -> Response<Full<Bytes>> {
    if !matches!(*req.method(), hyper::Method::GET | hyper::Method::HEAD) {
        return respond(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "read-only: GET only\n".into(),
            false,
        );
    }
    let path = req.uri().path();
    if let "/" | "/status.json" = path {
        let Some(pages) = pages else {
            return respond(
                StatusCode::NOT_FOUND,
                "text/plain",
                "the status page is off (STATUS_PAGE=off, or METRICS_ADDR is not a loopback address and STATUS_PAGE is auto); see the README, Status page\n".into(),
                false,
            );
        };
        let rendered = pages.get(app).await;
        let (body, content_type) = if path == "/" {
            (&rendered.html, "text/html; charset=utf-8")
        } else {
            (&rendered.json, "application/json")
        };
        return match body {
            Ok(body) => respond(StatusCode::OK, content_type, body.clone(), true),
            Err(e) => {
                tracing::error!(error.message = %e, "status page not rendered");
                respond(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "text/plain",
                    "status page not rendered; see the log\n".into(),
                    true,
                )
            }
        };
    }
    let (status, content_type, body) = match path {
        "/metrics" => {
            // The exporter drains histogram samples on upkeep; without its own listener
            // running upkeep for us, do it on each scrape.
            metrics.run_upkeep();
            (StatusCode::OK, "text/plain; version=0.0.4", metrics.render())
        }
        "/healthz" => {
            let problems = app.health().await;
            if problems.is_empty() {
                (StatusCode::OK, "text/plain", "ok\n".to_string())
            } else {
                tracing::warn!(problems = ?problems, "health check failed");
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "text/plain",
                    format!("unhealthy: {}\n", problems.join("; ")),
                )
            }
        }
        _ => (
            StatusCode::NOT_FOUND,
            "text/plain",
            "not found; try /, /status.json, /metrics or /healthz\n".into(),
        ),
    };
    respond(status, content_type, body, false)
}

/// An answer with `body`; with the page's safety headers (see [`page::safety_headers`]) when
/// `page`, and `nosniff` on every answer.
fn respond(status: StatusCode, content_type: &str, body: String, page: bool) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        headers.insert(hyper::header::CONTENT_TYPE, v);
    }
    headers.insert(
        hyper::header::X_CONTENT_TYPE_OPTIONS,
        hyper::header::HeaderValue::from_static("nosniff"),
    );
    if page {
        for (name, value) in page::safety_headers() {
            if let Ok(v) = hyper::header::HeaderValue::from_str(value) {
                headers.insert(name, v);
            }
        }
    }
    response
}

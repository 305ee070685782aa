//! `run`: the poll loop and, with `METRICS_ADDR`, the status endpoint, until a signal (or the
//! cycle limit, or a refusal to post) stops them.

use super::exit::{Exit, Failure};
use super::signal::{log_grace_ran_out, log_stopping, wait_for_signal};
use super::startup::log_startup;
use cricket_announcer::announcer::Output;
use cricket_announcer::app::App;
use cricket_announcer::config::Config;
use cricket_announcer::status;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// `run`: the poll loop and, with METRICS_ADDR, the status endpoint, as tracked tasks. A
/// signal (or the cycle limit) cancels both; the loop stops between matches, so a post in
/// flight finishes and records its state, within SHUTDOWN_GRACE_SECS. `init_store` initialises
/// a store never initialised; `cycles` stops after that many cycles.
///
/// # Errors
/// A [`Failure`] when the bot cannot be built, the store cannot be initialised, or the status
/// endpoint cannot listen.
pub(super) async fn run(
    config: &Config,
    stdout: Output,
    init_store: bool,
    cycles: Option<u64>,
) -> Result<Exit, Failure> {
    log_startup("run", config);
    let app = Arc::new(App::build(config, stdout).await?);
    if init_store && !config.dry_run() {
        app.init_store().await?;
    }
    let cancel = CancellationToken::new();
    let tracker = TaskTracker::new();
    if let Some(addr) = config.service.metrics_addr {
        let metrics = status::install_recorder()?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Failure::from(e).context(format!("cannot listen on METRICS_ADDR={addr}")))?;
        let page = config.service.status_page;
        let shown = listener.local_addr().unwrap_or(addr);
        if page {
            tracing::info!(addr = %shown, "serving /metrics, /healthz and the status page at /");
        } else {
            tracing::info!(addr = %shown, "serving /metrics and /healthz; the status page is off (STATUS_PAGE, on by itself only for a loopback METRICS_ADDR)");
        }
        if page && !addr.ip().is_loopback() {
            tracing::warn!(addr = %addr, "STATUS_PAGE=on on an address that is not loopback: anyone who reaches it can read the status page (what was posted where, errors); put a reverse proxy with authentication in front (README, Status page)");
        }
        tracker.spawn(status::serve(listener, metrics, app.clone(), page, cancel.clone()));
    }
    let polling = tracker.spawn({
        let (app, cancel) = (app.clone(), cancel.clone());
        async move {
            let end = app.run_until_cancelled(cancel.clone(), cycles).await;
            // The cycle limit was reached, a signal came, or posting was refused: stop the
            // status endpoint too.
            cancel.cancel();
            end
        }
    });
    tracker.close();
    tokio::select! {
        _ = wait_for_signal() => {
            log_stopping(config.service.shutdown_grace);
            cancel.cancel();
        }
        _ = cancel.cancelled() => {}
    }
    if tokio::time::timeout(config.service.shutdown_grace, tracker.wait())
        .await
        .is_err()
    {
        log_grace_ran_out(config.service.shutdown_grace);
        return Ok(Exit::Incomplete);
    }
    let end = polling.await.unwrap_or_default();
    if let Some(why) = &end.refused {
        // Said once more as the last line: the cycle's own error may be far up the log.
        tracing::error!(reason = %why, "stopped: this bot may not post; exiting");
        return Ok(Exit::NotPosting);
    }
    // A bounded run (`--cycles N`) ends as a backfill does: 4 when a channel halted (while
    // the others went on), else 5 when a post failed; a scheduler running it must see it. A
    // service stopped by a signal had its failures logged as they came.
    if cycles.is_some() && app.any_halted() {
        tracing::error!("stopped: a channel may not post (see its error above)");
        return Ok(Exit::NotPosting);
    }
    if cycles.is_some() && end.failed_posts > 0 {
        tracing::warn!(
            failed_posts = end.failed_posts,
            "shut down; some posts failed or their outcome is unknown"
        );
        return Ok(Exit::PostsFailed);
    }
    tracing::info!("shut down cleanly");
    Ok(Exit::Done)
}

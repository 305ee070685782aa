//! Stopping on SIGINT or SIGTERM: `run` and `backfill` stop between matches, never inside one,
//! and wait for the post in flight within `SHUTDOWN_GRACE_SECS`.

use std::time::Duration;

/// Returns on SIGINT or SIGTERM.
pub(super) async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error.message = %e, "cannot listen for SIGTERM; only Ctrl-C stops the bot");
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

/// Says that a signal came: the current match finishes (within `grace`), then the command stops.
pub(super) fn log_stopping(grace: Duration) {
    tracing::info!(
        grace_secs = grace.as_secs(),
        "signal received; finishing the current match, then stopping"
    );
}

/// Says that `grace` ran out with work in flight, and what that leaves behind.
pub(super) fn log_grace_ran_out(grace: Duration) {
    tracing::error!(
        grace_secs = grace.as_secs(),
        "work still in flight when SHUTDOWN_GRACE_SECS ran out; exiting anyway: a claim being posted stays `claimed` and will show as stuck (check `claims list --state stuck`)"
    );
}

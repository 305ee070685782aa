//! `backfill`: one pass over every source, then its summary; a signal stops it as it stops
//! `run`, between matches.

use super::exit::{Exit, Failure};
use super::output::print_summary;
use super::signal::{log_grace_ran_out, log_stopping, wait_for_signal};
use super::startup::log_startup;
use cricket_announcer::announcer::Output;
use cricket_announcer::app::{App, StoreReadiness, Summary};
use cricket_announcer::config::Config;
use tokio_util::sync::CancellationToken;

/// `backfill`: one pass, then the summary line; `init_store` initialises a store never
/// initialised. The exit code says the worst of: posting refused (4), a source or the store
/// that failed (1), a post that failed (5).
///
/// # Errors
/// A [`Failure`] when the bot cannot be built or the store cannot be initialised.
pub(super) async fn backfill(config: &Config, stdout: Output, init_store: bool) -> Result<Exit, Failure> {
    log_startup("backfill", config);
    let app = App::build(config, stdout).await?;
    if init_store && !config.dry_run() {
        app.init_store().await?;
    }
    // A signal stops the pass as it stops `run`: between matches, never inside one.
    let cancel = CancellationToken::new();
    let pass = app.backfill_until_cancelled(&cancel);
    tokio::pin!(pass);
    let (summary, ok) = tokio::select! {
        done = &mut pass => done,
        _ = wait_for_signal() => {
            log_stopping(config.service.shutdown_grace);
            cancel.cancel();
            match tokio::time::timeout(config.service.shutdown_grace, &mut pass).await {
                Ok(done) => done,
                Err(_) => {
                    log_grace_ran_out(config.service.shutdown_grace);
                    return Ok(Exit::Incomplete);
                }
            }
        }
    };
    if cancel.is_cancelled() {
        tracing::info!("stopped by the signal; the matches not reached are left for the next pass");
    }
    print_summary("backfill", &summary, ok, config);
    let refused = refused_to_post(&app, &summary, config).await;
    Ok(Exit::first_of(
        [
            refused.then_some(Exit::NotPosting),
            (!ok).then_some(Exit::Incomplete),
            (summary.failed > 0).then_some(Exit::PostsFailed),
        ]
        .into_iter()
        .flatten(),
    ))
}

/// Whether this bot refused to post: posting halted, or (outside dry run) the store is not
/// initialised or lost its data. A store that did not answer is not a refusal: it may answer
/// next time.
async fn refused_to_post(app: &App, summary: &Summary, config: &Config) -> bool {
    // A channel that halted (credentials, a deleted webhook) needs the operator, even while the
    // others post.
    app.any_halted()
        || (!config.dry_run()
            && summary.refused.is_some()
            && matches!(
                app.readiness().await,
                Ok(StoreReadiness::NotInitialised | StoreReadiness::Wiped)
            ))
}

//! `seed`: record every current match without posting and mark the store initialised; with
//! `--dry-run`, print what it would record and write nothing.

use super::exit::{Exit, Failure};
use super::output::{print_summary, write_stdout};
use super::startup::{known_channel, log_startup};
use cricket_announcer::announcer::Output;
use cricket_announcer::app::{App, Summary};
use cricket_announcer::claim::Marker;
use cricket_announcer::config::Config;
use cricket_announcer::text::escaped;

/// `seed`, on every channel or only on `channel`; in a dry run, [`App::seed`] prints what it
/// would record, and this its summary line.
///
/// # Errors
/// A usage [`Failure`] for a channel that does not exist; a [`Failure`] when the bot cannot be
/// built or the store cannot answer.
pub(super) async fn seed(config: &Config, stdout: Output, channel: Option<&str>) -> Result<Exit, Failure> {
    known_channel(config, channel)?;
    log_startup("seed", config);
    let app = App::build(config, stdout).await?;
    let summary = app.seed(channel).await?;
    let ok = summary.sources_failed == 0 && summary.refused.is_none();
    if config.dry_run() {
        // Read after: a dry run wrote nothing, so it is the marker the seed found.
        let marker = app.store().marker().await?;
        write_stdout(&dry_run_summary(&summary, ok, marker.as_ref(), config.json()))?;
    } else {
        print_summary("seed", &summary, ok, config);
    }
    Ok(Exit::done_if(ok))
}

/// The last line of `seed --dry-run`: the counts (with each channel's, for a channels file) and
/// whether the store would be marked initialised (`marker`: the marker already there).
fn dry_run_summary(summary: &Summary, ok: bool, marker: Option<&Marker>, json: bool) -> String {
    if json {
        let line =
            serde_json::json!({ "summary": summary, "ok": ok, "dry_run": true, "initialised": marker.is_some() });
        return format!("{line}\n");
    }
    let channels: String = summary
        .channels
        .iter()
        .map(|c| {
            format!(
                "; {}: would record {}, already claimed {}",
                c.channel, c.seeded, c.skipped
            )
        })
        .collect();
    let then = match (marker, ok) {
        (Some(m), _) => format!("the store is already initialised (by {}, {})", escaped(&m.by), m.how),
        (None, true) => "then it would mark the store initialised".into(),
        (None, false) => "a source failed, so it would not mark the store initialised".into(),
    };
    format!(
        "seed (dry run, nothing written): sources read {}, failed {}; matches seen {}, not announceable {}; would record {}, already claimed {}{channels}; {then}\n",
        summary.sources_read,
        summary.sources_failed,
        summary.matches_seen,
        summary.not_announceable,
        summary.seeded,
        summary.skipped
    )
}

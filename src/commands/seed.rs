//! `seed`: record every current match without posting and mark the store initialised; with
//! `--dry-run`, print what it would record and write nothing.

use super::exit::{Exit, Failure};
use super::output::{print_summary, write_stdout};
use super::startup::{known_channel, log_startup};
use cricket_announcer::announcer::Output;
use cricket_announcer::app::{App, Summary};
use cricket_announcer::config::Config;
use cricket_announcer::text::escaped;

/// `seed`, on every channel or only on `channel`.
///
/// # Errors
/// A usage [`Failure`] for a channel that does not exist; a [`Failure`] when the bot cannot be
/// built or the store cannot answer.
pub async fn seed(config: &Config, stdout: Output, channel: Option<&str>) -> Result<Exit, Failure> {
    known_channel(config, channel)?;
    log_startup("seed", config);
    let app = App::build(config, stdout).await?;
    if config.dry_run() {
        return seed_dry_run(&app, config).await;
    }
    let summary = app.seed(channel).await?;
    let ok = summary.sources_failed == 0;
    print_summary("seed", &summary, ok, config);
    Ok(Exit::done_if(ok))
}

/// `seed --dry-run`: what `seed` would record, read from the sources and the store, writing
/// nothing.
async fn seed_dry_run(app: &App, config: &Config) -> Result<Exit, Failure> {
    let mut summary = Summary::default();
    let sightings = app.read_sources(&mut summary).await;
    let store = app.announcer().store();
    let mut out = String::new();
    for s in &sightings {
        if s.m.has_placeholder_team() {
            summary.not_announceable += 1;
            continue;
        }
        let title = s.m.claim_title();
        // Held through any identity, as the claim step would find it.
        let found = store.find(&s.ids).await?;
        let key = found.as_ref().map_or(&s.ids.key, |(k, _, _)| k).clone();
        let held = found.map(|(_, c, _)| c);
        if held.is_some() {
            summary.skipped += 1;
        } else {
            summary.seeded += 1;
        }
        let line = match (&held, config.json()) {
            (None, true) => {
                serde_json::json!({ "would_record": key, "title": title, "aliases": s.ids.ids }).to_string()
            }
            (Some(c), true) => {
                serde_json::json!({ "already_claimed": key, "title": title, "state": c.state, "owner": c.owner })
                    .to_string()
            }
            (None, false) => format!("would record {key}  {}", escaped(&title)),
            (Some(c), false) => format!(
                "already claimed {key}  {} ({}, owner {})",
                escaped(&title),
                c.state,
                escaped(&c.owner)
            ),
        };
        out.push_str(&line);
        out.push('\n');
    }
    let marker = store.marker().await?;
    let ok = summary.sources_failed == 0;
    if config.json() {
        let line =
            serde_json::json!({ "summary": summary, "ok": ok, "dry_run": true, "initialised": marker.is_some() });
        out.push_str(&format!("{line}\n"));
    } else {
        let then = match (&marker, ok) {
            (Some(m), _) => format!("the store is already initialised (by {}, {})", escaped(&m.by), m.how),
            (None, true) => "then it would mark the store initialised".into(),
            (None, false) => "a source failed, so it would not mark the store initialised".into(),
        };
        out.push_str(&format!(
            "seed (dry run, nothing written): sources read {}, failed {}; matches seen {}, not announceable {}; would record {}, already claimed {}; {then}\n",
            summary.sources_read,
            summary.sources_failed,
            summary.matches_seen,
            summary.not_announceable,
            summary.seeded,
            summary.skipped
        ));
    }
    write_stdout(&out)?;
    Ok(Exit::done_if(ok))
}

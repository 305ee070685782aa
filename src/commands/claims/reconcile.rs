//! `claims reconcile`: settle each `unknown` or stuck claim with its platform, on every channel
//! or the named one.

use super::super::exit::{Exit, Failure};
use super::super::output::{store_label, write_stdout};
use cricket_announcer::app::channel_claims;
use cricket_announcer::claim::ClaimStore;
use cricket_announcer::config::Config;
use cricket_announcer::event::Event;
use cricket_announcer::reconcile::{Decision, Settled};
use cricket_announcer::text::escaped;
use std::time::Duration;

/// `claims reconcile`: the named channel, or every channel, each the way its platform can be
/// asked (see [`cricket_announcer::reconcile::reconcile_all`]); exit 1 when a claim could not
/// be asked.
///
/// # Errors
/// A usage [`Failure`] in a dry run; a [`Failure`] when a channel's client cannot be built, the
/// store cannot answer or the report cannot be written.
pub(super) async fn reconcile(
    config: &Config,
    base: &ClaimStore,
    channel: Option<&str>,
    stuck_after: Duration,
) -> Result<Exit, Failure> {
    if config.dry_run() {
        return Err(Failure::usage(
            "claims reconcile records what the platform says; it has no dry run (use `claims list --state unknown` to look)",
        ));
    }
    let channels = &config.posting.channels;
    // Every event's claims of every channel named, each with the sink as that event posts (its
    // dedupe keys): read in one pass over the deployment's unsettled claims.
    let mut asked = Vec::new();
    for c in channels
        .channels()
        .iter()
        .filter(|c| channel.is_none_or(|n| n == c.name))
    {
        let sink = c.sink(
            config.posting.post_timeout,
            cricket_announcer::source::fetch::CONNECT_TIMEOUT,
        )?;
        let store = channel_claims(base, channels, &c.name);
        for event in Event::ALL {
            asked.push((store.for_event(event), sink.for_event(event)));
        }
    }
    let pairs: Vec<_> = asked.iter().map(|(store, sink)| (store, sink)).collect();
    let decisions: Vec<Decision> = cricket_announcer::reconcile::reconcile_all(base, &pairs, stuck_after)
        .await?
        .into_iter()
        .flatten()
        .collect();
    print_decisions(&decisions, config.json(), &store_label(config))?;
    let asked_all = decisions.iter().all(|d| !matches!(d.outcome, Settled::NotAsked { .. }));
    Ok(Exit::done_if(asked_all))
}

/// `claims reconcile`'s report: one line (or JSON object) per claim it looked at.
fn print_decisions(decisions: &[Decision], json: bool, store: &str) -> std::io::Result<()> {
    if decisions.is_empty() && !json {
        return write_stdout(&format!("no unknown or stuck claims (store {store})\n"));
    }
    let mut out = String::new();
    for d in decisions {
        let (result, detail) = match &d.outcome {
            Settled::Posted { id, .. } => ("posted", id.clone()),
            Settled::StillUnknown { found } => ("not found", found.clone()),
            Settled::Changed { state } => ("changed", format!("now {state}; left alone")),
            Settled::Waiting { until } => (
                "waiting",
                format!(
                    "the platform may still be saving the last send: repeated from {} on; left alone",
                    until.format("%Y-%m-%dT%H:%M:%SZ")
                ),
            ),
            Settled::Repeating { by, until } => (
                "being repeated",
                format!("by {by} until {}; left alone", until.format("%Y-%m-%dT%H:%M:%SZ")),
            ),
            Settled::NotAsked { why } => ("not asked", why.clone()),
        };
        // How a post was learnt of: found, or answered by a repeat that may have made it.
        let how = match &d.outcome {
            Settled::Posted { how, .. } => Some(how.describe()),
            _ => None,
        };
        if json {
            let mut row =
                serde_json::json!({ "key": d.key.as_str(), "was": d.was, "result": result, "detail": detail });
            if let Some(how) = how {
                row["how"] = how.into();
            }
            out.push_str(&row.to_string());
            out.push('\n');
        } else {
            let how = how.map(|h| format!(" ({h})")).unwrap_or_default();
            out.push_str(&format!("{} ({}): {result}: {}{how}\n", d.key, d.was, escaped(&detail)));
        }
    }
    write_stdout(&out)
}

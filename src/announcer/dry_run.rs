//! The dry run as a poster of its own: it reads every identity's claim instead of claiming, and
//! prints the post that would be sent (text, or one JSON object per post) instead of sending it.

use super::{AnnounceError, Announcer, Outcome, Output, Rendered};
use crate::claim::Holder;
use crate::cricket::Sighting;
use crate::post::SinkKind;
use serde::Serialize;
use std::io::Write;
use tracing::Level;

/// Where and how dry-run posts are printed.
#[derive(Clone)]
pub struct DryRun {
    /// Where posts are printed.
    pub out: Output,
    /// One JSON object per post instead of text.
    pub json: bool,
    /// Whether to call the shortener.
    pub shorten: bool,
    /// The sink the posts would go to: its default length rule fits them (Mastodon's 500 /
    /// URLs 23 without asking the instance).
    pub sink: SinkKind,
    /// The channel's name, printed with each post when there are several channels.
    pub channel: Option<String>,
}

#[derive(Serialize)]
struct DryRunLine<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    channel: Option<&'a str>,
    match_key: &'a str,
    source: String,
    state: &'a str,
    /// X's weighted length (under X's rule), else the length by the sink's rule.
    #[serde(rename = "weighted_length", skip_serializing_if = "Option::is_none")]
    weighted_length: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    length: Option<usize>,
    text: &'a str,
}

impl Announcer {
    /// Prints the post `s` would get, unless a claim holds it under any identity (then: would
    /// skip). Writes nothing to the store.
    pub(super) async fn preview(&self, dry: &DryRun, s: &Sighting, draft: Rendered) -> Result<Outcome, AnnounceError> {
        let (m, key) = (&s.m, &s.ids.key);
        let store_err = |source| AnnounceError::Store {
            key: key.clone(),
            source,
        };
        let (out, json, shorten) = (&dry.out, &dry.json, &dry.shorten);
        // A read of every identity: a listing edited since its claim is still held.
        if let Some((held_key, claim, via)) = self.store.find(&s.ids).await.map_err(store_err)? {
            let holder = Holder::from(&claim);
            if held_key == *key && via.is_key_of(key) {
                self.log_skip(key, &holder, "dry run: would skip", Level::DEBUG);
            } else {
                let changed = held_key.changes_to(key);
                tracing::info!(match_key = %held_key, seen_as = %key, via = %via, changed = %changed, "dry run: would skip (held via {via})");
            }
            return Ok(Outcome::Skipped { holder });
        }
        let post = if *shorten {
            self.with_link(draft, m, &self.link(m).await)
        } else {
            draft
        };
        let mut out = out
            .lock()
            .map_err(|_| AnnounceError::Output(std::io::Error::other("output poisoned")))?;
        if *json {
            let weighted = post.rule().is_weighted();
            let line = DryRunLine {
                channel: dry.channel.as_deref(),
                match_key: key.as_str(),
                source: m.identity().to_string(),
                state: m.state.as_str(),
                weighted_length: weighted.then_some(post.length()),
                length: (!weighted).then_some(post.length()),
                text: post.text(),
            };
            let json = serde_json::to_string(&line).map_err(|e| AnnounceError::Output(e.into()))?;
            writeln!(out, "{json}").map_err(AnnounceError::Output)?;
        } else {
            let channel = dry.channel.as_deref().map(|c| format!("[{c}] ")).unwrap_or_default();
            let length = post.rule().describe(post.length());
            writeln!(
                out,
                "--- {channel}{key} ({}; {length})\n{}\n",
                m.identity(),
                post.text()
            )
            .map_err(AnnounceError::Output)?;
        }
        out.flush().map_err(AnnounceError::Output)?;
        Ok(Outcome::WouldPost(post))
    }
}

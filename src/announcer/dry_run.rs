//! The dry run as a poster of its own: it reads every identity's claim instead of claiming, and
//! prints the post that would be sent (text, or one JSON object per post) instead of sending it:
//! as the channel's readers see it (Bluesky's link labels), with what the sink sends beside the
//! text (Bluesky's link card, Discord's embed, Telegram's link preview).
//! With a lead time (see [`crate::schedule`]) it also says when each post would be made (`now`,
//! `in 3 h 10 min, at …`) and prints a line for each match already claimed.

use super::{AnnounceError, Announcer, Outcome, Output, Rendered};
use crate::claim::{ClaimState, Holder, ReplyTo};
use crate::cricket::{MatchKey, Sighting};
use crate::post::{card_fields, link_label, Card, SinkKind};
use crate::schedule::{until, When};
use crate::text::escaped;
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
    /// With a lead time: when the post would be made (`now`, `in 3 h 10 min`).
    #[serde(skip_serializing_if = "Option::is_none")]
    announce: Option<String>,
    /// With a lead time, for a match that waits: when its window opens (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    announce_at: Option<String>,
    /// A result's post: `result` (absent for an announcement).
    #[serde(skip_serializing_if = "Option::is_none")]
    event: Option<&'static str>,
    /// A result's post: the id of the announcement it replies to; absent when it would be
    /// posted on its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    in_reply_to: Option<&'a str>,
    text: &'a str,
    /// The text as a reader sees it, when that differs (Bluesky: each link by its label).
    #[serde(skip_serializing_if = "Option::is_none")]
    shown: Option<&'a str>,
    /// What the sink sends beside the text (Bluesky's `embed`, Discord's `embeds`, Telegram's
    /// `link_preview_options`), as it sends it.
    #[serde(skip_serializing_if = "Option::is_none")]
    card: Option<serde_json::Value>,
}

/// A match already claimed, as a dry run with a lead time prints it.
#[derive(Serialize)]
struct HeldLine<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    channel: Option<&'a str>,
    match_key: &'a str,
    source: String,
    /// `already announced` (posted) or `already claimed` (any other state).
    announce: &'static str,
    claim_state: ClaimState,
    owner: &'a str,
}

impl Announcer {
    /// Prints the post `s` would get, unless a claim holds it under any identity (then: would
    /// skip). Writes nothing to the store.
    /// A result's post says so, and which post it replies to (`reply_to`), or that it would be
    /// posted on its own.
    pub(super) async fn preview(
        &self,
        dry: &DryRun,
        s: &Sighting,
        draft: Rendered,
        reply_to: Option<&ReplyTo>,
    ) -> Result<Outcome, AnnounceError> {
        let result = self.results.is_some();
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
            self.print_held(dry, s, &held_key, &holder)?;
            return Ok(Outcome::Skipped { holder });
        }
        let post = if *shorten {
            self.with_link(draft, m, &self.link(m).await)
        } else {
            draft
        };
        // When the post would be made, said only when the channel waits for windows: without a
        // lead time every post printed is made at once, as it always was.
        let when = self.lead.waits().then(|| self.lead.when(m, self.clock.now()));
        // As the channel's readers see it: the text as shown (Bluesky's labels) and the card.
        let card = Card::of(m, self.zone);
        let shown = post.rule().shown(post.text());
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
                announce: when.map(|w| self.timing(w, false)),
                announce_at: when
                    .and_then(When::opens)
                    .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
                event: result.then_some("result"),
                in_reply_to: reply_to.map(|r| r.post_id.as_str()),
                text: post.text(),
                shown: (shown != post.text()).then_some(&*shown),
                card: card_fields(dry.sink, &card),
            };
            let json = serde_json::to_string(&line).map_err(|e| AnnounceError::Output(e.into()))?;
            writeln!(out, "{json}").map_err(AnnounceError::Output)?;
        } else {
            let channel = dry.channel.as_deref().map(|c| format!("[{c}] ")).unwrap_or_default();
            let length = post.rule().describe(post.length());
            let timing = when.map(|w| format!("; {}", self.timing(w, true))).unwrap_or_default();
            let reply = match (result, reply_to) {
                (false, _) => String::new(),
                (true, Some(parent)) => format!("; result, in reply to {}", escaped(&parent.post_id)),
                (true, None) => "; result, on its own".to_string(),
            };
            let dressed: String = card_lines(dry.sink, &card).iter().map(|l| format!("{l}\n")).collect();
            writeln!(
                out,
                "--- {channel}{key} ({}; {length}{timing}{reply})\n{shown}\n{dressed}",
                m.identity(),
            )
            .map_err(AnnounceError::Output)?;
        }
        out.flush().map_err(AnnounceError::Output)?;
        Ok(Outcome::WouldPost(post))
    }
}

impl Announcer {
    /// When a post would be made, for people: `now`, or `in 3 h 10 min` and, with `at`, the
    /// window's opening in the channel's zone (`in 3 h 10 min, at Sun 16 Jun, 12:30 UTC`).
    fn timing(&self, when: When, at: bool) -> String {
        match when {
            When::Now => "now".into(),
            When::At(opens) if at => format!("{}, at {}", until(self.clock.now(), opens), self.zone.start(opens)),
            When::At(opens) => until(self.clock.now(), opens),
        }
    }

    /// Prints that `s` is already claimed (under `key`, by `holder`), when the channel waits
    /// for windows: `=== KEY (SOURCE): already announced (posted, owner OWNER)`, or `already
    /// claimed` for a claim in another state (seeded, failed, unknown…). Without a lead time
    /// a held match prints nothing, as it always did.
    ///
    /// # Errors
    /// [`AnnounceError::Output`] when the output cannot be written.
    pub(super) fn print_held(
        &self,
        dry: &DryRun,
        s: &Sighting,
        key: &MatchKey,
        holder: &Holder,
    ) -> Result<(), AnnounceError> {
        if !self.lead.waits() {
            return Ok(());
        }
        let announce = if holder.state == ClaimState::Posted {
            "already announced"
        } else {
            "already claimed"
        };
        let line = if dry.json {
            let line = HeldLine {
                channel: dry.channel.as_deref(),
                match_key: key.as_str(),
                source: s.m.identity().to_string(),
                announce,
                claim_state: holder.state,
                owner: &holder.owner,
            };
            serde_json::to_string(&line).map_err(|e| AnnounceError::Output(e.into()))?
        } else {
            let channel = dry.channel.as_deref().map(|c| format!("[{c}] ")).unwrap_or_default();
            format!(
                "=== {channel}{key} ({}): {announce} ({}, owner {})\n",
                s.m.identity(),
                holder.state,
                escaped(&holder.owner)
            )
        };
        let mut out = dry
            .out
            .lock()
            .map_err(|_| AnnounceError::Output(std::io::Error::other("output poisoned")))?;
        writeln!(out, "{line}").map_err(AnnounceError::Output)?;
        out.flush().map_err(AnnounceError::Output)
    }
}

/// What a sink of `kind` shows beside a post's text, for people, one line each: Bluesky's link
/// card (`[card] title | series · venue · start | host`), Discord's embed (`[embed] title → page`,
/// then its description and fields), Telegram's preview (`[preview] page`); nothing for X and
/// Mastodon.
fn card_lines(kind: SinkKind, card: &Card) -> Vec<String> {
    let page = card.page.as_str();
    match kind {
        SinkKind::Bluesky => {
            let host = link_label(page);
            let host = host.split('/').next().unwrap_or_default();
            vec![format!("[card] {} | {} | {host}", card.title, card.summary())]
        }
        SinkKind::Discord => {
            let mut lines = vec![format!("[embed] {} → {page}", card.title)];
            let mut about: Vec<String> = Vec::new();
            if !card.series.is_empty() {
                about.push(card.series.clone());
            }
            if !card.venue.is_empty() {
                about.push(format!("Venue: {}", card.venue));
            }
            if let Some(start) = card.start {
                about.push(format!("Start: <t:{}:F>", start.timestamp()));
            }
            if !about.is_empty() {
                lines.push(format!("        {}", about.join(" | ")));
            }
            lines
        }
        SinkKind::Telegram => vec![format!("[preview] {page}")],
        SinkKind::X | SinkKind::Mastodon => Vec::new(),
    }
}

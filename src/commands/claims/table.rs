//! The claims table (`claims list`, `claims show`): a row per claim, or a JSON object per line.

use super::super::output::write_stdout;
use crate::tables::{self, Column};
use chrono::{DateTime, Utc};
use cricket_announcer::claim::{known_time, Claim, ListedClaim};
use cricket_announcer::event::Event;
use cricket_announcer::text::escaped;
use std::time::Duration;
use unicode_width::UnicodeWidthStr;

/// Prints `claims` as a table fitting 100 columns (every field in full when `wide`), or one
/// JSON object per line (see [`ClaimsPrinter`]).
///
/// # Errors
/// The output cannot be written (a closed stdout is not an error).
pub(super) fn print_claims(
    claims: &[(Event, ListedClaim)],
    json: bool,
    stuck_after: Duration,
    wide: bool,
    now: DateTime<Utc>,
) -> std::io::Result<()> {
    let events = claims.iter().any(|(e, _)| *e != Event::Announce);
    let columns = ClaimsPrinter::columns(events, claims.iter().map(|(_, c)| c));
    let mut printer = ClaimsPrinter::new(&columns, json, stuck_after, wide, now, 0);
    write_stdout(&printer.page(claims))
}

/// The claims table a page at a time (`claims list` streams it): a row per claim, or a JSON
/// object per line. The match key and the post id are never cut (a reader pastes them into
/// the next command, and a cut key made the rows of one fixture look alike): the owner and the
/// detail are cut instead, and a table whose keys and ids alone are too long is wider; a claim
/// past its owner's deadline (or claimed for longer than `stuck_after`) at `now`, the store's
/// time (`ClaimStore::now`), shows as stuck. Each claim is of its event (`announce`,
/// `result`): said in each JSON object, and in an EVENT column when the columns have one.
pub(super) struct ClaimsPrinter<'c> {
    json: bool,
    stuck_after: Duration,
    now: DateTime<Utc>,
    /// Whether the table has an EVENT column.
    events: bool,
    table: tables::Stream<'c>,
}

impl<'c> ClaimsPrinter<'c> {
    /// The table's columns: with an EVENT column when `events`; the detail column never cut
    /// below the longest post id of `claims` (X and Discord ids are 19 digits, a Bluesky one
    /// an `at://` address), bounded by the table's width so a foreign record's endless id
    /// cannot widen it without end.
    pub(super) fn columns<'a>(events: bool, claims: impl Iterator<Item = &'a ListedClaim>) -> Vec<Column> {
        let longest_id = claims
            .filter_map(|c| c.claim.post_id.as_deref())
            .map(|id| escaped(id).width())
            .max()
            .unwrap_or(0)
            .min(tables::WIDTH);
        let mut columns = vec![
            Column::fixed("MATCH KEY"),
            Column::fixed("STATE"),
            Column::cut("OWNER", 10),
            Column::fixed("SINCE (UTC)"),
            Column::number("TTL (s)"),
            Column::cut("TWEET / DETAIL", longest_id.max(16)),
        ];
        if events {
            columns.insert(1, Column::fixed("EVENT"));
        }
        columns
    }

    /// A printer of `columns` (from [`ClaimsPrinter::columns`]), or of JSON lines; its match
    /// key column at least `key_width` wide (the longest key to come, when known), so the
    /// columns line up over every page.
    pub(super) fn new(
        columns: &'c [Column],
        json: bool,
        stuck_after: Duration,
        wide: bool,
        now: DateTime<Utc>,
        key_width: usize,
    ) -> ClaimsPrinter<'c> {
        let events = columns.iter().any(|c| c.header == "EVENT");
        ClaimsPrinter {
            json,
            stuck_after,
            now,
            events,
            table: tables::Stream::new(columns, &[key_width], wide),
        }
    }

    /// The text of the next `claims` (the table's header first, on the first call).
    pub(super) fn page(&mut self, claims: &[(Event, ListedClaim)]) -> String {
        let (now, stuck_after) = (self.now, self.stuck_after);
        if self.json {
            let mut text = String::new();
            for (event, c) in claims {
                let line = serde_json::json!({
                    "key": c.key,
                    "event": event.as_str(),
                    "state": c.claim.display_state(now, stuck_after),
                    "claim": c.claim,
                    "ttl_secs": c.ttl.map(|t| t.as_secs()),
                });
                text.push_str(&format!("{line}\n"));
            }
            return text;
        }
        // Owner, title and detail come from the store, written by any process that could reach
        // it: escaped, so they cannot drive the terminal or forge a row.
        let rows: Vec<Vec<String>> = claims
            .iter()
            .map(|(event, c)| {
                let mut row = vec![
                    c.key.as_str().to_string(),
                    c.claim.display_state(now, stuck_after).to_string(),
                    escaped(&c.claim.owner).into_owned(),
                    known_time(c.claim.claimed_at)
                        .map_or_else(|| "-".to_string(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string()),
                    c.ttl.map(|t| t.as_secs().to_string()).unwrap_or_else(|| "-".into()),
                    escaped(&detail_cell(&c.claim, now)).into_owned(),
                ];
                if self.events {
                    row.insert(1, event.as_str().to_string());
                }
                row
            })
            .collect();
        self.table.page(&rows)
    }
}

/// The TWEET / DETAIL cell: the post's id; else, while a `claims reconcile` repeats its post,
/// who and until when; else, once `claims reconcile` checked it, when and what it found; else
/// the record's detail. A repeat's lease is judged at `now`, the store's time.
fn detail_cell(claim: &Claim, now: DateTime<Utc>) -> String {
    if let Some(id) = &claim.post_id {
        return id.clone();
    }
    if let Some(replay) = claim.replay.as_ref().filter(|r| r.until > now) {
        return format!(
            "being repeated by {} until {}",
            replay.by,
            replay.until.format("%Y-%m-%d %H:%M:%S")
        );
    }
    match (claim.checked_at, &claim.check) {
        (Some(at), Some(found)) => format!("checked {}: {found}", at.format("%Y-%m-%d %H:%M:%S")),
        _ => claim.detail.clone().unwrap_or_default(),
    }
}

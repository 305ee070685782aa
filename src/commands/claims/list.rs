//! `claims list`: the live claims of a channel, or those in one state or of one event, streamed
//! a page at a time.

use super::super::exit::{Exit, Failure};
use super::super::output::{store_label, write_stdout, write_stdout_while_read};
use super::table::ClaimsPrinter;
use cricket_announcer::claim::{ClaimStore, Listing, ShownState};
use cricket_announcer::config::Config;
use cricket_announcer::event::Event;
use std::num::NonZeroUsize;
use std::time::Duration;
use unicode_width::UnicodeWidthStr;

/// Which claims `claims list` prints.
pub(super) struct Filter {
    /// Only those in this state.
    pub state: Option<ShownState>,
    /// At most this many.
    pub limit: Option<NonZeroUsize>,
    /// Only this event's (its namespace alone is read).
    pub event: Option<Event>,
}

/// `claims list`: the claims of `store` that `filter` lets through, every event's (the
/// announcements', then the results' namespace, see [`Event`]) unless it names one, as a table
/// or JSON lines; says so when there is none.
///
/// Streamed: the keys' names are read first (sorted; a few tens of bytes each), then the
/// records a page at a time ([`Listing`]), each page filtered as it is read and printed at
/// once. It stops reading when `--limit` is reached or stdout closes (`| head -1`), so neither
/// costs the whole store, and it holds one page of records at a time however many there are.
///
/// # Errors
/// A [`Failure`] when the store cannot list its claims or the output cannot be written.
pub(super) async fn list(
    config: &Config,
    store: &ClaimStore,
    filter: Filter,
    wide: bool,
    stuck_after: Duration,
) -> Result<Exit, Failure> {
    // Stuck is judged by the store's clock, which wrote the records' deadlines.
    let now = store.now().await?;
    let events: Vec<Event> = Event::ALL
        .iter()
        .copied()
        .filter(|e| filter.event.is_none_or(|f| f == *e))
        .collect();
    let stores: Vec<ClaimStore> = events.iter().map(|e| store.for_event(*e)).collect();
    let mut listings: Vec<(Event, Listing<'_>)> = Vec::with_capacity(events.len());
    for (event, s) in events.iter().zip(&stores) {
        listings.push((*event, s.listing().await?));
    }
    // Known before the first row, from the names alone: the longest key (so the key column
    // lines up over every page) and whether any claim is not an announcement's.
    let key_width = listings
        .iter()
        .flat_map(|(_, l)| l.keys())
        .map(UnicodeWidthStr::width)
        .max()
        .unwrap_or(0);
    let events_column = listings
        .iter()
        .any(|(e, l)| *e != Event::Announce && l.keys().next().is_some());
    // The columns are set by the first page printed (its longest post id: an id is never
    // cut).
    let columns = std::cell::OnceCell::new();
    let mut printer = None;
    let mut left = filter.limit.map_or(usize::MAX, NonZeroUsize::get);
    let mut printed = 0usize;
    'events: for (event, listing) in &mut listings {
        while left > 0 {
            let Some(page) = listing.next_page().await? else {
                break;
            };
            let page: Vec<_> = page
                .into_iter()
                .filter(|c| {
                    filter
                        .state
                        .is_none_or(|s| c.claim.display_state(now, stuck_after) == s)
                })
                .take(left)
                .map(|c| (*event, c))
                .collect();
            if page.is_empty() {
                continue;
            }
            left -= page.len();
            printed += page.len();
            let printer = printer.get_or_insert_with(|| {
                let columns =
                    columns.get_or_init(|| ClaimsPrinter::columns(events_column, page.iter().map(|(_, c)| c)));
                ClaimsPrinter::new(columns, config.json(), stuck_after, wide, now, key_width)
            });
            if !write_stdout_while_read(&printer.page(&page))? {
                // The reader closed stdout: it had what it wanted, read no more.
                break 'events;
            }
        }
    }
    if printed == 0 && !config.json() {
        let which = filter
            .state
            .map(|s| format!(" in state {}", s.as_str()))
            .unwrap_or_default();
        write_stdout(&format!("no claims{which} (store {})\n", store_label(config)))?;
    }
    Ok(Exit::Done)
}

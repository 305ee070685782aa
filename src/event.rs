//! The events a channel posts about a match (`events = ["announce", "result"]`, `EVENTS`): the
//! announcement at first sighting (or its window) and, once the match is finished, its result
//! under the announcement. Each event of each channel is claimed on its own, in a namespace of
//! the channel's claims (`<channel's prefix>ev:<event>:`; the announcement keeps the channel's
//! own keys), so the claim protocol is the same for every event and a new event needs no claim
//! code (`docs/design.md`, "Events").

use std::fmt;

/// The default `RESULT_MAX_AGE`: a result is posted within a day of the match's end.
pub const DEFAULT_RESULT_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// One kind of post a channel makes about a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    /// The match is coming up or under way: its announcement (what every release before events
    /// posted, under the channel's own keys).
    Announce,
    /// The match is finished: its result, posted as a reply to the announcement where the
    /// platform can reply.
    Result,
}

impl Event {
    /// Every event, in the order a channel's turns post them in a cycle (an announcement before
    /// the result that replies to it).
    pub const ALL: [Event; 2] = [Event::Announce, Event::Result];

    /// How the channels file, `EVENTS`, logs and metrics name it: `announce`, `result`.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Announce => "announce",
            Event::Result => "result",
        }
    }

    /// The event named `raw` (trimmed, any case), if any.
    pub fn parse(raw: &str) -> Option<Event> {
        let raw = raw.trim();
        Event::ALL.into_iter().find(|e| e.as_str().eq_ignore_ascii_case(raw))
    }

    /// The segment a claim store's prefix gets for this event's namespace (`ev:result:`);
    /// `None` for the announcement, which keeps the channel's own keys, so a deployment that
    /// enables results announces nothing again.
    pub fn namespace(self) -> Option<&'static str> {
        match self {
            Event::Announce => None,
            Event::Result => Some("ev:result:"),
        }
    }

    /// The words listing every event, for errors: `announce, result`.
    pub fn names() -> String {
        Event::ALL.map(Event::as_str).join(", ")
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a channel does with a result whose match has no announcement on it (never posted,
/// filtered out, lost, still `unknown`): `result_without_announcement`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WithoutAnnouncement {
    /// Post the result on its own (the default).
    #[default]
    Post,
    /// Post nothing for it.
    Skip,
}

impl WithoutAnnouncement {
    /// `post` or `skip` (trimmed, any case), if it is one.
    pub fn parse(raw: &str) -> Option<WithoutAnnouncement> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "post" => Some(WithoutAnnouncement::Post),
            "skip" => Some(WithoutAnnouncement::Skip),
            _ => None,
        }
    }
}

/// The events named in `raw` (`announce,result`, or a list's entries), deduplicated in
/// [`Event::ALL`]'s order.
///
/// # Errors
/// The first entry that names no event, as written; an empty list is refused with `""`.
pub fn parse_events<'a>(raw: impl IntoIterator<Item = &'a str>) -> Result<Vec<Event>, String> {
    let mut events = Vec::new();
    for entry in raw {
        let event = Event::parse(entry).ok_or_else(|| entry.to_string())?;
        if !events.contains(&event) {
            events.push(event);
        }
    }
    if events.is_empty() {
        return Err(String::new());
    }
    events.sort();
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_in_any_case_deduplicated_and_ordered() {
        assert_eq!(
            parse_events(["Result", "announce", "result"]),
            Ok(vec![Event::Announce, Event::Result])
        );
        assert_eq!(parse_events(["result"]), Ok(vec![Event::Result]));
        assert_eq!(parse_events(["live"]), Err("live".to_string()));
        assert_eq!(parse_events([]), Err(String::new()));
        assert_eq!(Event::Result.namespace(), Some("ev:result:"));
        assert_eq!(Event::Announce.namespace(), None);
        assert_eq!(WithoutAnnouncement::parse(" Skip"), Some(WithoutAnnouncement::Skip));
        assert_eq!(WithoutAnnouncement::parse("maybe"), None);
    }
}

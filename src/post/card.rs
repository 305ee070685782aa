//! A post as it leaves for a sink ([`Post`]): its text, and the card of its match ([`Card`]) that
//! each platform shows in its own way (Bluesky's external embed, Discord's embed, Telegram's
//! link preview). The text is the post; the card only dresses it, so a post without one (a
//! repeat by `claims reconcile`, which has only the text its claim kept) is still the post.

use crate::cricket::{Format, Match};
use crate::text::clean;
use crate::zone::Zone;
use chrono::{DateTime, Utc};
use url::Url;

/// What a platform's card of a match shows: built from the match's own fields, each cleaned
/// like a template's ([`crate::text::clean`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// The match page itself (never the shortened link: a card names the page it shows).
    pub page: Url,
    /// `Zimbabwe v Bangladesh, 2nd T20I`: the teams and the match's place in its series.
    pub title: String,
    /// `Bangladesh tour of Zimbabwe, 2026` (empty when the page names none).
    pub series: String,
    /// `Queens Sports Club, Bulawayo` (empty when the page names none).
    pub venue: String,
    /// The scheduled start (UTC), when known.
    pub start: Option<DateTime<Utc>>,
    /// The start as the channel tells it (`Fri 17 Jul, 16:00 IST`), empty when unknown.
    pub start_shown: String,
    /// The form of the game (Discord's embed takes its colour from it).
    pub format: Format,
}

impl Card {
    /// The card of `m`, its start told in `zone`.
    pub fn of(m: &Match, zone: Zone) -> Card {
        let [t1, t2] = &m.teams;
        let mut title = format!("{} v {}", clean(&t1.name), clean(&t2.name));
        if let Some(d) = m.description.as_deref().map(clean).filter(|d| !d.is_empty()) {
            title.push_str(", ");
            title.push_str(&d);
        }
        Card {
            page: m.url.clone(),
            title,
            series: m.series.as_deref().map(clean).unwrap_or_default(),
            venue: m.venue.as_ref().map(|v| clean(&v.to_string())).unwrap_or_default(),
            start: m.start_time,
            start_shown: m.start_time.map(|t| zone.start(t)).unwrap_or_default(),
            format: m.format.clone(),
        }
    }

    /// One line about the match: series, venue and start, those known, joined by ` · `
    /// (`Bangladesh tour of Zimbabwe, 2026 · Queens Sports Club, Bulawayo · Fri 17 Jul, 10:30
    /// UTC`): a Bluesky link card's description.
    pub fn summary(&self) -> String {
        [self.series.as_str(), self.venue.as_str(), self.start_shown.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" · ")
    }
}

/// One post for a sink: the text (as rendered and fitted to the sink's length rule) and, when
/// the poster has its match at hand, the match's [`Card`]. A `&str` is a post without a card.
#[derive(Debug, Clone, Copy)]
pub struct Post<'a> {
    /// The post's text, links in full (Bluesky shows them by label, see
    /// [`crate::post::labelled`]).
    pub text: &'a str,
    /// The match's card, when known.
    pub card: Option<&'a Card>,
}

impl<'a> From<&'a str> for Post<'a> {
    fn from(text: &'a str) -> Post<'a> {
        Post { text, card: None }
    }
}

impl<'a> From<&'a String> for Post<'a> {
    fn from(text: &'a String) -> Post<'a> {
        Post { text, card: None }
    }
}

impl<'a> Post<'a> {
    /// `text` with the card `card`.
    pub fn with_card(text: &'a str, card: &'a Card) -> Post<'a> {
        Post { text, card: Some(card) }
    }
}

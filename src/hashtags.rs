//! A match's hashtags, as cricket audiences on X, Mastodon and Bluesky follow them: one for the
//! fixture from the teams' short names (`#INDvAUS`) and one for the series (`#T20WorldCup`), each
//! of word characters only, so that every platform reads the whole word as the tag.

use crate::cricket::Match;
use crate::text::clean;

/// The longest tag made, in characters after the `#`: a longer one (`#BangladeshTourOfZimbabwe`
/// is 24) is not a tag people type or follow, so it is left out.
pub const MAX_TAG_CHARS: usize = 20;

/// Words of a series name that its hashtag leaves out: the governing body and the men's side
/// (`ICC Men's T20 World Cup 2026` is followed as `#T20WorldCup`). "Women's" is kept:
/// `#WomensT20WorldCup` is a tag of its own.
const DROPPED_WORDS: [&str; 3] = ["icc", "men's", "mens"];

/// The hashtags of `m`, space-separated (`#ZIMvBAN #T20WorldCup`), or empty when it has none:
/// the fixture's ([`fixture_tag`]) then the series' ([`series_tag`]), a tag equal to the one
/// before it left out.
pub fn hashtags(m: &Match) -> String {
    let mut tags: Vec<String> = Vec::new();
    for tag in [fixture_tag(m), m.series.as_deref().and_then(series_tag)]
        .into_iter()
        .flatten()
    {
        if !tags.iter().any(|t| t.eq_ignore_ascii_case(&tag)) {
            tags.push(tag);
        }
    }
    tags.iter().map(|t| format!("#{t}")).collect::<Vec<_>>().join(" ")
}

/// `#` less: the teams' short names (the full name when the page has none) joined by `v`, word
/// characters only (`ZIMvBAN`, `SriLankavIndia`); `None` when longer than [`MAX_TAG_CHARS`] or
/// when a side has no word character at all.
pub fn fixture_tag(m: &Match) -> Option<String> {
    let [t1, t2] = &m.teams;
    let short = |t: &crate::cricket::Team| word_characters(&clean(t.short_name.as_deref().unwrap_or(&t.name)));
    let (a, b) = (short(t1), short(t2));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    fit(format!("{a}v{b}"))
}

/// `#` less: the series' words without years (`2026`, `2025-26`) and [`DROPPED_WORDS`], each
/// starting with a capital, joined (`ICC Men's T20 World Cup 2026` → `T20WorldCup`); `None` when
/// nothing is left, only digits are, it is longer than [`MAX_TAG_CHARS`], or the series is a
/// tour (`Australia tour of India, 2026`: its name describes it, its fixture's tag names it).
pub fn series_tag(series: &str) -> Option<String> {
    let cleaned = clean(series);
    if cleaned.split_whitespace().any(|w| w.eq_ignore_ascii_case("tour")) {
        return None;
    }
    let words = cleaned
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | '(' | ')' | '/' | '|' | '-' | '–'))
        .filter(|w| !w.is_empty())
        .filter(|w| !DROPPED_WORDS.contains(&w.to_lowercase().as_str()))
        .filter(|w| !w.chars().all(|c| c.is_ascii_digit()) || w.len() != 4 && w.len() != 2)
        .map(word_characters)
        .filter(|w| !w.is_empty());
    let tag: String = words
        .map(|w| {
            let mut chars = w.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect();
    fit(tag)
}

/// `tag` when it is a tag worth posting: not empty, not digits only, at most [`MAX_TAG_CHARS`].
fn fit(tag: String) -> Option<String> {
    let letters = tag.chars().any(|c| !c.is_numeric());
    (letters && tag.chars().count() <= MAX_TAG_CHARS).then_some(tag)
}

/// The word characters of `text` (letters, digits, `_`), in order.
fn word_characters(text: &str) -> String {
    text.chars().filter(|c| c.is_alphanumeric() || *c == '_').collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cricket::{sample_match, Site};

    #[test]
    fn a_series_tag_keeps_the_words_people_follow() {
        assert_eq!(
            series_tag("ICC Men's T20 World Cup 2026").as_deref(),
            Some("T20WorldCup")
        );
        assert_eq!(
            series_tag("ICC Women's T20 World Cup, 2026").as_deref(),
            Some("WomensT20WorldCup")
        );
        assert_eq!(
            series_tag("Indian Premier League 2026").as_deref(),
            Some("IndianPremierLeague")
        );
        assert_eq!(series_tag("The Ashes, 2025-26").as_deref(), Some("TheAshes"));
        // Too long to be a tag anyone follows; nothing but a year; a hostile name.
        assert_eq!(series_tag("Bangladesh tour of Zimbabwe, 2026"), None);
        assert_eq!(series_tag("2026"), None);
        assert_eq!(series_tag("<b>#Cup</b> @x").as_deref(), Some("BCupBX"));
        // A tour is told by its fixture's tag.
        assert_eq!(series_tag("Australia tour of India").as_deref(), None);
    }

    #[test]
    fn the_hashtags_are_the_fixtures_then_the_series_word_characters_only() {
        let mut m = sample_match(Site::Cricbuzz, "1", "India", "Australia", Some("1st T20I"));
        m.teams[0].short_name = Some("IND".into());
        m.teams[1].short_name = Some("AUS".into());
        m.series = Some("ICC Men's T20 World Cup 2026".into());
        assert_eq!(hashtags(&m), "#INDvAUS #T20WorldCup");
        m.series = Some("Australia tour of India, 2026".into());
        assert_eq!(hashtags(&m), "#INDvAUS");
        // No short names: the full ones, spaces and dots gone.
        m.teams[0].short_name = None;
        m.teams[1].short_name = None;
        m.teams[0].name = "Sri Lanka".into();
        m.teams[1].name = "St. Lucia".into();
        assert_eq!(hashtags(&m), "#SriLankavStLucia");
        m.teams[0].name = "Mumbai Indians Women".into();
        m.series = None;
        assert_eq!(hashtags(&m), "");
    }
}

//! When a match is announced: at its first sighting (the default), or from a lead time before
//! its start (`ANNOUNCE_BEFORE`, a channel's `announce_before`). This module owns the rule
//! ([`Lead::when`]), the lead time as people write it (`2h`, `90m`, `off`), and how the wait is
//! told to them ([`until`]: "in 3 h 10 min"). Nothing here reads a clock: the time is passed in.
//!
//! The rule: with a lead time, a match that has a start time and has not begun is announced at
//! the first poll inside `[start - lead, …)`, and not before; a match first seen later (inside
//! its window already, live, or finished) is announced at once. A match whose source gives no
//! start time cannot wait for one: it is announced at its first sighting.

use crate::cricket::{Match, MatchState};
use chrono::{DateTime, TimeDelta, Utc};
use std::fmt;
use std::time::Duration;

/// When a channel announces a match.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Lead {
    /// At its first sighting (`ANNOUNCE_BEFORE` unset, or `off`).
    #[default]
    FirstSighting,
    /// This long before its start.
    Before(Duration),
}

/// The longest lead time accepted: 30 days. A schedule is rarely listed further ahead, and a
/// claim's TTL (at most ten years, by default 10 days) need not cover the wait: nothing is
/// claimed while a match waits.
pub const MAX_LEAD: Duration = Duration::from_secs(30 * 24 * 3600);

/// Whether a match is announced now or waits for its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Announced at this poll: no lead time, no start time, begun, or inside its window.
    Now,
    /// Waits: its window opens at this time (its start less the lead time), later than now.
    At(DateTime<Utc>),
}

impl When {
    /// When the window opens, for a match that waits.
    pub fn opens(self) -> Option<DateTime<Utc>> {
        match self {
            When::Now => None,
            When::At(at) => Some(at),
        }
    }
}

impl Lead {
    /// The lead time as written: `off` (or `none`) for [`Lead::FirstSighting`], else a
    /// duration (`2h`, `90m`, `1h 30m`, `45min`: humantime's units, <https://docs.rs/humantime>),
    /// at most [`MAX_LEAD`]. `0` announces at the start itself.
    ///
    /// # Errors
    /// What is wrong with `text`, saying what to write instead.
    pub fn parse(text: &str) -> Result<Lead, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("off") || text.eq_ignore_ascii_case("none") {
            return Ok(Lead::FirstSighting);
        }
        let lead = humantime::parse_duration(text).map_err(|e| {
            format!("{e}: write a duration such as 2h, 90m or 1h 30m, or off to announce at first sighting")
        })?;
        if lead > MAX_LEAD {
            return Err("at most 30 days (720h): a schedule is rarely listed further ahead".into());
        }
        Ok(Lead::Before(lead))
    }

    /// Whether `m` is announced now, by this lead, at `now` (see the module documentation).
    pub fn when(self, m: &Match, now: DateTime<Utc>) -> When {
        let Lead::Before(lead) = self else {
            return When::Now;
        };
        let Some(start) = m.start_time else {
            return When::Now;
        };
        // Begun or over: the window is past whatever the page says of the start.
        match m.state {
            MatchState::Live | MatchState::Complete | MatchState::Abandoned => return When::Now,
            MatchState::Upcoming | MatchState::Other => {}
        }
        // MAX_LEAD fits a TimeDelta: the fallback is never taken.
        let lead = TimeDelta::from_std(lead).unwrap_or(TimeDelta::MAX);
        match start.checked_sub_signed(lead) {
            Some(opens) if opens > now => When::At(opens),
            _ => When::Now,
        }
    }

    /// Whether matches wait for a window at all (a lead time is set).
    pub fn waits(self) -> bool {
        matches!(self, Lead::Before(_))
    }
}

impl fmt::Display for Lead {
    /// `off`, or the duration as humantime writes it (`2h`, `1h 30m`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lead::FirstSighting => f.write_str("off"),
            Lead::Before(d) => write!(f, "{}", humantime::format_duration(*d)),
        }
    }
}

/// How long until `at`, for people: `now` when it is not later than `now`, else `in 3 h 10 min`,
/// `in 2 d 4 h`, `in 45 min`, rounded up to the minute (a window opening in 20 s is `in 1 min`:
/// not yet open).
pub fn until(now: DateTime<Utc>, at: DateTime<Utc>) -> String {
    let secs = (at - now).num_seconds();
    if secs <= 0 {
        return "now".into();
    }
    // Positive here: rounded up by hand (`i64::div_ceil` is not stable).
    let minutes = (secs + 59) / 60;
    let (days, hours, mins) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    match (days, hours, mins) {
        (0, 0, m) => format!("in {m} min"),
        (0, h, 0) => format!("in {h} h"),
        (0, h, m) => format!("in {h} h {m} min"),
        (d, 0, _) => format!("in {d} d"),
        (d, h, _) => format!("in {d} d {h} h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cricket::{sample_match, Site};
    use chrono::TimeZone;

    fn utc(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 7, 17, h, m, 0).unwrap()
    }

    #[test]
    fn lead_times_are_read_as_people_write_them() {
        assert_eq!(Lead::parse("2h"), Ok(Lead::Before(Duration::from_secs(7200))));
        assert_eq!(Lead::parse(" 90m "), Ok(Lead::Before(Duration::from_secs(5400))));
        assert_eq!(Lead::parse("1h 30m"), Ok(Lead::Before(Duration::from_secs(5400))));
        assert_eq!(Lead::parse("0"), Ok(Lead::Before(Duration::ZERO)));
        assert_eq!(Lead::parse("OFF"), Ok(Lead::FirstSighting));
        assert_eq!(Lead::parse("2 hours"), Ok(Lead::Before(Duration::from_secs(7200))));
        assert_eq!(
            Lead::parse("2x").unwrap_err(),
            "unknown time unit \"x\", supported units: ns, us/µs, ms, sec, min, hours, days, weeks, months, years (and few variations): write a duration such as 2h, 90m or 1h 30m, or off to announce at first sighting"
        );
        assert!(Lead::parse("31days").unwrap_err().starts_with("at most 30 days"));
        assert_eq!(Lead::Before(Duration::from_secs(5400)).to_string(), "1h 30m");
        assert_eq!(Lead::FirstSighting.to_string(), "off");
    }

    #[test]
    fn an_upcoming_match_waits_for_its_window_and_is_due_from_its_opening_on() {
        // Starts 10:30; a 2 h lead opens the window at 08:30.
        let m = sample_match(Site::Cricbuzz, "1", "Zimbabwe", "Bangladesh", None);
        let lead = Lead::parse("2h").unwrap();
        assert_eq!(lead.when(&m, utc(8, 29)), When::At(utc(8, 30)));
        assert_eq!(lead.when(&m, utc(8, 30)), When::Now);
        assert_eq!(lead.when(&m, utc(12, 0)), When::Now, "first seen after its start");
        assert_eq!(Lead::FirstSighting.when(&m, utc(0, 0)), When::Now);
        // Live (a page that says so before the listed start), or finished: at once.
        for state in [MatchState::Live, MatchState::Complete, MatchState::Abandoned] {
            let m = Match { state, ..m.clone() };
            assert_eq!(lead.when(&m, utc(0, 0)), When::Now, "{state}");
        }
        // Unknown state: it may not have begun; it waits.
        let other = Match {
            state: MatchState::Other,
            ..m.clone()
        };
        assert_eq!(lead.when(&other, utc(0, 0)), When::At(utc(8, 30)));
        // No start time: nothing to wait for.
        let unknown = Match { start_time: None, ..m };
        assert_eq!(lead.when(&unknown, utc(0, 0)), When::Now);
    }

    #[test]
    fn the_wait_is_told_rounded_up_to_the_minute() {
        let now = utc(7, 20);
        assert_eq!(until(now, utc(7, 20)), "now");
        assert_eq!(until(now, utc(6, 0)), "now");
        assert_eq!(until(now, now + TimeDelta::seconds(20)), "in 1 min");
        assert_eq!(until(now, utc(8, 5)), "in 45 min");
        assert_eq!(until(now, utc(9, 20)), "in 2 h");
        assert_eq!(until(now, utc(10, 30)), "in 3 h 10 min");
        assert_eq!(
            until(now, now + TimeDelta::days(4) + TimeDelta::hours(22)),
            "in 4 d 22 h"
        );
        assert_eq!(until(now, now + TimeDelta::days(2)), "in 2 d");
    }
}

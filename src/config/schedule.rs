//! The schedule section: when a match is announced (`ANNOUNCE_BEFORE`), the time zone a post
//! tells its start in (`TIMEZONE`), and the instant a dry run judges time as (`--as-of`). A
//! channel of the channels file may set its own `announce_before` and `timezone`.

use super::value::{given, Blankable, OrBlank, Reads};
use super::Problem;
use crate::event::{parse_events, Event, DEFAULT_RESULT_MAX_AGE};
use crate::schedule::Lead;
use crate::zone::Zone;
use chrono::{DateTime, Utc};

/// The schedule's settings, as given.
#[derive(clap::Args, Clone)]
pub struct ScheduleSettings {
    /// Announce a match this long before its start (2h, 90m, 1h 30m), at the first poll inside
    /// that window; a match first seen later, live, or without a start time is announced at
    /// once. 0: at its start time. Unset (or off): at first sighting.
    #[arg(long, env = "ANNOUNCE_BEFORE", value_parser = OrBlank(Reads(read_lead)), global = true)]
    pub announce_before: Option<Blankable<Lead>>,
    /// Time zone of the start time in posts (IANA name: Asia/Kolkata, Europe/London,
    /// Australia/Sydney). Unset: UTC.
    #[arg(long, env = "TIMEZONE", value_parser = OrBlank(Reads(read_zone)), global = true)]
    pub timezone: Option<Blankable<Zone>>,
    /// Judge time as if it were TIME (RFC 3339, e.g. 2024-06-16T06:00:00Z): what a dry run or
    /// check-sources would show then. Only in a dry run or with check-sources.
    #[arg(long, value_name = "TIME", value_parser = Reads(read_instant), global = true)]
    pub as_of: Option<DateTime<Utc>>,
    /// What each channel posts of a match, comma-separated: announce (when it is coming up or
    /// live), result (once it is finished, under its announcement). A channel of the channels
    /// file may list its own (events). Unset: announce.
    #[arg(long, env = "EVENTS", value_parser = OrBlank(Reads(read_events)), global = true)]
    pub events: Option<Blankable<Vec<Event>>>,
    /// Post a result only within this long of the match's end as its page shows it (24h, 90m):
    /// an older result, on a backfill or a page of old matches, is never posted. Unset: 24h.
    #[arg(long, env = "RESULT_MAX_AGE", value_parser = OrBlank(Reads(read_max_age)), global = true)]
    pub result_max_age: Option<Blankable<std::time::Duration>>,
}

/// The schedule section, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// When a channel without its own `announce_before` announces a match.
    pub lead: Lead,
    /// The zone of a channel without its own `timezone`.
    pub zone: Zone,
    /// `--as-of`: the instant the command's clock reads at start (dry runs and `check-sources`
    /// only); `None`: the system's clock.
    pub as_of: Option<DateTime<Utc>>,
    /// What a channel without its own `events` posts (`EVENTS`; default: announce).
    pub events: Vec<Event>,
    /// `RESULT_MAX_AGE`: the longest after a match's end its result is posted.
    pub result_max_age: std::time::Duration,
}

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule {
            lead: Lead::default(),
            zone: Zone::default(),
            as_of: None,
            events: vec![Event::Announce],
            result_max_age: DEFAULT_RESULT_MAX_AGE,
        }
    }
}

impl ScheduleSettings {
    /// The schedule section (every value was checked as clap read it).
    pub fn validate(&self) -> Schedule {
        Schedule {
            lead: given(self.announce_before).unwrap_or_default(),
            zone: given(self.timezone).unwrap_or_default(),
            as_of: self.as_of,
            events: given(self.events.clone()).unwrap_or_else(|| vec![Event::Announce]),
            result_max_age: given(self.result_max_age).unwrap_or(DEFAULT_RESULT_MAX_AGE),
        }
    }
}

fn read_lead(raw: &str) -> Result<Lead, Problem> {
    Lead::parse(raw).map_err(Problem::Lead)
}

fn read_events(raw: &str) -> Result<Vec<Event>, Problem> {
    parse_events(raw.split(',')).map_err(|entry| {
        Problem::Events(format!(
            "{entry:?} is not an event: list one or more of {}, comma-separated",
            Event::names()
        ))
    })
}

fn read_max_age(raw: &str) -> Result<std::time::Duration, Problem> {
    match humantime::parse_duration(raw.trim()) {
        Ok(age) if !age.is_zero() => Ok(age),
        _ => Err(Problem::Events(
            "expected a duration such as 24h, 90m or 2d (humantime's units), over zero".into(),
        )),
    }
}

fn read_zone(raw: &str) -> Result<Zone, Problem> {
    Zone::parse(raw).map_err(Problem::Zone)
}

fn read_instant(raw: &str) -> Result<DateTime<Utc>, Problem> {
    DateTime::parse_from_rfc3339(raw)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| Problem::NotInstant)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::time::Duration;

    #[derive(Parser)]
    struct Only {
        #[command(flatten)]
        schedule: ScheduleSettings,
    }

    fn parse(args: &[&str]) -> Result<Schedule, clap::Error> {
        Only::try_parse_from(std::iter::once("bot").chain(args.iter().copied())).map(|o| o.schedule.validate())
    }

    #[test]
    fn unset_or_blank_announces_at_first_sighting_in_utc() {
        assert_eq!(parse(&[]).unwrap(), Schedule::default());
        let blank = parse(&["--announce-before", " ", "--timezone", ""]).unwrap();
        assert_eq!(blank, Schedule::default());
        let set = parse(&["--announce-before", "90m", "--timezone", "Asia/Kolkata"]).unwrap();
        assert_eq!(set.lead, Lead::Before(Duration::from_secs(5400)));
        assert_eq!(set.zone.name(), "Asia/Kolkata");
    }

    #[test]
    fn a_bad_value_is_a_usage_error_naming_the_variable() {
        let e = parse(&["--timezone", "Asia/Mumbai"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
        let said = e.to_string();
        assert!(
            said.contains("invalid TIMEZONE=\"Asia/Mumbai\": not an IANA time zone name"),
            "{said}"
        );
        let said = parse(&["--announce-before", "soon"]).unwrap_err().to_string();
        assert!(said.contains("invalid ANNOUNCE_BEFORE=\"soon\": "), "{said}");
        let said = parse(&["--as-of", "tomorrow"]).unwrap_err().to_string();
        assert!(
            said.contains("invalid --as-of=\"tomorrow\": expected an RFC 3339 time"),
            "{said}"
        );
    }
}

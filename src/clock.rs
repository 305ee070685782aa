//! The wall clock the bot judges time by: when a platform's rate limit resets, whether a claim
//! is stuck, how old a result is, when a match's announcement window opens. One value, passed
//! in, so a test moves time instead of waiting for it, and so every judgement of one process
//! reads the same clock. `run` also waits by it ([`Clock::sleep_until`]): a test's clock of its
//! own ([`Clock::manual`]) lets a day of five-minute polls pass in moments.
//!
//! The times a claim record carries and the judgements made of them (stuck, a reconciler's
//! lease, Mastodon's windows) are not read here but from the claim store's own clock
//! (`ClaimStore::now`), one clock for every replica; only the embedded store, on one host,
//! reads this one.

use chrono::{DateTime, TimeDelta, Utc};
use std::sync::{Arc, Mutex};

/// The system's UTC clock (or a clock of its own, [`Clock::manual`]), moved by a fixed offset:
/// zero in production; a test gives a process a clock some seconds ahead instead of sleeping
/// until a deadline passes. The offset is kept apart from the source so that the source can
/// become another clock (the store's) with the offset still applied on top. Clones share a
/// manual clock's time.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    /// Added to the source's time.
    offset: TimeDelta,
    /// What is read.
    source: Source,
}

/// Where a [`Clock`] reads the time.
#[derive(Debug, Clone, Default)]
enum Source {
    /// The system's clock.
    #[default]
    System,
    /// A time of its own, moved only by [`Clock::advance`] and [`Clock::sleep_until`].
    Manual(Arc<Mutex<DateTime<Utc>>>),
}

impl PartialEq for Clock {
    fn eq(&self, other: &Clock) -> bool {
        self.offset == other.offset
            && match (&self.source, &other.source) {
                (Source::System, Source::System) => true,
                (Source::Manual(a), Source::Manual(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl Eq for Clock {}

impl Clock {
    /// The system's clock as it is.
    pub fn system() -> Clock {
        Clock::default()
    }

    /// A clock that reads `at` now and then runs on with the system's: what a dry run judged
    /// "as if it were `at`" reads (every later reading is as far past `at` as real time is past
    /// this call).
    pub fn from(at: DateTime<Utc>) -> Clock {
        Clock::system().ahead(at - Utc::now())
    }

    /// A clock of its own, reading `at` until it is moved: by [`Clock::advance`], or by
    /// [`Clock::sleep_until`], which moves it to the time slept to instead of waiting. For
    /// tests and simulations: `run` on such a clock polls a day of five-minute cycles as fast
    /// as the cycles themselves run. Its clones share its time.
    pub fn manual(at: DateTime<Utc>) -> Clock {
        Clock {
            offset: TimeDelta::zero(),
            source: Source::Manual(Arc::new(Mutex::new(at))),
        }
    }

    /// This clock, `by` later (earlier when negative): what a process whose clock runs `by`
    /// ahead would read.
    #[must_use]
    pub fn ahead(self, by: TimeDelta) -> Clock {
        Clock {
            offset: self.offset + by,
            source: self.source,
        }
    }

    /// The time now, by this clock (UTC).
    pub fn now(&self) -> DateTime<Utc> {
        let read = match &self.source {
            Source::System => Utc::now(),
            Source::Manual(time) => *time.lock().unwrap_or_else(std::sync::PoisonError::into_inner),
        };
        read + self.offset
    }

    /// The time of a manual clock ([`Clock::manual`], its offset applied); `None` for the
    /// system's clock. A manual clock is a simulation, and stands for every clock in it: a
    /// Redis or PostgreSQL store handed one judges its records' times by it instead of its own
    /// clock (`TIME`, `clock_timestamp()`), which a test cannot move. A clock that is the
    /// system's moved by an offset is a process's skewed clock, and the store keeps its own.
    pub fn simulated(&self) -> Option<DateTime<Utc>> {
        match &self.source {
            Source::System => None,
            Source::Manual(_) => Some(self.now()),
        }
    }

    /// Moves a manual clock (and its clones) `by` on; the system's clock cannot be moved, and
    /// is left as it is.
    pub fn advance(&self, by: TimeDelta) {
        if let Source::Manual(time) = &self.source {
            let mut time = time.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            *time += by;
        }
    }

    /// Waits until this clock reads `at` (at once when it is past). The system's clock waits
    /// in real time (tokio's timer); a manual clock is moved to `at` and the task yields once,
    /// so that a simulated day takes no longer than its work.
    pub async fn sleep_until(&self, at: DateTime<Utc>) {
        match &self.source {
            Source::System => {
                if let Ok(wait) = (at - self.now()).to_std() {
                    tokio::time::sleep(wait).await;
                }
            }
            Source::Manual(time) => {
                {
                    let mut time = time.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    let target = at - self.offset;
                    if target > *time {
                        *time = target;
                    }
                }
                tokio::task::yield_now().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn a_clock_ahead_reads_the_system_time_plus_its_offset() {
        let before = Utc::now();
        let ahead = Clock::system()
            .ahead(TimeDelta::seconds(90))
            .ahead(TimeDelta::seconds(-30));
        let read = ahead.now();
        let after = Utc::now();
        assert!(read >= before + TimeDelta::seconds(60) && read <= after + TimeDelta::seconds(60));
        assert!(Clock::system().now() >= after);
    }

    #[test]
    fn a_clock_from_an_instant_reads_it_and_runs_on() {
        let at = Utc.with_ymd_and_hms(2024, 6, 16, 6, 0, 0).unwrap();
        let clock = Clock::from(at);
        let read = clock.now();
        assert!(read >= at && read < at + TimeDelta::seconds(5), "{read}");
    }

    #[tokio::test]
    async fn a_manual_clock_moves_only_when_told_and_its_clones_share_its_time() {
        let at = Utc.with_ymd_and_hms(2024, 6, 16, 6, 0, 0).unwrap();
        let clock = Clock::manual(at);
        let clone = clock.clone();
        assert_eq!(clock.now(), at);
        clock.advance(TimeDelta::minutes(5));
        assert_eq!(clone.now(), at + TimeDelta::minutes(5));
        // Sleeping moves it to the time slept to, at once; never back.
        let started = std::time::Instant::now();
        clone.sleep_until(at + TimeDelta::days(2)).await;
        assert_eq!(clock.now(), at + TimeDelta::days(2));
        clone.sleep_until(at).await;
        assert_eq!(clock.now(), at + TimeDelta::days(2));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        // An offset applies on top, and a sleep to the offset clock's time lands there.
        let ahead = clock.clone().ahead(TimeDelta::hours(1));
        assert_eq!(ahead.now(), at + TimeDelta::days(2) + TimeDelta::hours(1));
        ahead.sleep_until(at + TimeDelta::days(3)).await;
        assert_eq!(ahead.now(), at + TimeDelta::days(3));
        assert_eq!(clock.now(), at + TimeDelta::days(3) - TimeDelta::hours(1));
        assert_eq!(clock, clone);
        assert_ne!(clock, Clock::system());
    }
}

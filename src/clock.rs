//! The wall clock the bot judges time by: when a platform's rate limit resets, whether a claim
//! is stuck, how old a result is. One value, passed in, so a test moves time instead of waiting
//! for it, and so every judgement of one process reads the same clock.

use chrono::{DateTime, TimeDelta, Utc};

/// The system's UTC clock, moved by a fixed offset: zero in production; a test gives a process
/// a clock some seconds ahead instead of sleeping until a deadline passes. The offset is kept
/// apart from the source so that the source can become another clock (the store's) with the
/// offset still applied on top.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Clock {
    /// Added to the system's time.
    offset: TimeDelta,
}

impl Clock {
    /// The system's clock as it is.
    pub fn system() -> Clock {
        Clock::default()
    }

    /// This clock, `by` later (earlier when negative): what a process whose clock runs `by`
    /// ahead would read.
    #[must_use]
    pub fn ahead(self, by: TimeDelta) -> Clock {
        Clock {
            offset: self.offset + by,
        }
    }

    /// The time now, by this clock (UTC).
    pub fn now(&self) -> DateTime<Utc> {
        Utc::now() + self.offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

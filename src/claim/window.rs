//! When a change may be made to a claim, judged by the store's clock in the very step that
//! makes it (Redis `TIME` inside the compare-and-set script, PostgreSQL's `clock_timestamp()`
//! inside the transaction that holds the row, the embedded store's clock inside its write
//! transaction). A claim taken as stuck, or to repeat its post, is taken only inside its
//! window as the store tells time: one clock for every replica, so that a replica whose own
//! clock is minutes off can neither take a claim early nor repeat a post late.

use chrono::{DateTime, Utc};

/// The store's times at which a change is allowed: from `from` (inclusive) and before `until`
/// (exclusive), UTC; either unbounded when `None`. Given to
/// [`ClaimStore::adopt_for_replay`](super::ClaimStore::adopt_for_replay), judged by the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    /// The first time the change is allowed (a stuck claim's owner deadline, the end of a
    /// post's settling, a reconciler's lease).
    pub from: Option<DateTime<Utc>>,
    /// The time from which the change is no longer allowed (Mastodon's window to repeat).
    pub until: Option<DateTime<Utc>>,
}

impl Window {
    /// Any time: the owner's own changes, which its token alone allows.
    pub const ANY: Window = Window {
        from: None,
        until: None,
    };

    /// Whether `now` (the store's time) is inside.
    #[must_use]
    pub fn holds(&self, now: DateTime<Utc>) -> bool {
        self.from.is_none_or(|from| now >= from) && self.until.is_none_or(|until| now < until)
    }

    /// The bounds as the store's scripts read them: Unix microseconds, empty for none.
    pub(crate) fn micros(&self) -> (String, String) {
        let text = |t: Option<DateTime<Utc>>| t.map(|t| t.timestamp_micros().to_string()).unwrap_or_default();
        (text(self.from), text(self.until))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeDelta;

    #[test]
    fn a_window_holds_from_its_start_and_before_its_end() {
        let at = Utc::now();
        let w = Window {
            from: Some(at),
            until: Some(at + TimeDelta::minutes(1)),
        };
        assert!(!w.holds(at - TimeDelta::microseconds(1)));
        assert!(w.holds(at));
        assert!(w.holds(at + TimeDelta::seconds(59)));
        assert!(!w.holds(at + TimeDelta::minutes(1)));
        assert!(Window::ANY.holds(at));
        assert_eq!(Window::ANY.micros(), (String::new(), String::new()));
        assert_eq!(w.micros().0, at.timestamp_micros().to_string());
    }
}

//! Pace and limits: how fast this process may post.
//!
//! Two independent brakes:
//! - [`PostPace`]: a local limiter (posts per minute and per day), so a page that suddenly lists
//!   thirty matches does not turn into thirty posts in one second.
//! - [`RateGate`]: what the platform itself says. Every answer of a post (success and error)
//!   carries rate limits ([`RateLimits`]: X's headers are read here, each other sink reads its
//!   own); when a budget reaches 0, or after a 429, the gate closes until the platform's reset
//!   time and no new match should be claimed before then.
//!
//! Documentation: <https://docs.x.com/x-api/fundamentals/rate-limits>.

use chrono::{DateTime, Utc};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use reqwest::header::HeaderMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long the gate stays closed after a 429 that carries no usable reset header. X's
/// per-endpoint windows are 15 minutes long (see the rate-limits documentation).
pub const DEFAULT_429_BACKOFF: Duration = Duration::from_secs(15 * 60);

/// One day, in seconds: the window of [`PostPace`]'s daily budget.
const DAY: Duration = Duration::from_secs(86_400);

/// The rate-limit headers of one X answer. A field is `None` when its header was absent or
/// unreadable. Resets are instants (X sends them as Unix epoch seconds).
///
/// Documentation: <https://docs.x.com/x-api/fundamentals/rate-limits>
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RateLimits {
    /// `x-rate-limit-remaining`: requests left in the endpoint's current window.
    pub remaining: Option<u32>,
    /// `x-rate-limit-reset`: when the endpoint's window resets.
    pub reset: Option<DateTime<Utc>>,
    /// `x-user-limit-24hour-remaining`: posts the user may still create in the 24-hour window.
    pub user_24h_remaining: Option<u32>,
    /// `x-user-limit-24hour-reset`: when the user's 24-hour window resets.
    pub user_24h_reset: Option<DateTime<Utc>>,
}

impl RateLimits {
    /// Reads the four headers from `headers`; `None` when none of them is present.
    pub fn from_headers(headers: &HeaderMap) -> Option<RateLimits> {
        let number = |name: &str| -> Option<u64> { headers.get(name)?.to_str().ok()?.trim().parse().ok() };
        let count = |name: &str| number(name).map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        let instant = |name: &str| {
            number(name)
                .and_then(|s| i64::try_from(s).ok())
                .and_then(|s| DateTime::<Utc>::from_timestamp(s, 0))
        };
        let limits = RateLimits {
            remaining: count("x-rate-limit-remaining"),
            reset: instant("x-rate-limit-reset"),
            user_24h_remaining: count("x-user-limit-24hour-remaining"),
            user_24h_reset: instant("x-user-limit-24hour-reset"),
        };
        (limits != RateLimits::default()).then_some(limits)
    }

    /// The latest reset among the budgets that are exhausted (remaining 0), if any.
    pub fn exhausted_until(&self) -> Option<DateTime<Utc>> {
        let endpoint = (self.remaining == Some(0)).then_some(self.reset).flatten();
        let user = (self.user_24h_remaining == Some(0))
            .then_some(self.user_24h_reset)
            .flatten();
        endpoint.max(user)
    }
}

/// X's verdict on when the next post may be tried, shared by clones (one per process).
///
/// Closed when the last answer said a budget is at 0 (until that budget's reset) or was a 429
/// (until the latest reset header, else [`DEFAULT_429_BACKOFF`]). Callers check it before
/// claiming a match: a claim won while X refuses posts would only be released again.
#[derive(Debug, Clone, Default)]
pub struct RateGate {
    closed_until: Arc<Mutex<Option<DateTime<Utc>>>>,
}

impl RateGate {
    /// An open gate.
    pub fn new() -> RateGate {
        RateGate::default()
    }

    /// When the gate opens again, or `None` when posts may be tried at `now`.
    pub fn closed_until(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let until = *self
            .closed_until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        until.filter(|u| *u > now)
    }

    /// Updates the gate from one X answer with HTTP `status` received at `now`.
    pub fn observe(&self, status: u16, limits: Option<&RateLimits>, now: DateTime<Utc>) {
        let exhausted = limits.and_then(RateLimits::exhausted_until);
        let until = if status == 429 {
            let any_reset = limits.and_then(|l| l.reset.max(l.user_24h_reset));
            let backoff = chrono::Duration::from_std(DEFAULT_429_BACKOFF).unwrap_or_else(|_| chrono::Duration::zero());
            Some(exhausted.or(any_reset).filter(|u| *u > now).unwrap_or(now + backoff))
        } else {
            exhausted.filter(|u| *u > now)
        };
        *self
            .closed_until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = until;
    }
}

/// A post refused by [`PostPace::check`]: the earliest time another post fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("local post pace reached; next post possible in {wait:?}")]
pub struct NotUntil {
    /// How long to wait from now.
    pub wait: Duration,
}

/// A local limit on posts per minute and per day (a GCRA limiter from `governor`).
///
/// Each budget allows a burst of its full size, then refills evenly (per-minute: one post every
/// `60 s / per_minute`; per-day: one every `86 400 s / per_day`). Being a GCRA and not a sliding
/// window, the daily budget can let through up to `2 × per_day − 1` posts in a rolling 24 hours
/// after a quiet day; X's own 24-hour limit ([`RateGate`]) remains the hard stop.
///
/// Documentation: <https://docs.rs/governor/0.10/governor/struct.Quota.html>
pub struct PostPace<C: Clock = DefaultClock> {
    per_minute: RateLimiter<NotKeyed, InMemoryState, C, NoOpMiddleware<C::Instant>>,
    per_day: RateLimiter<NotKeyed, InMemoryState, C, NoOpMiddleware<C::Instant>>,
    clock: C,
    /// Slots both budgets granted that no post used (see [`PostPace::give_back`]): the next
    /// checks take these before asking the budgets again. governor cannot return a slot.
    unused: AtomicU32,
}

impl<C: Clock> std::fmt::Debug for PostPace<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PostPace")
    }
}

impl PostPace<DefaultClock> {
    /// At most `per_minute` posts per minute and `per_day` per day, on the system clock.
    pub fn new(per_minute: NonZeroU32, per_day: NonZeroU32) -> PostPace<DefaultClock> {
        PostPace::with_clock(per_minute, per_day, DefaultClock::default())
    }

    /// Waits (with `tokio::time::sleep`) until [`PostPace::check`] lets a post through, and
    /// takes that slot.
    pub async fn until_ready(&self) {
        while let Err(not_until) = self.check() {
            tokio::time::sleep(not_until.wait).await;
        }
    }
}

impl<C: Clock + Clone> PostPace<C> {
    /// As [`PostPace::new`], on `clock` (tests pass a `governor::clock::FakeRelativeClock`).
    pub fn with_clock(per_minute: NonZeroU32, per_day: NonZeroU32, clock: C) -> PostPace<C> {
        let day_period = DAY / per_day.get();
        // `with_period` is `None` only for a zero period; 86 400 s / u32::MAX is still > 0 ns.
        let day_quota = Quota::with_period(day_period)
            .unwrap_or_else(|| Quota::per_second(per_day))
            .allow_burst(per_day);
        PostPace {
            per_minute: RateLimiter::direct_with_clock(Quota::per_minute(per_minute), clock.clone()),
            per_day: RateLimiter::direct_with_clock(day_quota, clock.clone()),
            clock,
            unused: AtomicU32::new(0),
        }
    }

    /// Takes a post slot now if both budgets have one.
    ///
    /// # Errors
    /// [`NotUntil`] with the wait until a slot frees. When the minute budget has a slot but the
    /// day budget does not, the minute slot is spent anyway (governor cannot test two limiters
    /// atomically); this only matters while the day budget is empty, when nothing posts.
    pub fn check(&self) -> Result<(), NotUntil> {
        let spare = self
            .unused
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if spare.is_ok() {
            return Ok(());
        }
        let now = self.clock.now();
        self.per_minute
            .check()
            .and_then(|()| self.per_day.check())
            .map_err(|not_until| NotUntil {
                wait: not_until.wait_time_from(now),
            })
    }
}

impl<C: Clock> PostPace<C> {
    /// Gives back a slot [`PostPace::check`] granted that no post used (the match it was taken
    /// for turned out held, or the store failed before the claim): the next check takes it
    /// instead of a new one, so a slot is taken before claiming (a paced cycle claims nothing
    /// it cannot post) without a lost claim costing one. Posts never outnumber the slots the
    /// budgets granted.
    pub fn give_back(&self) {
        self.unused.fetch_add(1, Ordering::SeqCst);
    }
}

/// Reads the limits of one X answer and updates `gate` with them; returns the limits.
pub(crate) fn observe(gate: &RateGate, status: u16, headers: &HeaderMap) -> Option<RateLimits> {
    let limits = RateLimits::from_headers(headers);
    gate.observe(status, limits.as_ref(), Utc::now());
    limits
}

#[cfg(test)]
mod tests {
    use super::*;
    use governor::clock::FakeRelativeClock;
    use reqwest::header::HeaderValue;

    fn nz(n: u32) -> NonZeroU32 {
        NonZeroU32::new(n).unwrap()
    }

    #[test]
    fn the_minute_budget_allows_its_burst_then_one_post_per_interval() {
        let clock = FakeRelativeClock::default();
        let pace = PostPace::with_clock(nz(2), nz(100), clock.clone());
        assert_eq!(pace.check(), Ok(()));
        assert_eq!(pace.check(), Ok(()));
        assert_eq!(
            pace.check(),
            Err(NotUntil {
                wait: Duration::from_secs(30)
            })
        );
        clock.advance(Duration::from_secs(30));
        assert_eq!(pace.check(), Ok(()));
    }

    #[test]
    fn the_day_budget_stops_posts_the_minute_budget_would_allow() {
        let clock = FakeRelativeClock::default();
        let pace = PostPace::with_clock(nz(10), nz(2), clock.clone());
        assert_eq!(pace.check(), Ok(()));
        assert_eq!(pace.check(), Ok(()));
        // 86 400 s / 2 = one post every 12 hours once the burst is spent.
        assert_eq!(
            pace.check(),
            Err(NotUntil {
                wait: Duration::from_secs(43_200)
            })
        );
        clock.advance(Duration::from_secs(43_200));
        assert_eq!(pace.check(), Ok(()));
    }

    #[test]
    fn a_slot_given_back_is_the_next_one_taken_and_no_more_are_made() {
        let clock = FakeRelativeClock::default();
        let pace = PostPace::with_clock(nz(10), nz(1), clock);
        assert_eq!(pace.check(), Ok(()));
        assert!(pace.check().is_err(), "the day's one slot is taken");
        pace.give_back();
        assert_eq!(pace.check(), Ok(()), "the slot given back");
        assert!(pace.check().is_err(), "given back once, taken once");
    }

    #[tokio::test(start_paused = true)]
    async fn until_ready_returns_at_once_while_the_budget_has_room() {
        let pace = PostPace::new(nz(5), nz(5));
        let started = tokio::time::Instant::now();
        for _ in 0..5 {
            pace.until_ready().await;
        }
        assert_eq!(started.elapsed(), Duration::ZERO);
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(secs, 0).unwrap()
    }

    #[test]
    fn the_four_headers_are_read_and_resets_are_epoch_seconds() {
        let h = headers(&[
            ("x-rate-limit-remaining", "99"),
            ("x-rate-limit-reset", "1767225600"),
            ("x-user-limit-24hour-remaining", "16"),
            ("x-user-limit-24hour-reset", "1767312000"),
        ]);
        assert_eq!(
            RateLimits::from_headers(&h),
            Some(RateLimits {
                remaining: Some(99),
                reset: Some(at(1_767_225_600)),
                user_24h_remaining: Some(16),
                user_24h_reset: Some(at(1_767_312_000)),
            })
        );
        assert_eq!(
            RateLimits::from_headers(&headers(&[("x-rate-limit-remaining", "soon")])),
            None
        );
    }

    #[test]
    fn an_exhausted_user_budget_closes_the_gate_until_its_reset() {
        let gate = RateGate::new();
        let limits = RateLimits {
            remaining: Some(50),
            reset: Some(at(1_000)),
            user_24h_remaining: Some(0),
            user_24h_reset: Some(at(90_000)),
        };
        gate.observe(201, Some(&limits), at(10));
        assert_eq!(gate.closed_until(at(10)), Some(at(90_000)));
        assert_eq!(gate.closed_until(at(90_000)), None);
    }

    #[test]
    fn a_429_without_headers_closes_the_gate_for_the_default_backoff() {
        let gate = RateGate::new();
        gate.observe(429, None, at(100));
        assert_eq!(gate.closed_until(at(100)), Some(at(100 + 900)));
    }
}

//! Per-source backoff: a source that keeps failing is skipped for exponentially more poll
//! cycles, so a broken or slow site is asked less often while the other sources are read every
//! cycle. A success resets it. Counted in cycles, not seconds, so it scales with
//! `POLL_INTERVAL_SECS` and needs no clock.

/// Consecutive failures after which a source starts being skipped. One failure is often a
/// blip (a timeout, a deploy on their side): it is simply retried next cycle.
pub const BACKOFF_AFTER_FAILURES: u32 = 2;
/// Most cycles a failing source is skipped in a row: with the default 300 s interval, 16
/// cycles is 80 minutes, so a site that comes back is read again within the hour and a half.
pub const MAX_SKIPPED_CYCLES: u32 = 16;

/// The backoff state of one source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Backoff {
    /// Failures since the last success.
    consecutive_failures: u32,
    /// Cycles still to skip before the next attempt.
    skip_left: u32,
}

/// What to do with a source this cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// Read it.
    Read,
    /// Skip it; `cycles_left` more cycles will be skipped after this one.
    Skip {
        /// Cycles still to skip after this one.
        cycles_left: u32,
    },
}

/// Cycles to skip after `failures` consecutive failures: none below
/// [`BACKOFF_AFTER_FAILURES`], then 1, 2, 4, 8, … capped at [`MAX_SKIPPED_CYCLES`].
pub fn skipped_cycles(failures: u32) -> u32 {
    match failures.checked_sub(BACKOFF_AFTER_FAILURES) {
        None => 0,
        Some(doublings) => 1u32.checked_shl(doublings).unwrap_or(u32::MAX).min(MAX_SKIPPED_CYCLES),
    }
}

impl Backoff {
    /// Whether to read the source this cycle (consumes one skipped cycle when not).
    pub fn turn(&mut self) -> Turn {
        if self.skip_left == 0 {
            Turn::Read
        } else {
            self.skip_left -= 1;
            Turn::Skip {
                cycles_left: self.skip_left,
            }
        }
    }

    /// Records a failed read; returns how many cycles the source will now be skipped.
    pub fn failed(&mut self) -> u32 {
        self.consecutive_failures = self.consecutive_failures.saturating_add(1);
        self.skip_left = skipped_cycles(self.consecutive_failures);
        self.skip_left
    }

    /// Records a successful read; returns the failures that preceded it (0: it was healthy).
    pub fn succeeded(&mut self) -> u32 {
        let before = self.consecutive_failures;
        *self = Backoff::default();
        before
    }

    /// Failures since the last success.
    pub fn consecutive_failures(&self) -> u32 {
        self.consecutive_failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skip_schedule_doubles_after_the_second_failure_and_is_capped() {
        let schedule: Vec<u32> = (0..=10).map(skipped_cycles).collect();
        assert_eq!(schedule, [0, 0, 1, 2, 4, 8, 16, 16, 16, 16, 16]);
        assert_eq!(skipped_cycles(u32::MAX), MAX_SKIPPED_CYCLES);
    }

    /// Drives a source that always fails for `cycles` cycles; returns which cycles read it.
    fn reads_of_an_always_failing_source(cycles: usize) -> Vec<usize> {
        let mut b = Backoff::default();
        let mut reads = Vec::new();
        for cycle in 0..cycles {
            if b.turn() == Turn::Read {
                reads.push(cycle);
                b.failed();
            }
        }
        reads
    }

    #[test]
    fn an_always_failing_source_is_read_ever_less_often() {
        // Read, read (2nd failure: skip 1), read (skip 2), read (skip 4), read (skip 8), …
        assert_eq!(reads_of_an_always_failing_source(40), [0, 1, 3, 6, 11, 20, 37]);
    }

    #[test]
    fn a_success_resets_the_backoff_so_the_next_cycle_reads_again() {
        let mut b = Backoff::default();
        for _ in 0..5 {
            b.failed();
        }
        assert_eq!(b.turn(), Turn::Skip { cycles_left: 7 });
        assert_eq!(b.succeeded(), 5);
        assert_eq!(b.turn(), Turn::Read);
        assert_eq!(b.failed(), 0, "one failure after a success is not backed off");
    }
}

//! Metric names: a leaf module, so the cycle and the announcer (which record metrics) and the
//! status endpoint (which describes and serves them) share them without importing each other.
//! Units are in the names, as Prometheus recommends.

/// Counter: poll cycles run.
pub const POLLS: &str = "cricket_announcer_polls_total";
/// Counter, label `source`: sources read and parsed.
pub const SOURCE_READS: &str = "cricket_announcer_source_reads_total";
/// Counter, label `source`: source reads that failed (fetch, layout, empty page).
pub const SOURCE_ERRORS: &str = "cricket_announcer_source_errors_total";
/// Counter, label `source`: cycles a source was skipped because it is backing off.
pub const SOURCE_BACKOFF_SKIPS: &str = "cricket_announcer_source_backoff_skips_total";
/// Counter: distinct matches seen, summed over cycles.
pub const MATCHES_SEEN: &str = "cricket_announcer_matches_seen_total";
/// Gauge: distinct matches seen in the last cycle.
pub const MATCHES_LAST_CYCLE: &str = "cricket_announcer_matches_last_cycle";
/// Counter, label `result` (`won`, `lost`): claims attempted.
pub const CLAIMS: &str = "cricket_announcer_claims_total";
/// Counter, label `outcome` (`posted`, `failed`, `deferred`, `would_post`): posts.
pub const POSTS: &str = "cricket_announcer_posts_total";
/// Gauge: claims seen stuck (claimed longer than the post timeout allows) in the last cycle.
pub const STUCK_CLAIMS: &str = "cricket_announcer_stuck_claims";
/// Gauge (label `channel` with a channels file): matches the last cycle left unclaimed because
/// their announcement window (`ANNOUNCE_BEFORE`) had not opened.
pub const MATCHES_WAITING: &str = "cricket_announcer_matches_waiting";
/// Counter: store errors (the store could not answer).
pub const STORE_ERRORS: &str = "cricket_announcer_store_errors_total";
/// Histogram: how long one cycle took, seconds.
pub const CYCLE_DURATION: &str = "cricket_announcer_cycle_duration_seconds";

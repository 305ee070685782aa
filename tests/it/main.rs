//! One integration-test crate: real Redis, real SQLite files, real HTTP servers on loopback.

// Test code: a failed step should fail the test loudly, and the helpers' `pub` is for sibling
// test modules (Cargo.toml's lints are for the product).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_possible_truncation,
    clippy::needless_pass_by_value,
    unreachable_pub
)]

mod announce;
mod backlog;
mod bluesky_pds;
mod channels;
mod claim;
mod cli;
mod contract;
mod daemon;
mod dependencies;
mod deployments;
mod durable;
mod faults;
mod fuzz;
mod helpers;
mod identity;
mod listing;
mod lossy_proxy;
mod operator;
mod pds;
mod post;
mod readme;
mod reconcile;
mod refresh;
mod results;
mod rule;
mod secrets;
mod shorten;
mod sinks;
mod sites;
mod skew;
mod sources;
mod status_page;
mod story;
mod tls;
mod unsettled;
mod upgrade;
mod when;
mod wipe;

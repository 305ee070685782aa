//! One integration-test crate: real Redis, real SQLite files, real HTTP servers on loopback.

mod announce;
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
mod operator;
mod post;
mod readme;
mod reconcile;
mod rule;
mod shorten;
mod sinks;
mod sources;
mod tls;
mod upgrade;
mod wipe;

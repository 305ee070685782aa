//! cricket-announcer watches cricket score pages and announces each match exactly once on each
//! channel (X, Mastodon, Bluesky, Discord, Telegram), with a link to the match page.
//!
//! On a match's first sighting the bot *claims* it in a store with one atomic write whose reply
//! says who won; only the winner renders, shortens and posts. Losers log who holds the claim,
//! since when and in which state. A failed post leaves exactly the state the failure proves.
//!
//! # Layout
//! - [`cli`]: flags and commands; [`config`]: the only reader of the environment, validation.
//! - [`telemetry`]: logging setup; [`clock`]: the wall clock every judgement of time reads.
//! - [`app`]: wiring and the poll cycle (`run`, `backfill`); [`backoff`]: skipping a
//!   source that keeps failing.
//! - [`status`]: the operator's endpoint (`METRICS_ADDR`): Prometheus metrics, `/healthz` and
//!   the status page; [`journal`]: what the running process did, kept in memory for that page;
//!   [`metric_names`]: the metric names the cycle and the announcer record and it serves.
//! - [`announcer`]: the per-match protocol (render → claim → shorten → post → record).
//! - [`cricket`]: domain nouns (`Match`, `MatchKey`, `Format`, …); [`filter`]: which matches are announced;
//!   [`event`]: the posts a channel makes of a match (its announcement, its result).
//! - [`schedule`]: when a match is announced (first sighting, or a lead time before its start);
//!   [`zone`]: the time zone a post tells its start in.
//! - [`source`]: fetching pages and the pure parsers for each layout.
//! - [`claim`]: claim records, tokens, and the Redis (one server, Cluster, Sentinel), embedded
//!   SQLite and PostgreSQL stores; [`reconcile`]: settling unknown posts with the platform.
//! - [`template`]: post templates; [`hashtags`]: a match's hashtags; [`text`]: making scraped
//!   text safe; [`redact`]: what may be
//!   shown of a URL or a setting that may carry a secret.
//! - [`post`]: the [`post::Sink`] each channel posts through (X, Mastodon, Bluesky, Discord,
//!   Telegram), with its length rule and what a failure proves; [`shorten`]: link shorteners;
//!   [`http_client`]: the HTTP client they and the fetcher start from.
//! - [`channels`]: the channels file (where the bot posts: a sink, its secrets by environment
//!   variable, a template, a filter and a pace per channel), read and validated; without one,
//!   [`config`] makes the environment's X account the one channel.
#![deny(missing_docs)]

pub mod announcer;
pub mod app;
pub mod backoff;
pub mod channels;
pub mod claim;
pub mod cli;
pub mod clock;
pub mod config;
pub mod cricket;
pub mod event;
pub mod filter;
pub mod hashtags;
pub mod http_client;
pub mod journal;
pub mod metric_names;
pub mod post;
pub mod reconcile;
pub mod redact;
pub mod schedule;
pub mod shorten;
pub mod source;
pub mod status;
pub mod telemetry;
pub mod template;
pub mod text;
pub mod zone;

/// The User-Agent of every HTTP request: the bot's name and version.
pub const USER_AGENT: &str = concat!(
    "cricket-announcer/",
    env!("CARGO_PKG_VERSION"),
    " (+https://github.com/cricket-announcer)"
);

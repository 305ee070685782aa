//! Logging setup. Logs go to stderr (stdout carries posts and summaries); tests pass a sink.

use std::io::IsTerminal;
use tracing::Subscriber;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

/// A subscriber writing human-readable lines to `sink`, filtered by `filter` (EnvFilter syntax;
/// an invalid filter falls back to `info`). `ansi` colours the output (for terminals only).
pub fn subscriber<W>(filter: &str, sink: W, ansi: bool) -> impl Subscriber + Send + Sync
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(sink)
        .with_target(false)
        .with_ansi(ansi)
        .finish()
}

/// Installs the global subscriber writing to stderr. Call once, at startup.
pub fn init(filter: &str) {
    // Ignore "already set": a second init (in tests) keeps the first subscriber.
    let _ =
        tracing::subscriber::set_global_default(subscriber(filter, std::io::stderr, std::io::stderr().is_terminal()));
}

//! Logging setup. Logs go to stderr (stdout carries posts and summaries); tests pass a sink.
//! Two formats: human-readable lines, or one JSON object per line for log collectors
//! (`LOG_FORMAT=json`).

use std::io::IsTerminal;
use tracing::Subscriber;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (coloured on a terminal).
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `fields`, `span`, `spans`.
    Json,
}

/// A subscriber writing human-readable lines to `sink`, filtered by `filter` (EnvFilter syntax;
/// an invalid filter falls back to `info`). `ansi` colours the output (for terminals only).
pub fn subscriber<W>(filter: &str, sink: W, ansi: bool) -> impl Subscriber + Send + Sync
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .with_env_filter(env_filter(filter))
        .with_writer(sink)
        .with_target(false)
        .with_ansi(ansi)
        // A log line that cannot be written (stderr a closed pipe) has nowhere to be reported:
        // the default reports it with `eprintln!`, which panics on that same stderr.
        .log_internal_errors(false)
        .finish()
}

/// A subscriber writing one JSON object per line to `sink`, filtered as [`subscriber`].
pub fn json_subscriber<W>(filter: &str, sink: W) -> impl Subscriber + Send + Sync
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(env_filter(filter))
        .with_writer(sink)
        .with_current_span(true)
        .log_internal_errors(false)
        .finish()
}

fn env_filter(filter: &str) -> EnvFilter {
    EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"))
}

/// Installs the global subscriber writing to stderr in `format`. Call once, at startup.
pub fn init(filter: &str, format: LogFormat) {
    // Ignore "already set": a second init (in tests) keeps the first subscriber.
    let _ = match format {
        LogFormat::Text => tracing::subscriber::set_global_default(subscriber(
            filter,
            std::io::stderr,
            std::io::stderr().is_terminal(),
        )),
        LogFormat::Json => tracing::subscriber::set_global_default(json_subscriber(filter, std::io::stderr)),
    };
}

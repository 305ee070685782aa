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

/// An error and its causes (`source()` chain) as one line, `error: cause: cause`, each text
/// shown once: a cause whose text an outer error already includes is skipped. For the
/// `error.cause_chain` log field and the binary's last error line, where a `Debug` dump of
/// nested error types would name Rust types, not what went wrong.
pub struct CauseChain<'a>(pub &'a (dyn std::error::Error + 'static));

impl std::fmt::Display for CauseChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut shown = String::new();
        let mut next: Option<&(dyn std::error::Error + 'static)> = Some(self.0);
        while let Some(e) = next {
            let text = e.to_string();
            if !text.is_empty() && !shown.contains(&text) {
                if !shown.is_empty() {
                    shown.push_str(": ");
                }
                shown.push_str(&text);
            }
            next = e.source();
        }
        f.write_str(&shown)
    }
}

#[cfg(test)]
mod tests {
    use super::CauseChain;

    #[derive(Debug, thiserror::Error)]
    enum Inner {
        #[error("connection refused")]
        Refused,
    }

    #[derive(Debug, thiserror::Error)]
    enum Outer {
        #[error("source cricbuzz failed")]
        Source {
            #[source]
            source: Inner,
        },
        #[error("store unavailable: {source}")]
        Store {
            #[source]
            source: Inner,
        },
    }

    #[test]
    fn a_cause_chain_names_each_cause_once_and_no_rust_type() {
        let e = Outer::Source { source: Inner::Refused };
        assert_eq!(CauseChain(&e).to_string(), "source cricbuzz failed: connection refused");
        // The outer message already quotes its cause: it is not repeated.
        let e = Outer::Store { source: Inner::Refused };
        assert_eq!(CauseChain(&e).to_string(), "store unavailable: connection refused");
    }
}

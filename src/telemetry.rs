//! Logging setup. Logs go to stderr (stdout carries posts and summaries); tests pass a sink.
//! Two formats: human-readable lines, or one JSON object per line for log collectors
//! (`LOG_FORMAT=json`).

use std::io::IsTerminal;
use tracing::field::{Field, Visit};
use tracing::span::Record;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields, MakeWriter};
use tracing_subscriber::registry::LookupSpan;
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
/// an invalid filter falls back to `info`: [`check_filter`] refuses one at startup). `ansi`
/// colours the level (for terminals only). Lines read `TIME LEVEL message field=value …`, see
/// [`PeopleFormat`].
pub fn subscriber<W>(filter: &str, sink: W, ansi: bool) -> impl Subscriber + Send + Sync
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .with_env_filter(env_filter(filter))
        .with_writer(sink)
        .with_ansi(ansi)
        // A log line that cannot be written (stderr a closed pipe) has nowhere to be reported:
        // the default reports it with `eprintln!`, which panics on that same stderr. (Set
        // before the event format, which keeps it.)
        .log_internal_errors(false)
        .fmt_fields(EscapedFields)
        .event_format(PeopleFormat)
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

/// The level names a log filter accepts.
const LEVELS: [&str; 6] = ["trace", "debug", "info", "warn", "error", "off"];

/// A log filter (`RUST_LOG` / `--log`) that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FilterError {
    /// A directive whose level is not a level name (EnvFilter would read it as a target).
    #[error("{0:?} is not a log level; expected one of {levels} (or TARGET=LEVEL, e.g. cricket_announcer=debug)", levels = LEVELS.join(", "))]
    NotALevel(String),
    /// A directive EnvFilter itself refuses (its message).
    #[error("{0}")]
    Refused(String),
}

/// Checks a log filter (`RUST_LOG` / `--log`) strictly, for clap: each comma-separated
/// directive is a level (`info`) or `TARGET=LEVEL` (`cricket_announcer=debug`). EnvFilter
/// itself reads a bare unknown word (`inf`) as a target name and so silently logs nothing of
/// ours at that level: a typo must be an error instead.
///
/// # Errors
/// [`FilterError`]: the directive that is not a level, naming the accepted ones.
pub fn check_filter(raw: &str) -> Result<String, FilterError> {
    let level_ok = |l: &str| LEVELS.iter().any(|n| n.eq_ignore_ascii_case(l.trim()));
    for directive in raw.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        // Span filters (`target[span{field}]=level`) are EnvFilter's own syntax: left to it.
        if directive.contains('[') {
            continue;
        }
        let level = directive.rsplit_once('=').map_or(directive, |(_, level)| level);
        if !level_ok(level) {
            return Err(FilterError::NotALevel(level.to_string()));
        }
    }
    // EnvFilter's parse error is not `Eq`: its message is kept.
    EnvFilter::try_new(raw).map_err(|e| FilterError::Refused(e.to_string()))?;
    Ok(raw.to_string())
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

/// Separates the fields of a span as [`EscapedFields`] stores them: a control character, which
/// escaping never leaves in a value, so [`PeopleFormat`] can split them again.
const FIELD_SEPARATOR: char = '\u{1f}';

/// The fields of one event or span, each value escaped ([`crate::text::escaped`]) and quoted
/// when it holds `=` or `"`, so a value from a store or a page (an owner name, a title) can
/// forge neither a line, nor a field, nor terminal control.
#[derive(Default)]
struct Fields(Vec<(&'static str, String)>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name(), shown(field.name(), value)));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let text = format!("{value:?}");
        // A `?string` is already quoted, its quotes and controls escaped by `Debug`.
        let quoted = text.len() >= 2 && text.starts_with('"') && text.ends_with('"');
        let text = if quoted { text } else { shown(field.name(), &text) };
        self.0.push((field.name(), text));
    }
}

fn shown(name: &str, value: &str) -> String {
    let value = crate::text::escaped(value);
    if name == "message" || !value.contains(['=', '"']) {
        return value.into_owned();
    }
    format!("\"{}\"", value.replace('"', "\\\""))
}

/// Formats span fields for [`PeopleFormat`] (escaped, `FIELD_SEPARATOR` between them).
pub struct EscapedFields;

impl<'w> FormatFields<'w> for EscapedFields {
    fn format_fields<R: RecordFields>(&self, mut writer: Writer<'w>, fields: R) -> std::fmt::Result {
        let mut found = Fields::default();
        fields.record(&mut found);
        for (i, (name, value)) in found.0.iter().enumerate() {
            if i > 0 {
                write!(writer, "{FIELD_SEPARATOR}")?;
            }
            write!(writer, "{name}={value}")?;
        }
        Ok(())
    }

    fn add_fields(&self, current: &'w mut FormattedFields<Self>, fields: &Record<'_>) -> std::fmt::Result {
        if !current.fields.is_empty() {
            current.fields.push(FIELD_SEPARATOR);
        }
        let writer = current.as_writer();
        self.format_fields(writer, fields)
    }
}

/// Log lines for people: `TIME LEVEL message field=value … span_field=value …`. Unlike the
/// default format, no span *name* is printed (a reader has no use for `announce_unheld{…}:`),
/// only the span's fields that the event does not already carry, and an error's text once:
/// `error=` holds the cause chain when the event has one, else the message.
pub struct PeopleFormat;

impl<S, N> FormatEvent<S, N> for PeopleFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> std::fmt::Result {
        let level = *event.metadata().level();
        write!(writer, "{} ", chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.6fZ"))?;
        if writer.has_ansi_escapes() {
            let colour = match level {
                Level::ERROR => 31,
                Level::WARN => 33,
                Level::INFO => 32,
                Level::DEBUG => 34,
                Level::TRACE => 35,
            };
            write!(writer, "\x1b[{colour}m{level:>5}\x1b[0m ")?;
        } else {
            write!(writer, "{level:>5} ")?;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let has_chain = fields.0.iter().any(|(n, _)| *n == "error.cause_chain");
        let mut names: Vec<&str> = Vec::with_capacity(fields.0.len() + 4);
        let mut first = true;
        for (name, value) in &fields.0 {
            let name = match *name {
                "message" => {
                    write!(writer, "{value}")?;
                    first = false;
                    continue;
                }
                "error.message" if has_chain => continue,
                "error.message" | "error.cause_chain" => "error",
                other => other,
            };
            write!(writer, "{}{name}={value}", if first { "" } else { " " })?;
            first = false;
            names.push(name);
        }
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                let extensions = span.extensions();
                let Some(formatted) = extensions.get::<FormattedFields<N>>() else {
                    continue;
                };
                for field in formatted.fields.split(FIELD_SEPARATOR).filter(|f| !f.is_empty()) {
                    let name = field.split_once('=').map_or(field, |(n, _)| n);
                    if !names.contains(&name) {
                        write!(writer, " {field}")?;
                    }
                }
            }
        }
        writeln!(writer)
    }
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

    /// The lines a subscriber of [`super::subscriber`] writes while `f` runs.
    fn logged(filter: &str, f: impl FnOnce()) -> String {
        let sink = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        let writer = {
            let sink = sink.clone();
            move || SinkWriter(sink.clone())
        };
        tracing::subscriber::with_default(super::subscriber(filter, writer, false), f);
        let bytes = sink.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    struct SinkWriter(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for SinkWriter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_text_line_has_no_span_name_escapes_values_and_says_an_error_once() {
        let text = logged("info", || {
            let span = tracing::info_span!(
                "announce_unheld",
                match_key = "2026-07-17_a-v-b_final",
                source = "cricbuzz:1"
            );
            let _entered = span.enter();
            let e = Outer::Source { source: Inner::Refused };
            tracing::info!(owner = "evil\nINFO forged line\u{1b}[2J", "skipped");
            tracing::info!(owner = "a state=posted", "forged field");
            tracing::error!(error.cause_chain = %CauseChain(&e), "source failed");
            tracing::debug!("held, not shown at info");
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        let (_, first) = lines[0].split_once(' ').unwrap();
        assert_eq!(
            first,
            r#" INFO skipped owner=evil\nINFO forged line\u{1b}[2J match_key=2026-07-17_a-v-b_final source=cricbuzz:1"#
        );
        assert!(lines[1].contains(r#"owner="a state=posted""#), "{text}");
        let (_, second) = lines[2].split_once(' ').unwrap();
        assert_eq!(
            second,
            r#"ERROR source failed error=source cricbuzz failed: connection refused match_key=2026-07-17_a-v-b_final source=cricbuzz:1"#
        );
        assert!(!text.contains("announce_unheld"), "{text}");
    }

    #[test]
    fn a_log_filter_that_is_not_a_level_is_refused() {
        assert_eq!(
            super::check_filter("info,cricket_announcer=debug").as_deref(),
            Ok("info,cricket_announcer=debug")
        );
        assert_eq!(super::check_filter("WARN").as_deref(), Ok("WARN"));
        assert_eq!(
            super::check_filter("inf"),
            Err(super::FilterError::NotALevel("inf".into()))
        );
        assert_eq!(
            super::FilterError::NotALevel("inf".into()).to_string(),
            "\"inf\" is not a log level; expected one of trace, debug, info, warn, error, off (or TARGET=LEVEL, e.g. cricket_announcer=debug)"
        );
        assert!(super::check_filter("cricket_announcer=loud").is_err());
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

//! What every command prints with: stdout that a closed reader does not turn into an error,
//! the summary line, and the store's name as it may be shown.

use cricket_announcer::app::Summary;
use cricket_announcer::config::{Config, StoreConfig};
use secrecy::ExposeSecret;
use std::io::Write;

/// Writes `text` to stdout. A closed stdout (`| head -1`) is not an error for a table: the
/// reader had what it wanted.
pub(super) fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes `text` to stdout: `Ok(false)` when stdout is closed (`| head -1`: the reader had
/// what it wanted, and a streaming command stops its work there, quietly).
pub(super) fn write_stdout_while_read(text: &str) -> std::io::Result<bool> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(e),
    }
}

/// Prints the summary line. A closed stdout is not an error here: the exit code still says how
/// the run went (and `println!` would panic on it).
pub(super) fn print_summary(what: &str, summary: &Summary, ok: bool, config: &Config) {
    let mut out = std::io::stdout().lock();
    let _ = if config.json() {
        // `posted` counts the posts printed in a dry run; `dry_run` says which it was.
        writeln!(
            out,
            "{}",
            serde_json::json!({ "summary": summary, "ok": ok, "dry_run": config.dry_run() })
        )
    } else {
        writeln!(out, "{what}: {}", summary.line(config.dry_run()))
    };
}

/// Where claims are kept, as it may be shown: a URL's host, port and path only (no user,
/// password or options), or the embedded file.
pub(super) fn store_label(config: &Config) -> String {
    let url = |kind: &str, raw: &str| match url::Url::parse(raw) {
        Ok(u) => format!(
            "{kind} {}://{}{}{}",
            u.scheme(),
            u.host_str().unwrap_or(""),
            u.port().map(|p| format!(":{p}")).unwrap_or_default(),
            u.path()
        ),
        Err(_) => format!("{kind} (URL hidden)"),
    };
    match &config.store.backend {
        StoreConfig::Redis(u) => url("redis", u.expose_secret()),
        StoreConfig::Postgres(u) => url("postgres", u.expose_secret()),
        StoreConfig::Embedded(path) => format!("embedded {}", path.display()),
    }
}

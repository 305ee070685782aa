//! `check-sources`: every source read once and the store looked at (read-only), as a table or
//! JSON lines.

use super::exit::{Exit, Failure};
use super::output::{store_label, write_stdout};
use crate::tables::{self, Column};
use cricket_announcer::app::{check_eviction, check_sources as read_each, open_store, SourceCheck, SourceStatus};
use cricket_announcer::claim::{ClaimError, EvictionSafety, PostgresClaims, PostgresError};
use cricket_announcer::config::{Config, StoreConfig};
use cricket_announcer::telemetry::CauseChain;
use cricket_announcer::text::escaped;
use secrecy::ExposeSecret;

/// `check-sources`: a row per source, then the store's line; `wide` prints every field in full.
/// Exit 1 when a source or the store failed.
///
/// # Errors
/// A [`Failure`] when the sources' HTTP client cannot be built or the output cannot be written.
pub(super) async fn check_sources(config: &Config, wide: bool) -> Result<Exit, Failure> {
    let checks = read_each(config).await?;
    let store = check_store(config).await;
    let ok = checks.iter().all(|c| c.status == SourceStatus::Ok) && store.as_ref().is_none_or(|(_, s)| s.is_ok());
    let mut text = if config.json() {
        checks
            .iter()
            .map(|c| serde_json::to_string(c).map(|l| l + "\n"))
            .collect::<Result<String, _>>()?
    } else {
        check_table(&checks, wide)
    };
    match (&store, config.json()) {
        (Some((kind, store)), true) => {
            let status = store
                .as_ref()
                .map_or_else(std::clone::Clone::clone, |safe| format!("ok ({safe})"));
            text.push_str(&format!(
                "{}\n",
                serde_json::json!({ "store": kind, "ok": store.is_ok(), "status": status })
            ));
        }
        (Some((kind, Ok(safe))), false) => text.push_str(&format!("store {kind}: ok ({safe})\n")),
        (Some((kind, Err(e))), false) => text.push_str(&format!("store {kind}: ERROR: {e}\n")),
        (None, _) => {}
    }
    write_stdout(&text)?;
    Ok(Exit::done_if(ok))
}

/// `check-sources` for people: a row per source (source, matches found, `ok` or `ERROR`),
/// each followed, indented, by the first matches it lists (one a line, cut to fit) or by its
/// error (wrapped, never cut: its end often says what went wrong).
fn check_table(checks: &[SourceCheck], wide: bool) -> String {
    let rows: Vec<Vec<String>> = checks
        .iter()
        .map(|c| {
            let status = if c.status == SourceStatus::Ok { "ok" } else { "ERROR" };
            vec![c.source.clone(), c.matches.to_string(), status.to_string()]
        })
        .collect();
    let columns = [
        Column::cut("SOURCE", 24),
        Column::number("MATCHES"),
        Column::fixed("STATUS / FIRST MATCHES"),
    ];
    let table = tables::render(&columns, &rows, wide);
    let mut lines = table.lines();
    let mut out = format!("{}\n", lines.next().unwrap_or_default());
    for (line, c) in lines.zip(checks) {
        out.push_str(line);
        out.push('\n');
        if let Some(error) = c.status.error() {
            for part in tables::wrap(&escaped(error), tables::WIDTH - 2) {
                out.push_str(&format!("  {part}\n"));
            }
        }
        for m in &c.first {
            let shown = format!("  {}", escaped(m));
            let shown = if wide {
                shown
            } else {
                tables::cut(&shown, tables::WIDTH)
            };
            out.push_str(&shown);
            out.push('\n');
        }
    }
    out
}

/// `check-sources`' look at the store, Redis only (the other stores keep what they are given):
/// can it evict claims? `None` for the other stores; the error's text when the bot would refuse
/// to post (or cannot connect).
async fn check_store(config: &Config) -> Option<(&'static str, Result<String, String>)> {
    match &config.store.backend {
        StoreConfig::Redis(_) => Some((
            "redis",
            match open_store(config).await {
                Ok(store) => check_eviction(&store, config.store.redis.eviction_policy_asserted)
                    .await
                    .map(|safe: EvictionSafety| safe.to_string())
                    .map_err(|e| CauseChain(&e).to_string()),
                Err(e) => Err(CauseChain(&e).to_string()),
            },
        )),
        // Read only: checking never creates the ledger (a mistyped schema would get one).
        StoreConfig::Postgres(url) => Some((
            "postgres",
            match PostgresClaims::connect_read_only(
                url.expose_secret(),
                &config.store.key_prefix,
                &config.store.instance_id,
                config.store.database_ca_file.as_deref(),
            )
            .await
            {
                Ok(_) => Ok(format!("claims ledger found ({})", store_label(config))),
                Err(ClaimError::Postgres {
                    source: PostgresError::NoLedger { schema },
                    ..
                }) => Ok(format!(
                    "connected ({}); no claims ledger yet in schema {schema}: `seed` or `run --init-store` makes it",
                    store_label(config)
                )),
                Err(e) => Err(CauseChain(&e).to_string()),
            },
        )),
        // Its file is made by the first command that writes; reading it here would make it.
        StoreConfig::Embedded(path) => Some((
            "embedded",
            match std::fs::metadata(path) {
                Ok(m) if m.is_file() => Ok(format!("STORE_PATH={}", path.display())),
                Ok(_) => Err(format!("STORE_PATH={} is not a regular file", path.display())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(format!(
                    "STORE_PATH={}, not made yet: `seed` or `run` makes it",
                    path.display()
                )),
                Err(e) => Err(format!("cannot read STORE_PATH={}: {e}", path.display())),
            },
        )),
    }
}

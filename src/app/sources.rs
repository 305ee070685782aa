//! The sources as the app reads them: every configured source at once (each with its backoff),
//! deduped into one [`Sighting`] per match; and the one-off read `check-sources` makes.

use super::{App, StartError, Summary};
use crate::backoff::{Backoff, Turn};
use crate::config::Config;
use crate::cricket::{Sighting, Sightings};
use crate::metric_names as names;
use crate::source::{self, fetch::Fetcher, SourceReader};
use crate::telemetry::CauseChain;
use serde::Serialize;
use std::time::Instant;

/// A source reader with the fetch settings of `config`.
///
/// # Errors
/// [`StartError::HttpClient`] when the HTTP client cannot be built.
pub fn source_reader(config: &Config) -> Result<SourceReader, StartError> {
    let fetcher = Fetcher::new(
        config.sources.fetch_max_bytes,
        source::fetch::CONNECT_TIMEOUT,
        source::fetch::TOTAL_TIMEOUT,
        config.sources.fetch_per_host_per_minute,
    )
    .map_err(|source| StartError::HttpClient {
        what: "sources",
        source,
    })?;
    Ok(SourceReader::new(fetcher))
}

/// One source's health, as `check-sources` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct SourceCheck {
    /// The source as configured.
    pub source: String,
    /// Read, or the error that stopped it (serialised as `"ok"` or the error's text).
    pub status: SourceStatus,
    /// Matches found (0 on error).
    pub matches: usize,
    /// The first few matches, as `title, description (state)`; with a lead time (see
    /// [`crate::schedule`]) followed by when each is announced (`: announce in 3 h 10 min`,
    /// `: announce now`, `: already announced`).
    pub first: Vec<String>,
}

/// Whether one source could be read, as `check-sources` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceStatus {
    /// Fetched and parsed.
    Ok,
    /// Not read: the error, as its message (fetch or parse), shown to the operator.
    Failed(String),
}

impl SourceStatus {
    /// The error's message when the source was not read.
    pub fn error(&self) -> Option<&str> {
        match self {
            SourceStatus::Ok => None,
            SourceStatus::Failed(e) => Some(e),
        }
    }
}

/// Serialised as the JSON output has always given it: `"ok"`, or the error's text.
impl Serialize for SourceStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.error().unwrap_or("ok"))
    }
}

/// How many matches `check-sources` shows per source.
pub const CHECK_SHOWS: usize = 3;

/// Fetches and parses every configured source once (concurrently), for `check-sources`.
///
/// # Errors
/// [`StartError::HttpClient`] when the HTTP client cannot be built.
pub async fn check_sources(config: &Config) -> Result<Vec<SourceCheck>, StartError> {
    let reader = source_reader(config)?;
    let results = futures_util::future::join_all(config.sources.specs.iter().map(|spec| reader.read(spec))).await;
    let mut checks = listed(config, results);
    if let Some(timing) = super::timing::Timing::of(config).await {
        for (check, found) in checks.iter_mut() {
            for (line, m) in check.first.iter_mut().zip(found.iter()) {
                line.push_str(&format!(": {}", timing.of_match(m).await));
            }
        }
    }
    Ok(checks.into_iter().map(|(check, _)| check).collect())
}

/// Each source's check, with the matches it shows.
fn listed(
    config: &Config,
    results: Vec<Result<Vec<crate::cricket::Match>, source::SourceError>>,
) -> Vec<(SourceCheck, Vec<crate::cricket::Match>)> {
    config
        .sources
        .specs
        .iter()
        .zip(results)
        .map(|(spec, r)| match r {
            Ok(mut found) => {
                let check = SourceCheck {
                    source: spec.to_string(),
                    status: SourceStatus::Ok,
                    matches: found.len(),
                    first: found
                        .iter()
                        .take(CHECK_SHOWS)
                        // With the description: two matches of one pair of teams differ only there.
                        .map(|m| match m.description.as_deref() {
                            Some(d) => format!("{}, {d} ({})", m.title(), m.state),
                            None => format!("{} ({})", m.title(), m.state),
                        })
                        .collect(),
                };
                found.truncate(CHECK_SHOWS);
                (check, found)
            }
            Err(e) => (
                SourceCheck {
                    source: spec.to_string(),
                    status: SourceStatus::Failed(e.to_string()),
                    matches: 0,
                    first: Vec::new(),
                },
                Vec::new(),
            ),
        })
        .collect()
}

impl App {
    /// Reads every source (concurrently), returning the distinct matches in first-seen order,
    /// each with the identities (`site:id`) under which the sources listed it. A failing source
    /// is logged at error level and counted; the others still run. A source that keeps
    /// failing is skipped for more and more cycles (see [`crate::backoff`]); a slow one
    /// delays only its own result, as all are read at once.
    pub async fn read_sources(&self, summary: &mut Summary) -> Vec<Sighting> {
        let turns: Vec<Turn> = match self.backoff.lock() {
            Ok(mut b) => b.iter_mut().map(Backoff::turn).collect(),
            // A poisoned lock only means a panic elsewhere: read everything.
            Err(_) => vec![Turn::Read; self.sources.len()],
        };
        let reads = self.sources.iter().zip(&turns).map(|(spec, turn)| async move {
            match turn {
                Turn::Read => Some(self.reader.read(spec).await),
                Turn::Skip { .. } => None,
            }
        });
        let results = futures_util::future::join_all(reads).await;
        // One sighting per match (see `Sightings`), linking to the preferred site's page.
        let mut sightings = Sightings::linking(self.links.clone());
        for (i, (spec, result)) in self.sources.iter().zip(results).enumerate() {
            let label = spec.to_string();
            let Some(result) = result else {
                summary.sources_backed_off += 1;
                metrics::counter!(names::SOURCE_BACKOFF_SKIPS, "source" => label).increment(1);
                if let Turn::Skip { cycles_left } = turns[i] {
                    self.journal.source_skipped(i, cycles_left);
                    tracing::info!(source = %spec, cycles_left, "source backing off after repeated failures; not read this cycle");
                }
                continue;
            };
            match result {
                Ok(found) => {
                    summary.sources_read += 1;
                    metrics::counter!(names::SOURCE_READS, "source" => label).increment(1);
                    if let Ok(mut at) = self.last_source_read.lock() {
                        *at = Instant::now();
                    }
                    let failures_before = self.backoff.lock().map(|mut b| b[i].succeeded()).unwrap_or(0);
                    if failures_before > 0 {
                        tracing::info!(source = %spec, failures_before, "source recovered; backoff reset");
                    }
                    tracing::debug!(source = %spec, matches = found.len(), "source read");
                    self.journal.source_read(i, found.len(), self.clock.now());
                    for m in found {
                        sightings.add(m);
                    }
                }
                Err(e) => {
                    summary.sources_failed += 1;
                    metrics::counter!(names::SOURCE_ERRORS, "source" => label).increment(1);
                    let (skip_cycles, consecutive_failures) = self
                        .backoff
                        .lock()
                        .map(|mut b| (b[i].failed(), b[i].consecutive_failures()))
                        .unwrap_or((0, 0));
                    self.journal
                        .source_failed(i, &e, consecutive_failures, skip_cycles, self.clock.now());
                    tracing::error!(source = %spec, consecutive_failures, skip_cycles, error.cause_chain = %CauseChain(&e), "source failed");
                }
            }
        }
        summary.matches_seen = sightings.len();
        sightings.into_vec()
    }
}

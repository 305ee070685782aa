//! The sources section: which pages to read, the API keys some of them need, and the limits on
//! fetching (page size, pace per host).

use super::value::{text, Whole};
use super::{ConfigError, Problem};
use crate::source::fetch::ApiKey;
use crate::source::{SourceKind, SourceSpec};
use secrecy::SecretString;

/// The sources' settings, as given.
#[derive(clap::Args, Clone)]
pub struct SourceSettings {
    /// Sources, separated by commas or whitespace: KIND=LOCATION or LOCATION (URL or file).
    // A source URL may carry a password or a key: its value is never shown in --help.
    #[arg(
        long,
        env = "SOURCES",
        default_value = "",
        hide_default_value = true,
        hide_env_values = true,
        global = true
    )]
    pub sources: String,
    /// Requests per minute to one host (requests to one host never overlap).
    // The default is fetch::DEFAULT_PER_HOST_PER_MINUTE (a test checks they agree).
    #[arg(long, env = "FETCH_PER_HOST_PER_MINUTE", value_parser = Whole::count(), default_value = "30", global = true)]
    pub fetch_per_host_per_minute: u32,
    /// API key for cricbuzz-json sources (sent in CRICBUZZ_API_KEY_HEADER).
    #[arg(long, env = "CRICBUZZ_API_KEY", hide_env_values = true, global = true)]
    pub cricbuzz_api_key: Option<String>,
    /// Header carrying CRICBUZZ_API_KEY (API gateways differ).
    #[arg(
        long,
        env = "CRICBUZZ_API_KEY_HEADER",
        default_value = "X-RapidAPI-Key",
        global = true
    )]
    pub cricbuzz_api_key_header: String,
    /// API key for cricketdata sources (sent as the `apikey` query parameter).
    #[arg(long, env = "CRICKETDATA_API_KEY", hide_env_values = true, global = true)]
    pub cricketdata_api_key: Option<String>,
    /// Largest page accepted from a source, bytes.
    // The default is fetch::DEFAULT_MAX_BYTES (a test checks they agree).
    #[arg(long, env = "FETCH_MAX_BYTES", value_parser = Whole::bytes(), default_value = "8388608", global = true)]
    pub fetch_max_bytes: usize,
}

/// The sources section, validated.
#[derive(Clone)]
pub struct Sources {
    /// Sources to read, each with the API key its kind needs.
    pub specs: Vec<SourceSpec>,
    /// Page size cap, bytes.
    pub fetch_max_bytes: usize,
    /// Requests per minute to one host.
    pub fetch_per_host_per_minute: u32,
}

impl SourceSettings {
    /// The sources section, validated. `flags` (from `--source`) replace `SOURCES` when given.
    ///
    /// # Errors
    /// [`ConfigError`] naming a source that cannot be read as `KIND=LOCATION` or `LOCATION`,
    /// or a header name that is not one.
    pub fn validate(&self, flags: &[String]) -> Result<Sources, ConfigError> {
        let (var, raw): (&'static str, Vec<&str>) = if flags.is_empty() {
            (
                "SOURCES",
                self.sources.split(|c: char| c == ',' || c.is_whitespace()).collect(),
            )
        } else {
            ("--source", flags.iter().map(String::as_str).collect())
        };
        let cricbuzz_key = match text(&self.cricbuzz_api_key) {
            Some(key) => {
                let name = self.cricbuzz_api_key_header.trim().to_string();
                if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                    return Err(ConfigError::invalid(
                        "CRICBUZZ_API_KEY_HEADER",
                        &name,
                        Problem::NotHeaderName,
                    ));
                }
                Some(ApiKey::Header {
                    name,
                    value: SecretString::from(key.to_string()),
                })
            }
            None => None,
        };
        let cricketdata_key = text(&self.cricketdata_api_key).map(|key| ApiKey::Query {
            name: "apikey".into(),
            value: SecretString::from(key.to_string()),
        });
        let sources = raw
            .into_iter()
            .filter(|r| !r.trim().is_empty())
            .map(|r| {
                let mut spec = r
                    .parse::<SourceSpec>()
                    .map_err(|reason| ConfigError::invalid(var, r, Problem::Source(Box::new(reason))))?;
                spec.api_key = match spec.kind {
                    Some(SourceKind::CricbuzzJson) => cricbuzz_key.clone(),
                    Some(SourceKind::Cricketdata) => cricketdata_key.clone(),
                    _ => None,
                };
                Ok(spec)
            })
            .collect::<Result<Vec<_>, ConfigError>>()?;
        Ok(Sources {
            specs: sources,
            fetch_max_bytes: self.fetch_max_bytes,
            fetch_per_host_per_minute: self.fetch_per_host_per_minute,
        })
    }
}

//! The service section: what only the long-running `run` uses (poll interval, the metrics and
//! health listener, the shutdown grace), and the logging every command shares.

use super::value::{given, text, Blankable, OrBlank, Whole};
use super::{ConfigError, Problem};
use crate::telemetry::LogFormat;
use std::net::SocketAddr;
use std::time::Duration;

/// The service's settings, as given.
#[derive(clap::Args, Clone)]
pub struct ServiceSettings {
    /// Seconds between polls in `run`.
    #[arg(long, env = "POLL_INTERVAL_SECS", value_parser = Whole::seconds(1), default_value = "300", global = true)]
    pub poll_interval_secs: Duration,
    /// Address (IP:PORT) serving Prometheus metrics at /metrics, health at /healthz and the
    /// status page at / (and /status.json) in `run`. Unset: no listener.
    #[arg(long, env = "METRICS_ADDR", global = true)]
    pub metrics_addr: Option<String>,
    /// Whether METRICS_ADDR also serves the status page (/ and /status.json): auto serves it
    /// only on a loopback address (a proxy with authentication in front reaches it), on serves
    /// it on any address, off never.
    #[arg(long, env = "STATUS_PAGE", value_enum, ignore_case = true, default_value_t = StatusPage::Auto, global = true)]
    pub status_page: StatusPage,
    /// /healthz fails when no source has been read for this many poll intervals.
    #[arg(long, env = "HEALTH_MAX_STALE_CYCLES", value_parser = Whole::count(), default_value = "3", global = true)]
    pub health_max_stale_cycles: u32,
    /// Seconds `run` or `backfill` waits, after SIGINT/SIGTERM, for a post in flight to finish
    /// and record its state before exiting anyway.
    #[arg(long, env = "SHUTDOWN_GRACE_SECS", value_parser = Whole::seconds(1), default_value = "30", global = true)]
    pub shutdown_grace_secs: Duration,
    /// Testing knob: milliseconds between polls, replacing POLL_INTERVAL_SECS (soak runs and
    /// tests). Hidden: a production poll interval is whole seconds.
    #[arg(long, env = "POLL_INTERVAL_MS", value_parser = OrBlank(Whole::milliseconds()), hide = true, global = true)]
    pub poll_interval_ms: Option<Blankable<Duration>>,
}

/// The service section, validated.
#[derive(Clone)]
pub struct Service {
    /// Poll interval of `run`.
    pub poll_interval: Duration,
    /// Where `run` serves /metrics and /healthz, if anywhere.
    pub metrics_addr: Option<SocketAddr>,
    /// Whether that address also serves the status page (`STATUS_PAGE`, resolved against the
    /// address: `auto` is on for a loopback one only).
    pub status_page: bool,
    /// /healthz fails after this many poll intervals without any source read.
    pub health_max_stale_cycles: u32,
    /// How long `run` waits for work in flight after a stop signal.
    pub shutdown_grace: Duration,
}

impl ServiceSettings {
    /// The service section, validated.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] for a metrics address that is not `IP:PORT`.
    pub fn validate(&self) -> Result<Service, ConfigError> {
        let metrics_addr = match text(&self.metrics_addr) {
            Some(a) => Some(
                a.parse::<SocketAddr>()
                    .map_err(|e| ConfigError::invalid("METRICS_ADDR", a, Problem::NotSocketAddress(e)))?,
            ),
            None => None,
        };
        let status_page = match self.status_page {
            StatusPage::On => true,
            StatusPage::Off => false,
            StatusPage::Auto => metrics_addr.is_some_and(|a| a.ip().is_loopback()),
        };
        Ok(Service {
            poll_interval: given(self.poll_interval_ms).unwrap_or(self.poll_interval_secs),
            metrics_addr,
            status_page,
            health_max_stale_cycles: self.health_max_stale_cycles,
            shutdown_grace: self.shutdown_grace_secs,
        })
    }
}

/// Whether `METRICS_ADDR` serves the status page (`STATUS_PAGE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatusPage {
    /// Only when `METRICS_ADDR` is a loopback address: the page lists what was posted where and
    /// every error, so it is not served to a network unless the operator says so.
    Auto,
    /// On any address (behind a reverse proxy with authentication).
    On,
    /// Never: `/metrics` and `/healthz` only.
    Off,
}

/// Logging's settings, as given (read before anything else: they set up the logs).
#[derive(clap::Args, Clone)]
pub struct LogSettings {
    /// Log filter (tracing EnvFilter syntax), e.g. info or cricket_announcer=debug.
    #[arg(long = "log", env = "RUST_LOG", default_value = "info", value_parser = crate::telemetry::check_filter, global = true)]
    pub log: String,
    /// Log line format on stderr: text (for people) or json (one object per line, for machines).
    #[arg(long, env = "LOG_FORMAT", value_enum, ignore_case = true, default_value_t = LogFormat::Text, global = true)]
    pub log_format: LogFormat,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Args {
        #[command(flatten)]
        service: ServiceSettings,
    }

    fn served(args: &[&str]) -> bool {
        let args = Args::try_parse_from(std::iter::once("test").chain(args.iter().copied())).unwrap();
        args.service.validate().unwrap().status_page
    }

    #[test]
    fn the_status_page_is_served_on_loopback_by_default_and_elsewhere_only_when_asked() {
        assert!(served(&["--metrics-addr", "127.0.0.1:9464"]));
        assert!(served(&["--metrics-addr", "[::1]:9464"]));
        assert!(!served(&["--metrics-addr", "0.0.0.0:9464"]));
        assert!(!served(&["--metrics-addr", "192.0.2.1:9464"]));
        assert!(served(&["--metrics-addr", "0.0.0.0:9464", "--status-page", "on"]));
        assert!(!served(&["--metrics-addr", "127.0.0.1:9464", "--status-page", "off"]));
        assert!(!served(&[]));
    }
}

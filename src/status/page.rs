//! The status page (`GET /`) and its JSON (`GET /status.json`): one [`Snapshot`] rendered two
//! ways, with the headers that keep the page safe to open. The HTML comes from
//! `templates/status.html` through minijinja with HTML auto-escaping, so every text from a
//! page or a store (a team named `<script>…`) is shown as text; the page has no script, and
//! its Content-Security-Policy allows none, nor any style but its own stylesheet (named by
//! hash), nor any image but inline ones.

use super::chart::chart;
use crate::journal::Snapshot;
use base64::Engine;
use chrono::{DateTime, Utc};
use minijinja::value::Serde;
use minijinja::{AutoEscape, Environment, Value};
use sha2::Digest;
use std::sync::OnceLock;

/// The page's template (`templates/status.html`), built in.
pub const TEMPLATE: &str = include_str!("../../templates/status.html");
/// The page's one stylesheet (`templates/status.css`), built in and inlined in a `<style>`.
pub const STYLESHEET: &str = include_str!("../../templates/status.css");

/// The page's Content-Security-Policy: nothing from anywhere (`default-src 'none'`) but its
/// own stylesheet (by its SHA-256), inline images (`data:`) and images from itself; no script,
/// no frame around it, no form, no `<base>`.
pub fn content_security_policy() -> &'static str {
    static CSP: OnceLock<String> = OnceLock::new();
    CSP.get_or_init(|| {
        let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(STYLESHEET.as_bytes()));
        format!(
            "default-src 'none'; style-src 'sha256-{hash}'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
    })
}

/// The headers every answer of the page and its JSON carries, besides its content type:
/// the Content-Security-Policy, no MIME sniffing, no framing, no referrer, and no caching
/// by the browser or a proxy (the page is cached here, a few seconds).
pub fn safety_headers() -> [(&'static str, &'static str); 6] {
    [
        ("content-security-policy", content_security_policy()),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
        ("cache-control", "no-store"),
        ("cross-origin-resource-policy", "same-origin"),
    ]
}

/// The template environment: HTML auto-escaping for every value, and the two filters the
/// page uses (`ago`, `utc`).
fn environment() -> &'static Result<Environment<'static>, minijinja::Error> {
    static ENV: OnceLock<Result<Environment<'static>, minijinja::Error>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_auto_escape_callback(|_| AutoEscape::Html);
        env.add_filter("ago", |t: Option<String>, now: String| -> String {
            match (t.as_deref().and_then(parse), parse(&now)) {
                (Some(t), Some(now)) => ago(t, now),
                _ => "–".to_string(),
            }
        });
        env.add_filter("utc", |t: Option<String>| -> String {
            t.as_deref()
                .and_then(parse)
                .map_or_else(|| "–".to_string(), |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        });
        env.add_template("status.html", TEMPLATE)?;
        Ok(env)
    })
}

fn parse(t: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(t).ok().map(|t| t.with_timezone(&Utc))
}

/// `t` as time before `now`, in words: `just now`, `42 s ago`, `5 min ago`, `3 h 10 min ago`,
/// `2 d 4 h ago`; a time after `now` reads `in 5 min`.
pub fn ago(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (now - t).num_seconds();
    let (n, future) = (secs.unsigned_abs(), secs < 0);
    let span = match n {
        0 => return "just now".to_string(),
        1..=59 => format!("{n} s"),
        60..=3599 => format!("{} min", n / 60),
        3600..=86_399 => format!("{} h {} min", n / 3600, n % 3600 / 60),
        _ => format!("{} d {} h", n / 86_400, n % 86_400 / 3600),
    };
    if future {
        format!("in {span}")
    } else {
        format!("{span} ago")
    }
}

/// The status page of `s`, saying its data may be up to `cache_secs` old.
///
/// # Errors
/// [`minijinja::Error`] when the built-in template does not render (a bug: the tests render
/// it).
pub fn html(s: &Snapshot, cache_secs: u64) -> Result<String, minijinja::Error> {
    let env = environment()
        .as_ref()
        .map_err(|e| minijinja::Error::new(e.kind(), e.to_string()))?;
    env.get_template("status.html")?.render(minijinja::context! {
        s => Value::from(Serde(s)),
        chart => Value::from(Serde(chart(s))),
        css => Value::from_safe_string(STYLESHEET.to_string()),
        cache_secs => cache_secs,
    })
}

/// `/status.json`: `s` as JSON.
///
/// # Errors
/// [`serde_json::Error`] when it cannot be serialised (it always can: plain data).
pub fn json(s: &Snapshot) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(s)
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{ChannelRow, PostRow, PostState, SourceRow, Waiting, WindowRow};
    use chrono::TimeZone;

    const HOSTILE: &str = "<script>alert(1)</script>";
    const ATTRIBUTE: &str = "\"><img src=x onerror=alert(2)>";

    fn hostile() -> Snapshot {
        let now = Utc.with_ymd_and_hms(2026, 12, 3, 12, 0, 0).unwrap();
        Snapshot {
            generated_at: now,
            started_at: now - chrono::TimeDelta::hours(2),
            version: "0.1.0".into(),
            dry_run: false,
            zone: "UTC".into(),
            problems: vec![format!("posting halted on channel {HOSTILE}: 401")],
            warnings: Vec::new(),
            cycles: 3,
            last_cycle: Some(now),
            sources: vec![SourceRow {
                source: format!("https://example.com/{ATTRIBUTE}"),
                kind: "cricbuzz".into(),
                host: "example.com".into(),
                location: format!("/{ATTRIBUTE}"),
                last_read: Some(now),
                matches: Some(2),
                reads: 3,
                failures: 1,
                failures_in_a_row: 0,
                last_error: Some(HOSTILE.into()),
                last_error_at: Some(now),
                backoff_cycles: 0,
            }],
            channels: vec![ChannelRow {
                channel: ATTRIBUTE.into(),
                event: "announce".into(),
                sink: "mastodon".into(),
                posts_today: 1,
                posts_this_week: 1,
                failed: 0,
                unknown: 0,
                would_post: 0,
                waiting: 1,
                halted: Some(HOSTILE.into()),
                posts_by_day: vec![0, 1],
            }],
            recent: vec![PostRow {
                at: now,
                channel: ATTRIBUTE.into(),
                event: "announce".into(),
                title: format!("{HOSTILE} v {ATTRIBUTE}"),
                description: Some(HOSTILE.into()),
                key: "k".into(),
                match_url: Some("https://example.com/m?a=1&b=\"2\"".into()),
                state: PostState::Posted,
                post_id: Some("1".into()),
                link: Some("https://mastodon.example/@bot/1?x=\"><b>".into()),
                error: None,
                settled_at: None,
            }],
            waiting: Waiting {
                claims: Vec::new(),
                stuck_last_cycle: 0,
                windows: vec![WindowRow {
                    channel: "x".into(),
                    title: HOSTILE.into(),
                    key: ATTRIBUTE.into(),
                    opens: now,
                }],
            },
            days: vec![now.date_naive().pred_opt().unwrap(), now.date_naive()],
        }
    }

    #[test]
    fn every_text_from_a_page_or_the_store_is_escaped_in_text_and_in_attributes() {
        let page = html(&hostile(), 5).unwrap();
        // No element or attribute made by the hostile texts: only the page's own tags.
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("<b>"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"), "{page}");
        assert!(page.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"), "{page}");
        // A link's quote cannot end its attribute.
        assert!(
            page.contains("href=\"https:&#x2f;&#x2f;example.com&#x2f;m?a=1&amp;b=&quot;2&quot;\""),
            "{page}"
        );
    }

    #[test]
    fn the_content_security_policy_names_the_one_stylesheet_the_page_inlines() {
        let page = html(&hostile(), 5).unwrap();
        assert_eq!(page.matches("<style>").count(), 1);
        assert!(page.contains(&format!("<style>{STYLESHEET}</style>")));
        let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(STYLESHEET.as_bytes()));
        let csp = content_security_policy();
        assert!(csp.starts_with("default-src 'none'; "), "{csp}");
        assert!(csp.contains(&format!("style-src 'sha256-{hash}';")), "{csp}");
        assert!(!csp.contains("script-src") && !csp.contains("unsafe"), "{csp}");
        // Nothing on the page needs what the policy forbids.
        assert!(!page.contains(" style="), "{page}");
    }

    #[test]
    fn the_json_is_the_snapshot_the_page_renders() {
        let s = hostile();
        let back: Snapshot = serde_json::from_str(&json(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }

    /// The text of `page` between `from` and the next `to` after it.
    fn between<'a>(page: &'a str, from: &str, to: &str) -> &'a str {
        let start = page.find(from).unwrap_or_else(|| panic!("no {from} in {page}"));
        let rest = &page[start..];
        &rest[..rest.find(to).unwrap_or(rest.len())]
    }

    #[test]
    fn every_time_ago_carries_its_exact_utc_time_to_hover() {
        let mut s = hostile();
        s.recent[0].at = s.generated_at - chrono::TimeDelta::seconds(7);
        let page = html(&s, 5).unwrap();
        let recent = between(&page, "<tr class=\"post\">", "</tr>");
        assert!(
            recent.contains("<time datetime=\"2026-12-03T11:59:53Z\" title=\"2026-12-03 11:59:53 UTC\">7 s ago</time>"),
            "{recent}"
        );
        // Every time shown as time ago has its UTC time in its title.
        for ago in page.match_indices(" ago</time>") {
            let time = &page[page[..ago.0].rfind("<time").unwrap()..ago.0];
            assert!(
                time.contains(" title=\"2026-12-0") && time.contains(" UTC\">"),
                "{time}"
            );
        }
    }

    #[test]
    fn the_tables_name_the_event_column_and_each_sources_location() {
        let page = html(&hostile(), 5).unwrap();
        let channels = between(&page, "<section id=\"channels\">", "</thead>");
        assert!(
            channels.contains("<th>Channel</th><th>Event</th><th>Sink</th>"),
            "{channels}"
        );
        let recent = between(&page, "<section id=\"recent\">", "</thead>");
        assert!(
            recent.contains("<th>Channel</th><th>Event</th><th>Match</th>"),
            "{recent}"
        );
        let sources = between(&page, "<section id=\"sources\">", "</tr>\n</tbody>");
        assert!(sources.contains("<th>Host</th><th>Location</th>"), "{sources}");
        assert!(
            sources.contains("<td>example.com</td><td class=\"err\"><code>&#x2f;&quot;&gt;&lt;img"),
            "{sources}"
        );
    }

    #[test]
    fn a_failing_source_is_a_warning_beside_the_health_problems_and_nothing_wrong_is_not_said() {
        let mut s = hostile();
        s.problems.clear();
        s.warnings = vec!["source cricbuzz=http://127.0.0.1:1/live failed 2 times in a row: Connection refused".into()];
        let page = html(&s, 5).unwrap();
        let health = between(&page, "<section id=\"problems\">", "</section>");
        assert!(!health.contains("Nothing wrong"), "{health}");
        assert!(
            health.contains("<li>source cricbuzz=http:&#x2f;&#x2f;127.0.0.1:1&#x2f;live failed 2 times in a row: Connection refused</li>"),
            "{health}"
        );
        s.warnings.clear();
        let page = html(&s, 5).unwrap();
        assert!(between(&page, "<section id=\"problems\">", "</section>").contains("Nothing wrong"));
    }

    #[test]
    fn a_dry_run_shows_its_would_be_posts_apart_from_the_posts() {
        let mut s = hostile();
        s.dry_run = true;
        s.channels[0].posts_today = 0;
        s.channels[0].posts_this_week = 0;
        s.channels[0].posts_by_day = vec![0, 0];
        s.channels[0].would_post = 4;
        let page = html(&s, 5).unwrap();
        let channels = between(&page, "<section id=\"channels\">", "</section>");
        assert!(
            channels.contains("<th class=\"n\">Would post (dry run)</th>"),
            "{channels}"
        );
        assert!(
            channels.contains("<td class=\"n\">0</td><td class=\"n\">0</td><td class=\"n\">4</td>"),
            "{channels}"
        );
        let chart = between(&page, "<section id=\"chart\">", "</section>");
        assert!(
            chart.contains("busiest day: 0 posts (dry run: nothing is posted"),
            "{chart}"
        );
    }

    #[test]
    fn time_ago_reads_in_the_largest_units_that_fit() {
        let now = Utc.with_ymd_and_hms(2026, 12, 3, 12, 0, 0).unwrap();
        let before = |secs| ago(now - chrono::TimeDelta::seconds(secs), now);
        assert_eq!(before(0), "just now");
        assert_eq!(before(42), "42 s ago");
        assert_eq!(before(300), "5 min ago");
        assert_eq!(before(3 * 3600 + 600), "3 h 10 min ago");
        assert_eq!(before(2 * 86_400 + 4 * 3600), "2 d 4 h ago");
        assert_eq!(before(-300), "in 5 min");
    }
}

//! What may be shown of a value that may carry a secret: a URL (parsed, or text that did not
//! parse as one) and the value of a setting that was refused. One rule for each, the README's
//! ("Secrets"); the value used (fetched, connected to) is never changed, only what is shown.
//!
//! **URLs.** The user name and password read `REDACTED`; so does the value of every query
//! parameter but a few harmless ones ([`SHOWN_PARAMS`]), the fragment, and every path segment
//! that looks like a credential ([`looks_like_token`]).
//!
//! **Refused values.** A setting's value is echoed in its error only when it cannot be a
//! secret: the setting holds none (not a key, token, password or URL; see [`may_hold_secret`]),
//! the value is short ([`MAX_ECHOED_BYTES`]) and no word of it looks like a credential. URL
//! settings are echoed as [`url_text`] shows them; any other value is described by its length
//! ([`setting_value`]).

use percent_encoding::percent_decode_str;
use url::Url;

/// What a hidden part reads.
pub const REDACTED: &str = "REDACTED";

/// The longest refused value echoed in an error, bytes: a number, a level, a format name or a
/// typo of one fits; a pasted key or token (20 to 60 characters) does not.
pub const MAX_ECHOED_BYTES: usize = 24;

/// Query parameter names whose values are shown (compared lowercased, without `_` and `-`):
/// paging, ids and the like, which no site uses for a secret. Every other value is hidden.
pub const SHOWN_PARAMS: [&str; 30] = [
    "page", "offset", "limit", "size", "sort", "order", "format", "type", "lang", "locale", "view", "tab", "id",
    "matchid", "seriesid", "teamid", "series", "team", "match", "date", "from", "to", "start", "end", "status",
    "state", "season", "year", "league", "region",
];

/// The shortest segment judged by its look ([`looks_like_token`]'s third test).
const RANDOM_MIN_CHARS: usize = 16;

/// True when a path segment (or a word) looks like a credential rather than a word, a slug or
/// an id. Any of:
/// - a Telegram-style bot token, `bot<digits>:<8 or more characters>` (or without `bot`), as
///   `https://api.telegram.org/bot<token>/…` carries it;
/// - a part between `-`, `_`, `.` and `~` of 16 characters or more that mixes letters and
///   digits, or of 32 or more;
/// - 16 hex digits or more, letters and digits both, whatever separates them (a UUID);
/// - 16 characters or more (percent-decoded) that change between lower case, upper case and
///   digits at least once every 4 characters (a capital starting a word aside). Random tokens
///   do about every second character, separators included (URL-safe Base64 such as
///   `Xk3j-9aB2_qPz7-LmN0`, UUIDs, hex digests); slugs such as
///   `zim-vs-ban-2nd-t20i-bangladesh-tour-of-zimbabwe-2026` a few times in all.
///
/// The second test alone (the rule before this one) missed tokens that hold `-` or `_`: each
/// part of a UUID or of a Base64url token is short.
pub fn looks_like_token(segment: &str) -> bool {
    let decoded = percent_decode_str(segment).decode_utf8_lossy();
    bot_token(&decoded) || long_part(&decoded) || hex(&decoded) || random_looking(&decoded)
}

/// 16 hex digits or more, letters and digits both, between any separators: a UUID
/// (`550e8400-e29b-41d4-a716-446655440000`) or a digest, whose groups are each short.
fn hex(s: &str) -> bool {
    let digits: Vec<char> = s.chars().filter(char::is_ascii_alphanumeric).collect();
    digits.len() >= 16
        && digits.iter().all(char::is_ascii_hexdigit)
        && digits.iter().any(char::is_ascii_digit)
        && digits.iter().any(char::is_ascii_alphabetic)
}

/// `bot<digits>:<rest>` or `<digits>:<rest>`, `rest` at least 8 characters (so a time such as
/// `10:30` is not one).
fn bot_token(s: &str) -> bool {
    let s = s.strip_prefix("bot").unwrap_or(s);
    s.split_once(':').is_some_and(|(digits, rest)| {
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && rest.chars().count() >= 8
    })
}

/// A part of 16 characters or more mixing letters and digits, or of 32 or more.
fn long_part(s: &str) -> bool {
    s.split(['-', '_', '.', '~']).any(|part| {
        let (letters, digits) = (
            part.chars().any(|c| c.is_ascii_alphabetic()),
            part.chars().any(|c| c.is_ascii_digit()),
        );
        part.chars().count() >= 32 || (part.chars().count() >= 16 && letters && digits)
    })
}

/// At least [`RANDOM_MIN_CHARS`] characters, changing class (lower, upper, digit, other) at
/// least once every 4 within its alphanumeric runs; a capital followed by lower case at the
/// start of a run is a word, not a change.
fn random_looking(s: &str) -> bool {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Lower,
        Upper,
        Digit,
        Other,
    }
    let class = |c: char| match c {
        'a'..='z' => Class::Lower,
        'A'..='Z' => Class::Upper,
        '0'..='9' => Class::Digit,
        _ => Class::Other,
    };
    let chars = s.chars().count();
    if chars < RANDOM_MIN_CHARS {
        return false;
    }
    let mut changes = 0;
    for run in s.split(|c: char| !c.is_alphanumeric()) {
        let mut prev: Option<Class> = None;
        for (i, c) in run.chars().enumerate() {
            let now = class(c);
            if let Some(p) = prev {
                let capitalised = i == 1 && p == Class::Upper && now == Class::Lower;
                if p != now && !capitalised {
                    changes += 1;
                }
            }
            prev = Some(now);
        }
    }
    changes * 4 >= chars
}

/// `url` as it may be shown (see the module doc): user name and password, every query value but
/// [`SHOWN_PARAMS`]', the fragment and every path segment that [`looks_like_token`] read
/// `REDACTED`.
pub fn url(url: &Url) -> Url {
    let mut shown = url.clone();
    if !url.username().is_empty() || url.password().is_some() {
        // Only fails for URLs that cannot have credentials, which then have none to hide.
        let _ = shown.set_password(None);
        let _ = shown.set_username(REDACTED);
    }
    if url.query_pairs().any(|(k, _)| !harmless(&k)) {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| {
                let v = if harmless(&k) { v.into_owned() } else { REDACTED.into() };
                (k.into_owned(), v)
            })
            .collect();
        shown.query_pairs_mut().clear().extend_pairs(pairs);
    }
    if url.fragment().is_some() {
        shown.set_fragment(Some(REDACTED));
    }
    if let Some(segments) = url.path_segments() {
        if segments.clone().any(looks_like_token) {
            let path: Vec<&str> = segments
                .map(|s| if looks_like_token(s) { REDACTED } else { s })
                .collect();
            shown.set_path(&path.join("/"));
        }
    }
    shown
}

/// A file path as it may be shown: each component that [`looks_like_token`] reads `REDACTED`
/// (a source given without its scheme, `user:token@host/feed`, is read as a path).
pub fn path(path: &std::path::Path) -> String {
    let text = path.to_string_lossy();
    if !text.split('/').any(looks_like_token) {
        return text.into_owned();
    }
    text.split('/')
        .map(|c| if looks_like_token(c) { REDACTED } else { c })
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether a query parameter's value is shown: its name is one of [`SHOWN_PARAMS`].
fn harmless(name: &str) -> bool {
    let name = name.to_ascii_lowercase().replace(['_', '-'], "");
    SHOWN_PARAMS.contains(&name.as_str())
}

/// Text meant as a URL, as it may be shown, whether it parses or not (a refused setting):
/// [`url`]'s form when it parses; otherwise the same parts hidden in the text itself: whatever
/// comes before the last `@` of the authority, query values but [`SHOWN_PARAMS`]', the fragment
/// and credential-like path segments.
pub fn url_text(raw: &str) -> String {
    let raw = raw.trim();
    if let Ok(u) = Url::parse(raw) {
        if !u.cannot_be_a_base() {
            return url(&u).to_string();
        }
    }
    let (scheme, rest) = match raw.split_once("://") {
        // A source's `KIND=` before the scheme is shown as a refused kind would be.
        Some((before, rest)) => match before.rsplit_once('=') {
            Some((kind, scheme)) => (format!("{}={}://", word(kind), word(scheme)), rest),
            None => (format!("{}://", word(before)), rest),
        },
        None => (String::new(), raw),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, rest) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("{REDACTED}@{host}"),
        None => authority.to_string(),
    };
    let (rest, fragment) = match rest.split_once('#') {
        Some((rest, _)) => (rest, Some(REDACTED)),
        None => (rest, None),
    };
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    let path: Vec<&str> = path
        .split('/')
        .map(|s| if looks_like_token(s) { REDACTED } else { s })
        .collect();
    let mut out = format!("{scheme}{authority}{}", path.join("/"));
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if !harmless(k) => format!("{k}={REDACTED}"),
                Some((k, v)) => format!("{k}={v}"),
                None if looks_like_token(pair) => REDACTED.to_string(),
                None => pair.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

/// A word of a URL that is not a secret's place (a scheme, a source's kind) as it may be shown:
/// itself when [`echoable`], else described by its length.
fn word(raw: &str) -> String {
    if echoable(raw) {
        raw.to_string()
    } else {
        ShownValue::Described(raw.len()).to_string()
    }
}

/// Settings whose value may be or carry a secret, by the words of their name: one ending in
/// `KEY`, `URL` or `SOURCE(S)` (`X_API_KEY`, `REDIS_URL`, `--source`), or holding `SECRET`,
/// `TOKEN` or `PASSWORD` (`BITLY_TOKEN`, `X_ACCESS_TOKEN_SECRET`, a channel's
/// `BLUESKY_APP_PASSWORD`). `KEY_PREFIX` and `CRICBUZZ_API_KEY_HEADER` are not.
pub fn may_hold_secret(var: &str) -> bool {
    let var = var.trim_start_matches('-').to_ascii_uppercase().replace('-', "_");
    let last = var.rsplit('_').next().unwrap_or_default();
    ["KEY", "URL", "SOURCE", "SOURCES"].contains(&last)
        || var
            .split('_')
            .any(|part| ["SECRET", "TOKEN", "PASSWORD"].contains(&part))
}

/// A setting whose value is a URL or a source: its refused value is shown as [`url_text`]
/// shows it.
fn url_setting(var: &str) -> bool {
    let var = var.trim_start_matches('-').to_ascii_uppercase();
    var.ends_with("URL") || var.ends_with("SOURCE") || var.ends_with("SOURCES")
}

/// Whether a refused value of a setting that holds no secret may be echoed: at most
/// [`MAX_ECHOED_BYTES`] and no word of it (split at anything but letters, digits, `-`, `_`,
/// `:` and `.`) looks like a credential.
pub fn echoable(raw: &str) -> bool {
    raw.len() <= MAX_ECHOED_BYTES
        && !raw
            .split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.')))
            .any(looks_like_token)
}

/// A refused value of `var` as its error shows it: the value itself when [`echoable`] and `var`
/// holds no secret; a URL setting's value (or a source's) as [`url_text`] shows it; otherwise
/// its length alone.
pub fn setting_value(var: &str, raw: &str) -> ShownValue {
    if url_setting(var) && raw.contains("://") {
        return ShownValue::Echoed(url_text(raw));
    }
    if !may_hold_secret(var) && echoable(raw) {
        return ShownValue::Echoed(raw.to_string());
    }
    ShownValue::Described(raw.len())
}

/// An argument the command line does not expect, as its error shows it: a flag (`--name`,
/// `-x`) by its name when that is no longer than [`MAX_FLAG_BYTES`] and does not look like a
/// credential (a misspelt option is shown, so its fix can be seen), with the value it carries
/// (`--name=value`) as [`setting_value`] shows that option's; anything else as
/// [`setting_value`] shows a stray value.
pub fn argument(raw: &str) -> ShownValue {
    let (flag, value) = match raw.split_once('=') {
        Some((flag, value)) => (flag, Some(value)),
        None => (raw, None),
    };
    let name = flag.trim_start_matches('-');
    if !flag.starts_with('-') || flag.len() > MAX_FLAG_BYTES || looks_like_token(name) {
        return setting_value("argument", raw);
    }
    match value.map(|v| setting_value(flag, v)) {
        None => ShownValue::Echoed(raw.to_string()),
        Some(ShownValue::Echoed(v)) => ShownValue::Echoed(format!("{flag}={v}")),
        Some(shown) => ShownValue::Echoed(format!("{flag}={shown}")),
    }
}

/// The longest unexpected flag shown in an error, bytes: the longest option the bot has
/// (`--redis-eviction-policy-asserted`, 32) with room for a typo.
pub const MAX_FLAG_BYTES: usize = 40;

/// A refused setting value as shown: echoed (possibly with parts hidden), described, or hidden.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShownValue {
    /// Shown as this text, quoted and escaped (`"five"`).
    Echoed(String),
    /// Not shown: only its length in bytes (`(32 bytes, not shown)`).
    Described(usize),
    /// Not shown at all, not even its length (`"(hidden)"`): a store URL, which may hold a
    /// password anywhere.
    Hidden,
}

impl std::fmt::Display for ShownValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShownValue::Echoed(text) => write!(f, "{text:?}"),
            ShownValue::Described(bytes) => write!(f, "({bytes} bytes, not shown)"),
            ShownValue::Hidden => f.write_str("\"(hidden)\""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_told_from_slugs_ids_and_words() {
        for token in [
            "a1b2c3d4e5f6a7b8c9d0",
            "550e8400-e29b-41d4-a716-446655440000",
            "Xk3j-9aB2_qPz7-LmN0_vR8s",
            "bot123456789:AAHdq-TcvCH1vGWJxfSeofSAs0K5PALDsaw",
            "123456789:AAHdqTcvCH1vGWJ",
            "Zq8vK2mXr7TnW4pLc9Hs3Jd6Fg1Bx5Ny",
            "abcdefghijklmnopqrstuvwxyzabcdefgh",
            "d41d8cd98f00b204e9800998ecf8427e",
            "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
            "xoxb-1234-5678-AbCdEfGhIjKl",
            "eyJhbGciOiJIUzI1NiJ9",
            "Xk3j%2D9aB2%5FqPz7%2DLmN0",
        ] {
            assert!(looks_like_token(token), "{token}");
        }
        for word in [
            "zim-vs-ban-2nd-t20i-bangladesh-tour-of-zimbabwe-2026",
            "live-scores",
            "158062",
            "2026-07-17",
            "indian-premier-league-2022-1298423",
            "gujarat-titans-vs-rajasthan-royals-final-1312200",
            "full-scorecard",
            "cricket-match",
            "IPL2024-Final-Match",
            "PakistanVsIndiaHighlights",
            "matches-v1-live_2024-06-16.json",
            "10:30",
            "v1",
            "currentMatches",
            "%E0%A4%AD%E0%A4%BE%E0%A4%B0%E0%A4%A4-vs-australia",
        ] {
            assert!(!looks_like_token(word), "{word}");
        }
    }

    #[test]
    fn a_url_shows_no_credential_in_any_position() {
        let u = Url::parse(
            "https://me:pw@example.com/feed/Xk3j-9aB2_qPz7-LmN0_vR8s/live/158062?k=k1&page=3#access_token=t1",
        )
        .unwrap();
        assert_eq!(
            url(&u).as_str(),
            "https://REDACTED@example.com/feed/REDACTED/live/158062?k=REDACTED&page=3#REDACTED"
        );
        let telegram = Url::parse("https://api.telegram.org/bot123456:AAHdq-TcvCH1vGWJxfSeof/sendMessage").unwrap();
        assert_eq!(url(&telegram).as_str(), "https://api.telegram.org/REDACTED/sendMessage");
        let plain = Url::parse("https://www.cricbuzz.com/cricket-match/live-scores?page=2").unwrap();
        assert_eq!(url(&plain), plain);
    }

    #[test]
    fn a_path_shows_every_component_but_token_like_ones() {
        use std::path::Path;
        assert_eq!(
            path(Path::new("fixtures/cricbuzz/matches-v1-live_2024-06-16.json")),
            "fixtures/cricbuzz/matches-v1-live_2024-06-16.json"
        );
        assert_eq!(
            path(Path::new("/srv/Zq8vK2mXr7TnW4pLc9Hs3Jd6/feed.json")),
            "/srv/REDACTED/feed.json"
        );
        assert_eq!(path(Path::new("u:Zq8vK2mXr7TnW4pLc9Hs3Jd6@host/x")), "REDACTED/x");
    }

    #[test]
    fn text_that_is_not_a_url_is_shown_without_its_credentials() {
        assert_eq!(url_text("http://u:SECRET@[bad"), "http://REDACTED@[bad");
        assert_eq!(
            url_text("https://u:pw@@host:99999/a1b2c3d4e5f6a7b8c9d0/x?key=k1&page=2#t"),
            "https://REDACTED@host:99999/REDACTED/x?key=REDACTED&page=2#REDACTED"
        );
        assert_eq!(url_text("user:pw@host/x"), "REDACTED@host/x");
        assert_eq!(
            url_text("Zq8vK2mXr7TnW4pLc9Hs3Jd6=https://example.com/a"),
            "(24 bytes, not shown)=https://example.com/a"
        );
        assert_eq!(
            url_text("cricbuzz=htps://example.com/a"),
            "cricbuzz=htps://example.com/a"
        );
        assert_eq!(url_text(" https://example.com/a "), "https://example.com/a");
    }

    #[test]
    fn a_refused_value_is_echoed_only_when_it_cannot_be_a_secret() {
        let echoed = |s: &str| ShownValue::Echoed(s.to_string());
        assert_eq!(setting_value("CLAIM_TTL_SECS", "five"), echoed("five"));
        assert_eq!(setting_value("FORMATS", "T20l"), echoed("T20l"));
        assert_eq!(
            setting_value("CLAIM_TTL_SECS", "Zq8vK2mXr7TnW4pLc9Hs3Jd6Fg1Bx5Ny"),
            ShownValue::Described(32)
        );
        assert_eq!(
            setting_value("POLL_INTERVAL_SECS", "a1b2c3d4e5f6a7b8c9"),
            ShownValue::Described(18)
        );
        assert_eq!(
            setting_value("METRICS_ADDR", &"9".repeat(30)),
            ShownValue::Described(30)
        );
        assert_eq!(setting_value("X_API_KEY", "k"), ShownValue::Described(1));
        assert_eq!(setting_value("BITLY_TOKEN", "t"), ShownValue::Described(1));
        assert_eq!(
            setting_value("X_API_BASE_URL", "http://u:SECRET@[bad"),
            echoed("http://REDACTED@[bad")
        );
        assert_eq!(setting_value("X_API_BASE_URL", "ftp-ish"), ShownValue::Described(7));
        assert_eq!(
            setting_value("SOURCES", "cricbuzz=https://u:pw@x.test/a"),
            echoed("cricbuzz=https://REDACTED@x.test/a")
        );
        assert_eq!(
            setting_value("CRICBUZZ_API_KEY_HEADER", "Bad Header"),
            echoed("Bad Header")
        );
        for secret in [
            "--x-access-token-secret",
            "DATABASE_URL",
            "--source",
            "CRICKETDATA_API_KEY",
            "BLUESKY_APP_PASSWORD",
        ] {
            assert!(may_hold_secret(secret), "{secret}");
        }
        assert_eq!(argument("--x-acess-token-secret"), echoed("--x-acess-token-secret"));
        assert_eq!(argument("-q"), echoed("-q"));
        assert_eq!(argument("--Zq8vK2mXr7TnW4pLc9Hs3Jd6"), ShownValue::Described(26));
        assert_eq!(argument("--api-key=k1"), echoed("--api-key=(2 bytes, not shown)"));
        assert_eq!(argument("--pol=60"), echoed("--pol=60"));
        assert_eq!(argument("extra"), echoed("extra"));
        assert_eq!(argument("Zq8vK2mXr7TnW4pLc9Hs3Jd6"), ShownValue::Described(24));
        for plain in [
            "KEY_PREFIX",
            "CRICBUZZ_API_KEY_HEADER",
            "REDIS_CA_FILE",
            "--log",
            "INSTANCE_ID",
        ] {
            assert!(!may_hold_secret(plain), "{plain}");
        }
    }
}

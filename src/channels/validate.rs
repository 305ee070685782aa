//! Reading and checking a channels file: every field, name, URL, secret variable and filter
//! entry, each problem named by file, channel and field, never by a secret's value.

use super::error::ChannelsError;
use super::schema::{
    Channel, Channels, Secrets, SinkSettings, TemplateSource, DEFAULT_BLUESKY_SERVICE, DEFAULT_LANGUAGE, DEFAULT_X_BASE,
};
use super::written::{sink_fields, RawChannel, RawChatId, RawFile, COMMON_FIELDS, SECRET_WORDS};
use crate::filter::FormatSetting;
use crate::filter::{parse_state, Filter};
use crate::post::discord::check_webhook_url;
use crate::post::is_loopback;
use crate::post::mastodon::Visibility;
use crate::post::telegram::{check_bot_token, ChatId, DEFAULT_API_BASE};
use crate::post::{SinkKind, XCredentials};
use crate::schedule::Lead;
use crate::template::MAX_TEMPLATE_BYTES;
use crate::zone::Zone;
use secrecy::SecretString;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::Path;
use url::Url;

/// The longest channel name, in bytes (names go into claim keys, metrics labels and logs).
const MAX_NAME_BYTES: usize = 64;

/// The largest channels file read, in bytes: ample for hundreds of channels with templates.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
impl Channels {
    /// Reads and validates the channels file at `path`; `env` looks up the environment variables
    /// the file names (the configuration passes the process environment, tests a map), all of
    /// them or only those set, as `secrets` says.
    ///
    /// # Errors
    /// [`ChannelsError`]: the file cannot be read, is not TOML of the channels shape, defines no
    /// channel, or a channel is invalid (see [`Channels::parse`]).
    pub fn load(
        path: &Path,
        env: &dyn Fn(&str) -> Option<String>,
        secrets: Secrets,
    ) -> Result<Channels, ChannelsError> {
        let read = |source| ChannelsError::Read {
            path: path.to_path_buf(),
            source,
        };
        // A device or a pipe would be read forever: a channels file is a small regular file.
        let meta = std::fs::metadata(path).map_err(read)?;
        if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
            return Err(read(std::io::Error::other(format!(
                "not a regular file of at most {MAX_FILE_BYTES} bytes"
            ))));
        }
        let text = std::fs::read_to_string(path).map_err(read)?;
        Channels::parse(&text, path, env, secrets)
    }

    /// Validates the channels in `text`, read from `path` (which names the file in errors and
    /// anchors relative `template_path`s).
    ///
    /// # Errors
    /// [`ChannelsError`], the first problem found: a name missing, malformed or used twice; an
    /// unknown `sink`; a field the sink does not take; a secret written inline; an `_env` field
    /// that is not a variable name, names an unset variable (with [`Secrets::Required`]) or a
    /// value of the wrong shape (a Discord webhook URL, a Telegram bot token); a URL (or plain
    /// `http://` to another machine), chat id, format, state or visibility that cannot be used;
    /// a blank filter entry; an inline template over [`MAX_TEMPLATE_BYTES`]; both or neither of
    /// what must be one of two.
    pub fn parse(
        text: &str,
        path: &Path,
        env: &dyn Fn(&str) -> Option<String>,
        secrets: Secrets,
    ) -> Result<Channels, ChannelsError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| ChannelsError::Syntax {
            path: path.to_path_buf(),
            line: e
                .span()
                .and_then(|s| text.get(..s.start))
                .map(|before| before.matches('\n').count() + 1)
                .unwrap_or(0),
            message: e.message().to_string(),
        })?;
        if raw.channel.is_empty() {
            return Err(ChannelsError::Empty {
                path: path.to_path_buf(),
            });
        }
        let base_dir = path.parent().unwrap_or(Path::new("."));
        let mut seen = BTreeSet::new();
        let mut channels = Vec::with_capacity(raw.channel.len());
        for (i, r) in raw.channel.into_iter().enumerate() {
            let c = Check {
                path,
                // Named by its position until its name is known to be one (a refused name
                // is described, not echoed: it may be anything pasted there).
                channel: r
                    .name
                    .clone()
                    .filter(|n| valid_name(n))
                    .unwrap_or_else(|| format!("#{}", i + 1)),
                env,
                secrets,
                unset: RefCell::new(Vec::new()),
            };
            let channel = c.channel(r, base_dir)?;
            if !seen.insert(channel.name.clone()) {
                return Err(ChannelsError::DuplicateName {
                    path: path.to_path_buf(),
                    channel: channel.name,
                });
            }
            channels.push(channel);
        }
        Ok(Channels {
            path: path.to_path_buf(),
            channels,
        })
    }
}

/// Whether `name` can name a channel: 1 to [`MAX_NAME_BYTES`] of a-z, 0-9, `-` and `_`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// Validation of one channel: knows the file and channel to name in errors.
struct Check<'a> {
    path: &'a Path,
    channel: String,
    env: &'a dyn Fn(&str) -> Option<String>,
    secrets: Secrets,
    /// The variables named but not set, with [`Secrets::IfSet`].
    unset: RefCell<Vec<String>>,
}

impl Check<'_> {
    fn field(&self, field: &str, problem: impl Into<String>) -> ChannelsError {
        ChannelsError::Field {
            path: self.path.to_path_buf(),
            channel: self.channel.clone(),
            field: field.to_string(),
            problem: problem.into(),
        }
    }

    fn channel(&self, r: RawChannel, base_dir: &Path) -> Result<Channel, ChannelsError> {
        let name = self.name(r.name.as_deref())?;
        // Secrets first: an inline secret is named as such even next to other mistakes.
        for field in r.rest.keys() {
            let lower = field.to_ascii_lowercase();
            if !lower.ends_with("_env") && SECRET_WORDS.iter().any(|w| lower.contains(w)) {
                return Err(ChannelsError::InlineSecret {
                    path: self.path.to_path_buf(),
                    channel: self.channel.clone(),
                    field: field.clone(),
                    suggested: format!("{field}_env"),
                });
            }
        }
        let Some(sink_name) = r.sink.as_deref() else {
            return Err(self.field(
                "sink",
                format!("missing: say where this channel posts, one of {}", kinds()),
            ));
        };
        let Some(kind) = SinkKind::parse(sink_name.trim()) else {
            return Err(self.field("sink", format!("{sink_name:?} is not a sink: use one of {}", kinds())));
        };
        if let Some(field) = r.rest.keys().next() {
            return Err(self.field(
                field,
                format!(
                    "unknown field for a {kind} channel: it takes {} and {}",
                    sink_fields(kind).join(", "),
                    [COMMON_FIELDS, crate::filter::FIELDS, &["pace"]].concat().join(", ")
                ),
            ));
        }
        self.only_fields_of(kind, &r)?;
        let sink = self.sink(kind, &r)?;
        let result_template = self.template_source(
            ("result_template", r.result_template),
            ("result_template_path", r.result_template_path),
            base_dir,
        )?;
        let events = match r.events {
            None => None,
            Some(list) => Some(
                crate::event::parse_events(list.iter().map(String::as_str)).map_err(|entry| {
                    self.field(
                        "events",
                        format!(
                            "{entry:?} is not an event: list one or more of {}",
                            crate::event::Event::names()
                        ),
                    )
                })?,
            ),
        };
        let result_without_announcement = match r.result_without_announcement.as_deref() {
            None => crate::event::WithoutAnnouncement::default(),
            Some(raw) => crate::event::WithoutAnnouncement::parse(raw).ok_or_else(|| {
                self.field(
                    "result_without_announcement",
                    format!("{raw:?} is neither \"post\" (a result on its own) nor \"skip\""),
                )
            })?,
        };
        let template = match (r.template, r.template_path) {
            (Some(_), Some(_)) => {
                return Err(self.field(
                    "template",
                    "both `template` and `template_path` are set: keep one (inline text, or a file)",
                ))
            }
            (Some(text), None) if text.trim().is_empty() => {
                return Err(self.field(
                    "template",
                    "empty: write the template, or remove the field to use the bot's",
                ))
            }
            (Some(text), None) if text.len() as u64 > MAX_TEMPLATE_BYTES => {
                return Err(self.field(
                    "template",
                    format!(
                        "{} bytes, over the {MAX_TEMPLATE_BYTES} a template may hold (as a template file): shorten it",
                        text.len()
                    ),
                ))
            }
            (Some(text), None) => Some(TemplateSource::Inline(text)),
            (None, Some(p)) => {
                let resolved = base_dir.join(&p);
                if !resolved.is_file() {
                    return Err(self.field(
                        "template_path",
                        format!(
                            "{} is not a file (relative paths start at the channels file's directory)",
                            resolved.display()
                        ),
                    ));
                }
                Some(TemplateSource::Path(resolved))
            }
            (None, None) => None,
        };
        let filter = Filter {
            teams: self.entries("teams", r.teams)?,
            exclude_teams: self.entries("exclude_teams", r.exclude_teams)?,
            series: self.entries("series", r.series)?,
            exclude_series: self.entries("exclude_series", r.exclude_series)?,
            formats: self.formats("formats", &self.entries("formats", r.formats)?)?,
            exclude_formats: self.formats("exclude_formats", &self.entries("exclude_formats", r.exclude_formats)?)?,
            states: match r.states {
                Some(states) => self.states(&self.entries("states", states)?)?,
                None => Filter::default().states,
            },
        };
        let announce_before = match r.announce_before.as_deref() {
            None => None,
            Some(raw) => Some(Lead::parse(raw).map_err(|problem| self.field("announce_before", problem))?),
        };
        let timezone = match r.timezone.as_deref() {
            None => None,
            // Blank is no zone: say so, rather than that "" is not a zone's name.
            Some(raw) if raw.trim().is_empty() => {
                return Err(self.field(
                    "timezone",
                    "empty: remove the field to use the bot's TIMEZONE, or name a zone as the tz database spells it (e.g. Asia/Kolkata)".to_string(),
                ))
            }
            Some(raw) => Some(Zone::parse(raw).map_err(|problem| self.field("timezone", problem))?),
        };
        Ok(Channel {
            name,
            sink,
            template,
            filter,
            pace: r.pace,
            announce_before,
            timezone,
            events,
            result_template,
            result_without_announcement,
            hashtags: r.hashtags.unwrap_or(false),
            unset_secrets: self.unset.take(),
        })
    }

    /// A result template's source: inline text (`inline`'s field) or a file (`path`'s field,
    /// relative to the channels file's directory), checked as the announcement's are.
    fn template_source(
        &self,
        (inline_field, inline): (&str, Option<String>),
        (path_field, path): (&str, Option<String>),
        base_dir: &Path,
    ) -> Result<Option<TemplateSource>, ChannelsError> {
        match (inline, path) {
            (Some(_), Some(_)) => Err(self.field(
                inline_field,
                format!("both `{inline_field}` and `{path_field}` are set: keep one (inline text, or a file)"),
            )),
            (Some(text), None) if text.trim().is_empty() || text.len() as u64 > MAX_TEMPLATE_BYTES => Err(self.field(
                inline_field,
                format!("empty or over {MAX_TEMPLATE_BYTES} bytes: write the template, or remove the field"),
            )),
            (Some(text), None) => Ok(Some(TemplateSource::Inline(text))),
            (None, Some(p)) => {
                let resolved = base_dir.join(&p);
                if resolved.is_file() {
                    Ok(Some(TemplateSource::Path(resolved)))
                } else {
                    Err(self.field(
                        path_field,
                        format!(
                            "{} is not a file (relative paths start at the channels file's directory)",
                            resolved.display()
                        ),
                    ))
                }
            }
            (None, None) => Ok(None),
        }
    }

    /// A filter list, refused when an entry is blank: a blank entry names nothing, so in an
    /// include list (`teams = [""]`) the channel would silently announce nothing.
    fn entries(&self, field: &str, raw: Vec<String>) -> Result<Vec<String>, ChannelsError> {
        match raw.iter().position(|e| e.trim().is_empty()) {
            Some(at) => Err(self.field(
                field,
                format!(
                    "entry {} is blank: remove it (a blank entry names nothing: in an include list the channel would announce nothing)",
                    at + 1
                ),
            )),
            None => Ok(raw),
        }
    }

    fn name(&self, raw: Option<&str>) -> Result<String, ChannelsError> {
        let Some(name) = raw else {
            return Err(self.field(
                "name",
                "missing: give the channel a unique name (letters a-z, digits, - and _)",
            ));
        };
        if !valid_name(name) {
            let shown = crate::redact::setting_value("name", name);
            return Err(self.field(
                "name",
                format!("{shown} cannot be used: a name is 1 to {MAX_NAME_BYTES} of a-z, 0-9, - and _ (it becomes part of claim keys and metric labels)"),
            ));
        }
        Ok(name.to_string())
    }

    /// Refuses a field that belongs to another sink, naming the sink that takes it.
    fn only_fields_of(&self, kind: SinkKind, r: &RawChannel) -> Result<(), ChannelsError> {
        let set = [
            ("base_url", r.base_url.is_some()),
            ("api_key_env", r.api_key_env.is_some()),
            ("api_secret_env", r.api_secret_env.is_some()),
            ("access_token_env", r.access_token_env.is_some()),
            ("access_token_secret_env", r.access_token_secret_env.is_some()),
            ("instance", r.instance.is_some()),
            ("visibility", r.visibility.is_some()),
            ("token_env", r.token_env.is_some()),
            ("language", r.language.is_some()),
            ("service", r.service.is_some()),
            ("handle", r.handle.is_some()),
            ("app_password_env", r.app_password_env.is_some()),
            ("webhook_url_env", r.webhook_url_env.is_some()),
            ("api_base", r.api_base.is_some()),
            ("chat_id", r.chat_id.is_some()),
            ("hashtags", r.hashtags.is_some()),
        ];
        for (field, present) in set {
            if present && !sink_fields(kind).contains(&field) {
                let takers: Vec<&str> = SinkKind::ALL
                    .into_iter()
                    .filter(|k| sink_fields(*k).contains(&field))
                    .map(SinkKind::as_str)
                    .collect();
                return Err(self.field(
                    field,
                    format!(
                        "a {kind} channel does not take it (it is for {} channels); a {kind} channel takes {}",
                        takers.join(" and "),
                        sink_fields(kind).join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn sink(&self, kind: SinkKind, r: &RawChannel) -> Result<SinkSettings, ChannelsError> {
        Ok(match kind {
            SinkKind::X => SinkSettings::X {
                base_url: self.url("base_url", r.base_url.as_deref(), Some(DEFAULT_X_BASE))?,
                credentials: match (
                    self.secret("api_key_env", r.api_key_env.as_deref(), Some("X_API_KEY"), None)?,
                    self.secret(
                        "api_secret_env",
                        r.api_secret_env.as_deref(),
                        Some("X_API_SECRET"),
                        None,
                    )?,
                    self.secret(
                        "access_token_env",
                        r.access_token_env.as_deref(),
                        Some("X_ACCESS_TOKEN"),
                        None,
                    )?,
                    self.secret(
                        "access_token_secret_env",
                        r.access_token_secret_env.as_deref(),
                        Some("X_ACCESS_TOKEN_SECRET"),
                        None,
                    )?,
                ) {
                    (Some(api_key), Some(api_secret), Some(access_token), Some(access_token_secret)) => {
                        Some(XCredentials {
                            api_key,
                            api_secret,
                            access_token,
                            access_token_secret,
                        })
                    }
                    _ => None,
                },
            },
            SinkKind::Mastodon => SinkSettings::Mastodon {
                instance: self.url("instance", r.instance.as_deref(), None)?,
                token: self.secret("token_env", r.token_env.as_deref(), None, None)?,
                visibility: match r
                    .visibility
                    .as_deref()
                    .map(|v| v.trim().to_ascii_lowercase())
                    .as_deref()
                {
                    None => None,
                    Some("public") => Some(Visibility::Public),
                    Some("unlisted") => Some(Visibility::Unlisted),
                    Some("private") => Some(Visibility::Private),
                    Some("direct") => Some(Visibility::Direct),
                    Some(v) => {
                        return Err(self.field(
                            "visibility",
                            format!("{v:?} is not a visibility: use public, unlisted, private or direct"),
                        ))
                    }
                },
                language: self.language(r.language.as_deref())?,
            },
            SinkKind::Bluesky => SinkSettings::Bluesky {
                service: self.url("service", r.service.as_deref(), Some(DEFAULT_BLUESKY_SERVICE))?,
                handle: match r.handle.as_deref().map(str::trim) {
                    Some(h) if !h.is_empty() && !h.contains(char::is_whitespace) => {
                        h.trim_start_matches('@').to_string()
                    }
                    _ => {
                        return Err(self.field(
                            "handle",
                            "missing or blank: the account's handle (cricket.bsky.social) or DID",
                        ))
                    }
                },
                app_password: self.secret("app_password_env", r.app_password_env.as_deref(), None, None)?,
                language: self.language(r.language.as_deref())?,
            },
            SinkKind::Discord => SinkSettings::Discord {
                webhook_url: self.secret(
                    "webhook_url_env",
                    r.webhook_url_env.as_deref(),
                    None,
                    Some(Shape {
                        what: "a Discord webhook URL",
                        check: check_webhook_url,
                    }),
                )?,
            },
            SinkKind::Telegram => SinkSettings::Telegram {
                api_base: self.url("api_base", r.api_base.as_deref(), Some(DEFAULT_API_BASE))?,
                bot_token: self.secret(
                    "token_env",
                    r.token_env.as_deref(),
                    None,
                    Some(Shape {
                        what: "a Telegram bot token",
                        check: check_bot_token,
                    }),
                )?,
                chat_id: match &r.chat_id {
                    None => {
                        return Err(self.field(
                            "chat_id",
                            "missing: the chat's number (-1001234567890) or a public channel's @username",
                        ))
                    }
                    Some(RawChatId::Number(n)) => ChatId::Id(*n),
                    Some(RawChatId::Text(t)) => ChatId::parse(t).map_err(|p| self.field("chat_id", p))?,
                },
            },
        })
    }

    fn url(&self, field: &str, raw: Option<&str>, default: Option<&str>) -> Result<Url, ChannelsError> {
        let Some(raw) = raw.or(default) else {
            return Err(self.field(field, "missing: the server's URL (https://…)"));
        };
        let url = Url::parse(raw.trim())
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .ok_or_else(|| {
                // Shown without the credentials it may hold (userinfo, token-like segments).
                let shown = crate::redact::url_text(raw);
                self.field(field, format!("{shown:?} is not an http:// or https:// URL"))
            })?;
        // A URL's user name and password would be sent as they are, and shown in every error
        // naming the URL: credentials belong in the `_env` fields.
        if !url.username().is_empty() || url.password().is_some() {
            return Err(self.field(
                field,
                "holds a user name or password: take them out of the URL and give the credential by environment variable (the `_env` field)".to_string(),
            ));
        }
        // Every request to it carries the channel's credential: in clear text only to this
        // machine (a local stand-in, a test server).
        if url.scheme() == "http" && !is_loopback(&url) {
            return Err(self.field(
                field,
                format!(
                    "{:?} is plain http:// to another machine, so the channel's credential would cross the network unencrypted: use https:// (http:// is for this machine only: localhost, 127.0.0.1, ::1)",
                    raw.trim()
                ),
            ));
        }
        Ok(url)
    }

    /// The secret in the environment variable that `field` names (or `default`), checked to be
    /// of `shape` when given; `None` when it is not set and [`Secrets::IfSet`] (the variable is
    /// then listed as unset).
    fn secret(
        &self,
        field: &str,
        raw: Option<&str>,
        default: Option<&str>,
        shape: Option<Shape>,
    ) -> Result<Option<SecretString>, ChannelsError> {
        let Some(var) = raw.or(default).map(str::trim) else {
            return Err(self.field(
                field,
                "missing: name the environment variable that holds the secret (the secret itself never goes in this file)",
            ));
        };
        let is_name = !var.is_empty()
            && !var.starts_with(|c: char| c.is_ascii_digit())
            && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !is_name {
            // Never echo the value: it may be the secret itself, pasted in the wrong place.
            return Err(self.field(
                field,
                "must be the NAME of an environment variable (letters, digits and _, like MASTODON_TOKEN), not the secret: \
                 put the secret in that variable",
            ));
        }
        match (self.env)(var) {
            Some(value) if !value.trim().is_empty() => {
                if let Some(Shape { what, check }) = shape {
                    // Said without the value: it is the secret.
                    check(&value).map_err(|why| {
                        self.field(
                            field,
                            format!("the value of {var} is not {what}: {why}; set {var} to it (the value is not shown here)"),
                        )
                    })?;
                }
                Ok(Some(value.into()))
            }
            _ if self.secrets == Secrets::IfSet => {
                self.unset.borrow_mut().push(var.to_string());
                Ok(None)
            }
            _ => Err(ChannelsError::MissingEnv {
                path: self.path.to_path_buf(),
                channel: self.channel.clone(),
                field: field.to_string(),
                var: var.to_string(),
            }),
        }
    }

    /// `language`, checked; [`DEFAULT_LANGUAGE`] when not set.
    fn language(&self, raw: Option<&str>) -> Result<Option<String>, ChannelsError> {
        match raw.map(str::trim) {
            None => Ok(Some(DEFAULT_LANGUAGE.to_string())),
            Some(l) if (2..=3).contains(&l.len()) && l.bytes().all(|b| b.is_ascii_lowercase()) => {
                Ok(Some(l.to_string()))
            }
            Some(l) => Err(self.field(
                "language",
                format!("{l:?} is not an ISO 639 language code: use two or three lower-case letters, like en"),
            )),
        }
    }

    fn formats(&self, field: &str, raw: &[String]) -> Result<Vec<String>, ChannelsError> {
        raw.iter()
            .map(|f| {
                <FormatSetting as clap::ValueEnum>::from_str(f.trim(), true)
                    .map(|s| s.label().to_string())
                    .map_err(|_| {
                        self.field(
                            field,
                            format!("{f:?} is not a format: use test, odi, t20i, t20, first-class, list-a or hundred"),
                        )
                    })
            })
            .collect()
    }

    fn states(&self, raw: &[String]) -> Result<Vec<crate::cricket::MatchState>, ChannelsError> {
        if raw.is_empty() {
            return Err(self.field(
                "states",
                "empty: the channel would announce nothing; list states (upcoming, live, complete, abandoned, other) or remove the field",
            ));
        }
        raw.iter()
            .map(|s| {
                parse_state(s).ok_or_else(|| {
                    self.field(
                        "states",
                        format!("{s:?} is not a state: use upcoming, live, complete, abandoned or other"),
                    )
                })
            })
            .collect()
    }
}

/// What a secret's value must look like: `check` says why it does not, without the value.
#[derive(Clone, Copy)]
struct Shape {
    what: &'static str,
    check: fn(&str) -> Result<(), &'static str>,
}

fn kinds() -> String {
    SinkKind::ALL.map(SinkKind::as_str).join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::Pace;
    use crate::cricket::MatchState;
    use crate::event::{Event, WithoutAnnouncement};
    use std::collections::HashMap;
    use std::num::NonZeroU32;
    use std::time::Duration;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| map.get(k).cloned()
    }

    fn parse(text: &str, env: &[(&str, &str)]) -> Result<Channels, ChannelsError> {
        Channels::parse(
            text,
            Path::new("/etc/cricket/channels.toml"),
            &env_of(env),
            Secrets::Required,
        )
    }

    fn err(text: &str, env: &[(&str, &str)]) -> String {
        parse(text, env).unwrap_err().to_string()
    }

    #[test]
    fn every_sink_is_read_with_its_settings_and_secrets_from_the_environment() {
        let text = r#"
            [[channel]]
            name = "x-main"
            sink = "x"

            [[channel]]
            name = "masto"
            sink = "mastodon"
            instance = "https://mastodon.example"
            token_env = "MASTO_TOKEN"
            visibility = "Unlisted"
            language = "en"
            formats = ["T20I", "first class"]
            states = ["upcoming"]
            [channel.pace]
            posts_per_minute = 2
            posts_per_day = 40

            [[channel]]
            name = "bsky"
            sink = "bluesky"
            handle = "@cricket.bsky.social"
            app_password_env = "BSKY_APP_PASSWORD"
            teams = ["India"]

            [[channel]]
            name = "discord"
            sink = "discord"
            webhook_url_env = "DISCORD_WEBHOOK"
            template = "{{ title }}"

            [[channel]]
            name = "tg"
            sink = "telegram"
            token_env = "TG_TOKEN"
            chat_id = -1001234567890
        "#;
        let env = [
            ("X_API_KEY", "k"),
            ("X_API_SECRET", "s"),
            ("X_ACCESS_TOKEN", "t"),
            ("X_ACCESS_TOKEN_SECRET", "ts"),
            ("MASTO_TOKEN", "masto-secret"),
            ("BSKY_APP_PASSWORD", "abcd-efgh-ijkl-mnop"),
            ("DISCORD_WEBHOOK", "https://discord.com/api/webhooks/1/tok"),
            ("TG_TOKEN", "123:tok"),
        ];
        let c = parse(text, &env).unwrap();
        let names: Vec<(&str, SinkKind)> = c.channels.iter().map(|c| (c.name.as_str(), c.sink.kind())).collect();
        assert_eq!(
            names,
            vec![
                ("x-main", SinkKind::X),
                ("masto", SinkKind::Mastodon),
                ("bsky", SinkKind::Bluesky),
                ("discord", SinkKind::Discord),
                ("tg", SinkKind::Telegram)
            ]
        );
        let SinkSettings::Mastodon {
            instance,
            token,
            visibility,
            language,
        } = &c.channels[1].sink
        else {
            panic!("mastodon expected")
        };
        assert_eq!(instance.as_str(), "https://mastodon.example/");
        assert_eq!(
            token.as_ref().map(secrecy::ExposeSecret::expose_secret),
            Some("masto-secret")
        );
        assert_eq!(*visibility, Some(Visibility::Unlisted));
        assert_eq!(language.as_deref(), Some("en"));
        assert_eq!(c.channels[1].filter.formats, vec!["T20I", "First-class"]);
        assert_eq!(c.channels[1].filter.states, vec![MatchState::Upcoming]);
        assert_eq!(
            c.channels[1].pace,
            Some(Pace {
                posts_per_minute: NonZeroU32::new(2).unwrap(),
                posts_per_day: NonZeroU32::new(40).unwrap()
            })
        );
        let SinkSettings::Bluesky { service, handle, .. } = &c.channels[2].sink else {
            panic!("bluesky expected")
        };
        assert_eq!(
            (service.as_str(), handle.as_str()),
            ("https://bsky.social/", "cricket.bsky.social")
        );
        assert_eq!(c.channels[2].filter.teams, vec!["India"]);
        assert_eq!(c.channels[2].filter.states, Filter::default().states);
        assert_eq!(
            c.channels[3].template,
            Some(TemplateSource::Inline("{{ title }}".into()))
        );
        let SinkSettings::Telegram { chat_id, api_base, .. } = &c.channels[4].sink else {
            panic!("telegram expected")
        };
        assert_eq!(*chat_id, ChatId::Id(-1_001_234_567_890));
        assert_eq!(api_base.as_str(), "https://api.telegram.org/");
        // Debug never shows a secret.
        let debug = format!("{c:?}");
        for (_, secret) in env {
            assert!(!debug.contains(secret) || secret.len() < 3, "{secret} in {debug}");
        }
        assert!(!debug.contains("masto-secret") && !debug.contains("abcd-efgh"));
    }

    #[test]
    fn an_inline_secret_is_refused_naming_channel_and_field_without_its_value() {
        let text = r#"
            [[channel]]
            name = "masto"
            sink = "mastodon"
            instance = "https://mastodon.example"
            token = "hunter2-secret-value"
        "#;
        let e = err(text, &[]);
        assert_eq!(
            e,
            "/etc/cricket/channels.toml: channel \"masto\": field `token` would hold a secret in the file, which is \
             refused: remove it, put the value in an environment variable and name that variable with \
             `token_env = \"NAME\"`"
        );
        let pasted = r#"
            [[channel]]
            name = "d"
            sink = "discord"
            webhook_url_env = "https://discord.com/api/webhooks/1/hunter2-secret-value"
        "#;
        let e = err(pasted, &[]);
        assert!(
            e.contains("channel \"d\": field `webhook_url_env`: must be the NAME"),
            "{e}"
        );
        assert!(!e.contains("hunter2"), "{e}");
    }

    #[test]
    fn an_unset_variable_is_named_with_its_channel_and_field() {
        let text = r#"
            [[channel]]
            name = "tg"
            sink = "telegram"
            token_env = "TG_TOKEN"
            chat_id = "@cricket"
        "#;
        assert_eq!(
            err(text, &[("TG_TOKEN", "  ")]),
            "/etc/cricket/channels.toml: channel \"tg\": `token_env` names the environment variable TG_TOKEN, which \
             is not set or empty: set it (or .env), or name another variable"
        );
    }

    #[test]
    fn events_and_the_result_settings_are_read_and_a_wrong_one_is_named() {
        let env = [("W", "https://discord.com/api/webhooks/1/t")];
        let base = "[[channel]]\nname = \"d\"\nsink = \"discord\"\nwebhook_url_env = \"W\"\n";
        let read = parse(
            &format!("{base}events = [\"result\", \"announce\"]\nresult_without_announcement = \"skip\"\nresult_template = \"{{{{ result }}}} {{{{ link }}}}\"\n"),
            &env,
        )
        .unwrap();
        let c = &read.channels[0];
        assert_eq!(c.events, Some(vec![Event::Announce, Event::Result]));
        assert_eq!(c.result_without_announcement, WithoutAnnouncement::Skip);
        assert_eq!(
            c.result_template,
            Some(TemplateSource::Inline("{{ result }} {{ link }}".into()))
        );
        let plain = parse(base, &env).unwrap();
        assert_eq!(
            (
                plain.channels[0].events.clone(),
                plain.channels[0].result_without_announcement
            ),
            (None, WithoutAnnouncement::Post)
        );
        assert_eq!(
            err(&format!("{base}events = [\"announce\", \"live\"]\n"), &env),
            "/etc/cricket/channels.toml: channel \"d\": field `events`: \"live\" is not an event: list one or more of announce, result"
        );
        assert!(err(&format!("{base}events = []\n"), &env).contains("field `events`: \"\" is not an event"));
        assert_eq!(
            err(&format!("{base}result_without_announcement = \"maybe\"\n"), &env),
            "/etc/cricket/channels.toml: channel \"d\": field `result_without_announcement`: \"maybe\" is neither \"post\" (a result on its own) nor \"skip\""
        );
    }

    #[test]
    fn names_are_unique_and_well_formed() {
        let twice = r#"
            [[channel]]
            name = "d"
            sink = "discord"
            webhook_url_env = "W"
            [[channel]]
            name = "d"
            sink = "discord"
            webhook_url_env = "W"
        "#;
        assert_eq!(
            err(twice, &[("W", "https://discord.com/api/webhooks/1/t")]),
            "/etc/cricket/channels.toml: two channels are named \"d\": each channel needs its own name"
        );
        let bad = "[[channel]]\nname = \"Main Channel\"\nsink = \"discord\"\n";
        // Named by position: a refused name is shown only as a refused value may be.
        assert!(err(bad, &[]).contains("channel \"#1\": field `name`: \"Main Channel\" cannot be used"));
        let pasted = "[[channel]]\nname = \"Zq8vK2mXr7TnW4pLc9Hs3Jd6\"\nsink = \"discord\"\n";
        assert!(err(pasted, &[]).contains("channel \"#1\": field `name`: (24 bytes, not shown) cannot be used"));
        let none = "[[channel]]\nsink = \"discord\"\n";
        assert!(err(none, &[]).contains("channel \"#1\": field `name`: missing"));
    }

    #[test]
    fn an_unknown_sink_or_a_misplaced_field_says_what_the_sink_takes() {
        let unknown = "[[channel]]\nname = \"m\"\nsink = \"myspace\"\n";
        assert_eq!(
            err(unknown, &[]),
            "/etc/cricket/channels.toml: channel \"m\": field `sink`: \"myspace\" is not a sink: use one of x, \
             mastodon, bluesky, discord, telegram"
        );
        let misplaced = "[[channel]]\nname = \"m\"\nsink = \"mastodon\"\ninstance = \"https://m.example\"\ntoken_env = \"T\"\nchat_id = 5\n";
        assert_eq!(
            err(misplaced, &[("T", "x")]),
            "/etc/cricket/channels.toml: channel \"m\": field `chat_id`: a mastodon channel does not take it (it is \
             for telegram channels); a mastodon channel takes instance, token_env, visibility, language, hashtags"
        );
        let typo = "[[channel]]\nname = \"m\"\nsink = \"discord\"\nwebhok_url_env = \"W\"\n";
        assert!(err(typo, &[]).contains("field `webhok_url_env`: unknown field for a discord channel"));
    }

    #[test]
    fn formats_states_urls_and_chat_ids_are_checked() {
        let base = "[[channel]]\nname = \"d\"\nsink = \"discord\"\nwebhook_url_env = \"W\"\n";
        let env = [("W", "https://discord.com/api/webhooks/1/t")];
        assert!(
            err(&format!("{base}formats = [\"T20l\"]\n"), &env).contains("field `formats`: \"T20l\" is not a format")
        );
        assert!(err(&format!("{base}states = [\"finished\"]\n"), &env)
            .contains("field `states`: \"finished\" is not a state"));
        assert!(err(&format!("{base}states = []\n"), &env).contains("field `states`: empty"));
        let masto =
            "[[channel]]\nname = \"m\"\nsink = \"mastodon\"\ninstance = \"mastodon.social\"\ntoken_env = \"T\"\n";
        assert!(err(masto, &[("T", "x")])
            .contains("field `instance`: \"mastodon.social\" is not an http:// or https:// URL"));
        let tg = "[[channel]]\nname = \"t\"\nsink = \"telegram\"\ntoken_env = \"T\"\nchat_id = \"cricket\"\n";
        assert!(err(tg, &[("T", "1:a")]).contains("field `chat_id`: \"cricket\" is not a Telegram chat id"));
        let both = format!("{base}template = \"a\"\ntemplate_path = \"b.txt\"\n");
        assert!(err(&both, &env).contains("both `template` and `template_path`"));
        let missing_file = format!("{base}template_path = \"no-such.txt\"\n");
        assert!(err(&missing_file, &env).contains("field `template_path`: /etc/cricket/no-such.txt is not a file"));
    }

    #[test]
    fn a_file_without_channels_or_with_bad_toml_names_the_file() {
        assert_eq!(
            err("", &[]),
            "the channels file /etc/cricket/channels.toml defines no channel: add a [[channel]] table (see \
             deploy/channels.example.toml)"
        );
        let e = err(
            "[[channel]]\nname = \"a\"\nsink = \"discord\"\nwebhook_url_env = \"W\"\npace = 3\n",
            &[],
        );
        assert!(
            e.starts_with("the channels file /etc/cricket/channels.toml cannot be read as channels (line 5)"),
            "{e}"
        );
    }

    #[test]
    fn the_example_file_is_valid_and_lists_every_sink() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/channels.example.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        // Every variable the example names, set (to a value of its shape where it has one).
        let env = |k: &str| {
            Some(match k {
                "DISCORD_WEBHOOK_URL" => "https://discord.com/api/webhooks/1180000000000000000/tok".to_string(),
                "TELEGRAM_BOT_TOKEN" => "123456:ABC-DEF1234ghIkl".to_string(),
                _ => format!("value-of-{k}"),
            })
        };
        let c = Channels::parse(&text, &path, &env, Secrets::Required).unwrap();
        assert!(c.channels.iter().all(Channel::has_secrets));
        let kinds: BTreeSet<&str> = c.channels.iter().map(|c| c.sink.kind().as_str()).collect();
        assert_eq!(kinds.len(), SinkKind::ALL.len(), "{kinds:?}");
        // Its inline templates compile and link to the match, as the bot will require.
        let inline: Vec<&String> = c
            .channels
            .iter()
            .filter_map(|c| match &c.template {
                Some(TemplateSource::Inline(t)) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(inline.len(), 1);
        for t in inline {
            crate::template::Template::from_source(&path, t.clone()).unwrap();
        }
    }

    #[test]
    fn a_webhook_url_or_bot_token_of_the_wrong_shape_is_refused_at_load_naming_channel_and_variable() {
        let discord = "[[channel]]\nname = \"club\"\nsink = \"discord\"\nwebhook_url_env = \"HOOK\"\n";
        let e = err(
            discord,
            &[("HOOK", "https://discord.com/channels/1180000000000000000/tok-secret")],
        );
        assert_eq!(
            e,
            "/etc/cricket/channels.toml: channel \"club\": field `webhook_url_env`: the value of HOOK is not a Discord \
             webhook URL: its path is not /api/webhooks/ID/TOKEN (ID a number, TOKEN letters, digits, - and _); set \
             HOOK to it (the value is not shown here)"
        );
        let telegram = "[[channel]]\nname = \"tg\"\nsink = \"telegram\"\ntoken_env = \"TG\"\nchat_id = 5\n";
        for token in ["123:tok/../secret", "123:tok?secret", "tok-secret"] {
            let e = err(telegram, &[("TG", token)]);
            assert!(
                e.starts_with(
                    "/etc/cricket/channels.toml: channel \"tg\": field `token_env`: the value of TG is not a Telegram bot token: "
                ),
                "{e}"
            );
            assert!(!e.contains("secret"), "{e}");
        }
        // Checked when the file is read for a command that posts nothing, too.
        let e = Channels::parse(
            discord,
            Path::new("c.toml"),
            &env_of(&[("HOOK", "not-a-url-secret")]),
            Secrets::IfSet,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("the value of HOOK is not a Discord webhook URL: it is not a URL"),
            "{e}"
        );
    }

    #[test]
    fn blank_filter_entries_are_refused_naming_channel_and_field() {
        let base = "[[channel]]\nname = \"d\"\nsink = \"discord\"\nwebhook_url_env = \"W\"\n";
        let env = [("W", "https://discord.com/api/webhooks/1/t")];
        for (field, list) in [
            ("teams", "[\"\"]"),
            ("exclude_teams", "[\"Legends\", \" \"]"),
            ("series", "[\"\"]"),
            ("exclude_series", "[\"\"]"),
            ("formats", "[\"\"]"),
            ("exclude_formats", "[\"\"]"),
            ("states", "[\"live\", \"\"]"),
        ] {
            let e = err(&format!("{base}{field} = {list}\n"), &env);
            let at = if list.contains(',') { 2 } else { 1 };
            assert_eq!(
                e,
                format!(
                    "/etc/cricket/channels.toml: channel \"d\": field `{field}`: entry {at} is blank: remove it (a blank \
                     entry names nothing: in an include list the channel would announce nothing)"
                )
            );
        }
    }

    #[test]
    fn plain_http_is_refused_but_to_this_machine() {
        let masto = |instance: &str| {
            format!("[[channel]]\nname = \"m\"\nsink = \"mastodon\"\ninstance = \"{instance}\"\ntoken_env = \"T\"\n")
        };
        let e = err(&masto("http://mastodon.example"), &[("T", "x")]);
        assert_eq!(
            e,
            "/etc/cricket/channels.toml: channel \"m\": field `instance`: \"http://mastodon.example\" is plain http:// \
             to another machine, so the channel's credential would cross the network unencrypted: use https:// \
             (http:// is for this machine only: localhost, 127.0.0.1, ::1)"
        );
        for other in ["http://10.0.0.5:3000", "http://127.example.com"] {
            assert!(
                err(&masto(other), &[("T", "x")]).contains("is plain http://"),
                "{other}"
            );
        }
        for local in [
            "http://127.0.0.1:3000",
            "http://localhost:3000",
            "http://[::1]:3000",
            "https://m.example",
        ] {
            assert!(parse(&masto(local), &[("T", "x")]).is_ok(), "{local}");
        }
        let tg = "[[channel]]\nname = \"t\"\nsink = \"telegram\"\napi_base = \"http://api.telegram.org\"\ntoken_env = \"T\"\nchat_id = 5\n";
        assert!(err(tg, &[("T", "1:a")])
            .contains("channel \"t\": field `api_base`: \"http://api.telegram.org\" is plain http://"));
    }

    #[test]
    fn an_inline_template_has_the_same_size_cap_as_a_template_file() {
        let base = "[[channel]]\nname = \"d\"\nsink = \"discord\"\nwebhook_url_env = \"W\"\n";
        let env = [("W", "https://discord.com/api/webhooks/1/t")];
        let at_cap = format!(
            "{{{{ link }}}}{}",
            "x".repeat(usize::try_from(MAX_TEMPLATE_BYTES).unwrap() - 10)
        );
        assert_eq!(at_cap.len() as u64, MAX_TEMPLATE_BYTES);
        assert!(parse(&format!("{base}template = '''{at_cap}'''\n"), &env).is_ok());
        let over = format!("{at_cap}x");
        assert_eq!(
            err(&format!("{base}template = '''{over}'''\n"), &env),
            "/etc/cricket/channels.toml: channel \"d\": field `template`: 65537 bytes, over the 65536 a template may \
             hold (as a template file): shorten it"
        );
    }

    #[test]
    fn a_command_that_posts_nothing_reads_only_the_secrets_that_are_set() {
        let text = r#"
            [[channel]]
            name = "d"
            sink = "discord"
            webhook_url_env = "HOOK"
            [[channel]]
            name = "x"
            sink = "x"
            [[channel]]
            name = "t"
            sink = "telegram"
            token_env = "TG"
            chat_id = 5
        "#;
        let c = Channels::parse(
            text,
            Path::new("c.toml"),
            &env_of(&[("X_API_KEY", "k"), ("TG", "1:a")]),
            Secrets::IfSet,
        )
        .unwrap();
        let unset: Vec<(&str, Vec<String>)> = c
            .channels
            .iter()
            .map(|c| (c.name.as_str(), c.unset_secrets.clone()))
            .collect();
        assert_eq!(
            unset,
            vec![
                ("d", vec!["HOOK".to_string()]),
                (
                    "x",
                    vec![
                        "X_API_SECRET".to_string(),
                        "X_ACCESS_TOKEN".to_string(),
                        "X_ACCESS_TOKEN_SECRET".to_string()
                    ]
                ),
                ("t", vec![]),
            ]
        );
        // A channel without its secrets cannot be made to post.
        let e = c.channels[0]
            .sink(Duration::from_secs(5), Duration::from_secs(2))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "channel \"d\": cannot post without HOOK, which is not set");
        assert!(c.channels[2]
            .sink(Duration::from_secs(5), Duration::from_secs(2))
            .is_ok());
    }
}

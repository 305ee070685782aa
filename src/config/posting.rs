//! The posting section: the channels posted on (the channels file's, or else the environment's
//! X account as one channel) and the bounds on posting (time per post, posts per cycle,
//! attempts, local pace).

use super::value::{text, Whole};
use super::{http_url, ConfigError, Needs};
use crate::channels::{Channel, Channels, Secrets, SinkSettings};
use crate::cricket::MatchState;
use crate::filter::Filter;
use crate::post::XCredentials;
use secrecy::SecretString;
use std::num::NonZeroU32;
use std::time::Duration;
use url::Url;

/// Posting's settings, as given.
#[derive(clap::Args, Clone)]
pub struct PostingSettings {
    /// X API base URL.
    #[arg(
        long,
        env = "X_API_BASE_URL",
        default_value = "https://api.x.com",
        hide_env_values = true,
        global = true
    )]
    pub x_api_base_url: String,
    /// X consumer key (OAuth 1.0a).
    #[arg(long, env = "X_API_KEY", hide_env_values = true, global = true)]
    pub x_api_key: Option<String>,
    /// X consumer secret.
    #[arg(long, env = "X_API_SECRET", hide_env_values = true, global = true)]
    pub x_api_secret: Option<String>,
    /// X access token of the posting account.
    #[arg(long, env = "X_ACCESS_TOKEN", hide_env_values = true, global = true)]
    pub x_access_token: Option<String>,
    /// X access token secret.
    #[arg(long, env = "X_ACCESS_TOKEN_SECRET", hide_env_values = true, global = true)]
    pub x_access_token_secret: Option<String>,
    /// Most posts in one cycle (flood cap); the rest wait, unclaimed, for later cycles.
    #[arg(long, env = "MAX_POSTS_PER_CYCLE", value_parser = Whole::count(), default_value = "5", global = true)]
    pub max_posts_per_cycle: u32,
    /// Refusals of a post proving nothing was posted (e.g. X 400) after which a match is given
    /// up; a 429, a refused credential or an unreachable platform counts none.
    #[arg(long, env = "MAX_POST_ATTEMPTS", value_parser = Whole::count(), default_value = "3", global = true)]
    pub max_post_attempts: u32,
    /// Seconds a post to X may take; past it the outcome is unknown and the claim is kept.
    #[arg(long, env = "POST_TIMEOUT_SECS", value_parser = Whole::seconds(1), default_value = "30", global = true)]
    pub post_timeout_secs: Duration,
    /// Most posts per minute (local pace, on top of X's own limits).
    #[arg(long, env = "POSTS_PER_MINUTE", value_parser = Whole::nonzero_count(), default_value = "5", global = true)]
    pub posts_per_minute: NonZeroU32,
    /// Most posts per day (local pace; set it to your X plan's daily limit or below).
    #[arg(long, env = "POSTS_PER_DAY", value_parser = Whole::nonzero_count(), default_value = "50", global = true)]
    pub posts_per_day: NonZeroU32,
    /// Channels file (TOML, see deploy/channels.example.toml): announce on each channel it
    /// lists (X, Mastodon, Bluesky, Discord, Telegram) instead of the one X account above.
    #[arg(long = "channels", env = "CHANNELS_FILE", global = true)]
    pub channels_file: Option<String>,
}

/// The posting section, validated.
#[derive(Clone)]
pub struct Posting {
    /// Time bound of one post.
    pub post_timeout: Duration,
    /// Flood cap: most posts per cycle.
    pub max_posts_per_cycle: u32,
    /// Attempts before a match is given up.
    pub max_post_attempts: u32,
    /// Local pace: posts per minute.
    pub posts_per_minute: NonZeroU32,
    /// Local pace: posts per day.
    pub posts_per_day: NonZeroU32,
    /// The channels posted on: `CHANNELS_FILE`'s, or without it the X account of the settings
    /// above as the one channel [`ENVIRONMENT_CHANNEL`].
    pub channels: ChannelList,
}

/// The name of the one channel of a deployment without a channels file (the environment's X
/// account): in logs, `--channel` and the summary, as it always was.
pub const ENVIRONMENT_CHANNEL: &str = "x";

/// The channels the bot posts on, and where they were configured. Every channel posts the same
/// way; where they come from decides only where their claims are kept and how they are counted.
#[derive(Debug, Clone)]
pub enum ChannelList {
    /// `CHANNELS_FILE`'s channels: each keeps its claims, first-start marker and metric series
    /// under its own name (`<prefix>ch:<name>:`, `channel="<name>"`).
    File(Channels),
    /// No channels file: the environment's X account (`X_API_BASE_URL`, `X_API_KEY`…) as the one
    /// channel [`ENVIRONMENT_CHANNEL`], taking every match the bot's filter takes. It keeps the
    /// deployment's own keys (`<prefix>match:…`, `<prefix>id:…`), its first-start marker and
    /// its unlabelled metric series, as every release before channels did: an upgraded
    /// deployment finds its claims and announces nothing again.
    /// (Boxed: a channel is large, a file's list is a vector.)
    Environment(Box<Channel>),
}

impl ChannelList {
    /// Every channel, in order.
    pub fn channels(&self) -> &[Channel] {
        match self {
            ChannelList::File(file) => &file.channels,
            ChannelList::Environment(channel) => std::slice::from_ref(channel),
        }
    }

    /// The channels' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.channels().iter().map(|c| c.name.as_str()).collect()
    }

    /// The channels file, when the channels come from one.
    pub fn file(&self) -> Option<&Channels> {
        match self {
            ChannelList::File(file) => Some(file),
            ChannelList::Environment(_) => None,
        }
    }
}

impl PostingSettings {
    /// The posting section, validated for a command that `needs` (or not) to post.
    ///
    /// # Errors
    /// [`ConfigError`] naming a URL that is not http(s), or an X credential missing when the
    /// command posts.
    pub fn validate(&self, needs: Needs) -> Result<Posting, ConfigError> {
        // A command that posts nothing (a dry run, `seed`, `claims list`) needs no secret: the
        // values set are still checked, the others are left out and said once at startup.
        let secrets = match needs {
            Needs::Posting => Secrets::Required,
            Needs::NoPosting => Secrets::IfSet,
        };
        let x_api_base = http_url("X_API_BASE_URL", &self.x_api_base_url)?;
        // With a channels file, each channel names the variables of its own secrets.
        let channels = match text(&self.channels_file) {
            Some(path) => ChannelList::File(
                Channels::load(std::path::Path::new(path), &|var| std::env::var(var).ok(), secrets)
                    .map_err(|e| ConfigError::Channels(Box::new(e)))?,
            ),
            None => ChannelList::Environment(Box::new(self.environment_channel(x_api_base, needs)?)),
        };
        Ok(Posting {
            post_timeout: self.post_timeout_secs,
            max_posts_per_cycle: self.max_posts_per_cycle,
            max_post_attempts: self.max_post_attempts,
            posts_per_minute: self.posts_per_minute,
            posts_per_day: self.posts_per_day,
            channels,
        })
    }
}

impl PostingSettings {
    /// The X account of `X_API_BASE_URL` (`base_url`) and the four X credentials as the one
    /// channel [`ENVIRONMENT_CHANNEL`]; the credentials are required when the command posts,
    /// else those not set are listed in [`Channel::unset_secrets`] (and the channel prints).
    ///
    /// # Errors
    /// [`ConfigError::Missing`] naming an X credential not set when the command posts.
    fn environment_channel(&self, base_url: Url, needs: Needs) -> Result<Channel, ConfigError> {
        let secrets = [
            ("X_API_KEY", secret("X_API_KEY", &self.x_api_key, needs)?),
            ("X_API_SECRET", secret("X_API_SECRET", &self.x_api_secret, needs)?),
            ("X_ACCESS_TOKEN", secret("X_ACCESS_TOKEN", &self.x_access_token, needs)?),
            (
                "X_ACCESS_TOKEN_SECRET",
                secret("X_ACCESS_TOKEN_SECRET", &self.x_access_token_secret, needs)?,
            ),
        ];
        let unset_secrets = secrets
            .iter()
            .filter(|(_, value)| value.is_none())
            .map(|(var, _)| var.to_string())
            .collect();
        let credentials = match secrets.map(|(_, value)| value) {
            [Some(api_key), Some(api_secret), Some(access_token), Some(access_token_secret)] => Some(XCredentials {
                api_key,
                api_secret,
                access_token,
                access_token_secret,
            }),
            _ => None,
        };
        Ok(Channel {
            name: ENVIRONMENT_CHANNEL.to_string(),
            sink: SinkSettings::X { base_url, credentials },
            template: None,
            // The environment's X account posts as it always has: no hashtags.
            hashtags: false,
            // The bot's filter decides alone: this channel takes every match it lets through.
            filter: Filter {
                states: vec![
                    MatchState::Upcoming,
                    MatchState::Live,
                    MatchState::Complete,
                    MatchState::Abandoned,
                    MatchState::Other,
                ],
                ..Filter::default()
            },
            pace: None,
            // The bot's ANNOUNCE_BEFORE and TIMEZONE.
            announce_before: None,
            timezone: None,
            // The bot's EVENTS.
            events: None,
            result_template: None,
            result_without_announcement: crate::event::WithoutAnnouncement::default(),
            unset_secrets,
        })
    }
}

/// One X credential: required when the command posts, else read if given.
fn secret(var: &'static str, value: &Option<String>, needs: Needs) -> Result<Option<SecretString>, ConfigError> {
    match (text(value), needs) {
        (Some(v), _) => Ok(Some(SecretString::from(v.to_string()))),
        (None, Needs::Posting) => Err(ConfigError::Missing {
            var,
            why: "posting to X needs all four X credentials (use --dry-run to try the bot without them)",
        }),
        (None, Needs::NoPosting) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::post::SinkKind;
    use clap::Parser;

    #[derive(Parser)]
    struct Only {
        #[command(flatten)]
        posting: PostingSettings,
    }

    fn posting(args: &[&str], needs: Needs) -> Result<Posting, ConfigError> {
        let args = std::iter::once("bot").chain(args.iter().copied());
        Only::try_parse_from(args).unwrap().posting.validate(needs)
    }

    #[test]
    fn without_a_channels_file_the_environments_x_account_is_the_one_channel_x() {
        let credentials = [
            "--x-api-key",
            "k",
            "--x-api-secret",
            "s",
            "--x-access-token",
            "t",
            "--x-access-token-secret",
            "ts",
        ];
        let with_base = [&["--x-api-base-url", "http://127.0.0.1:9/"][..], &credentials].concat();
        let p = posting(&with_base, Needs::Posting).unwrap();
        assert!(p.channels.file().is_none());
        assert_eq!(p.channels.names(), vec![ENVIRONMENT_CHANNEL]);
        let c = &p.channels.channels()[0];
        assert!(c.has_secrets() && c.template.is_none() && c.pace.is_none());
        let SinkSettings::X { base_url, credentials } = &c.sink else {
            panic!("{:?}", c.sink)
        };
        assert_eq!(
            (base_url.as_str(), credentials.is_some()),
            ("http://127.0.0.1:9/", true)
        );
        assert_eq!(c.sink.kind(), SinkKind::X);
        // A command that posts nothing: the credentials not set are named, and the channel
        // cannot post.
        let p = posting(&["--x-api-key", "k"], Needs::NoPosting).unwrap();
        let c = &p.channels.channels()[0];
        assert_eq!(
            c.unset_secrets,
            ["X_API_SECRET", "X_ACCESS_TOKEN", "X_ACCESS_TOKEN_SECRET"]
        );
        assert!(matches!(&c.sink, SinkSettings::X { credentials: None, .. }));
        // A command that posts: the first one missing is the error.
        let Err(e) = posting(&["--x-api-key", "k"], Needs::Posting) else {
            panic!("a command that posts needs all four X credentials")
        };
        assert!(e.to_string().starts_with("X_API_SECRET is not set"), "{e}");
    }
}

//! The posting section: where X is, the credentials of the posting account, and the bounds on
//! posting (time per post, posts per cycle, attempts, local pace).

use super::value::{text, Whole};
use super::{http_url, ConfigError, Needs};
use crate::channels::{Channels, Secrets};
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
    /// Failures proving nothing was posted (e.g. X 400/429) after which a match is given up.
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
    /// X API base URL.
    pub x_api_base: Url,
    /// X credentials; `None` only when the command does not post.
    pub x_credentials: Option<XCredentials>,
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
    /// `CHANNELS_FILE`, read and validated; `None`: the one X channel of the settings above.
    pub channels: Option<Channels>,
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
        let channels = match text(&self.channels_file) {
            Some(path) => Some(
                Channels::load(std::path::Path::new(path), &|var| std::env::var(var).ok(), secrets)
                    .map_err(|e| ConfigError::Channels(Box::new(e)))?,
            ),
            None => None,
        };
        // With a channels file, each channel names the variables of its own secrets.
        let needs = if channels.is_some() { Needs::NoPosting } else { needs };
        let key = secret("X_API_KEY", &self.x_api_key, needs)?;
        let api_secret = secret("X_API_SECRET", &self.x_api_secret, needs)?;
        let token = secret("X_ACCESS_TOKEN", &self.x_access_token, needs)?;
        let token_secret = secret("X_ACCESS_TOKEN_SECRET", &self.x_access_token_secret, needs)?;
        let x_credentials = match (key, api_secret, token, token_secret) {
            (Some(api_key), Some(api_secret), Some(access_token), Some(access_token_secret)) => Some(XCredentials {
                api_key,
                api_secret,
                access_token,
                access_token_secret,
            }),
            _ => None,
        };
        Ok(Posting {
            x_api_base: http_url("X_API_BASE_URL", &self.x_api_base_url)?,
            x_credentials,
            post_timeout: self.post_timeout_secs,
            max_posts_per_cycle: self.max_posts_per_cycle,
            max_post_attempts: self.max_post_attempts,
            posts_per_minute: self.posts_per_minute,
            posts_per_day: self.posts_per_day,
            channels,
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

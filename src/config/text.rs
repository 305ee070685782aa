//! The post text section: the template a post is rendered from, and the link shortener.

use super::value::{text, Whole};
use super::{http_url, ConfigError, Problem};
use crate::cricket::Links;
use crate::shorten::Provider;
use secrecy::SecretString;
use std::path::PathBuf;
use std::time::Duration;
use url::Url;

/// The post text's settings, as given.
#[derive(clap::Args, Clone)]
pub struct TextSettings {
    /// Post template file (minijinja). Unset: the built-in template (templates/announce.txt of
    /// the source tree, compiled into the binary).
    // A string, not a path: a blank value (`TEMPLATE_PATH=` in .env) means unset.
    #[arg(long, env = "TEMPLATE_PATH", global = true)]
    pub template_path: Option<String>,
    /// Link shortener.
    #[arg(long, env = "SHORTENER", value_enum, ignore_case = true, default_value_t = ShortenerSetting::None, global = true)]
    pub shortener: ShortenerSetting,
    /// Shortener base URL (default: the provider's own).
    #[arg(long, env = "SHORTENER_BASE_URL", hide_env_values = true, global = true)]
    pub shortener_base_url: Option<String>,
    /// Bitly access token (SHORTENER=bitly).
    #[arg(long, env = "BITLY_TOKEN", hide_env_values = true, global = true)]
    pub bitly_token: Option<String>,
    /// Seconds a shortener may take before the long link is used.
    #[arg(long, env = "SHORTEN_TIMEOUT_SECS", value_parser = Whole::seconds(1), default_value = "5", global = true)]
    pub shorten_timeout_secs: Duration,
    /// Sites whose match page a post links to when several list the match, most preferred
    /// first (cricbuzz, espncricinfo, web). Unset: the first source in SOURCES that lists it.
    #[arg(long, env = "LINK_PREFERENCE", global = true)]
    pub link_preference: Option<String>,
    /// Page a post links to when no listing of the match has a page of its own (a match only
    /// CricketData lists). Unset: Cricbuzz's live-scores page.
    #[arg(long, env = "LINK_FALLBACK", global = true)]
    pub link_fallback: Option<String>,
}

/// A link shortener, as `SHORTENER` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShortenerSetting {
    /// No shortener: the match link as it is (also a blank `SHORTENER=`).
    #[value(alias = "off", alias = "")]
    None,
    /// is.gd.
    #[value(alias = "is.gd")]
    Isgd,
    /// Bitly (needs `BITLY_TOKEN`).
    Bitly,
}

/// The shortener to use and where it lives.
#[derive(Clone, Debug)]
pub struct ShortenerConfig {
    /// Which service.
    pub provider: Provider,
    /// Its base URL.
    pub base: Url,
}

/// The post text section, validated.
#[derive(Clone)]
pub struct PostText {
    /// Template file; `None`: the built-in template.
    pub template_path: Option<PathBuf>,
    /// Shortener, if any.
    pub shortener: Option<ShortenerConfig>,
    /// Time bound of one shortening.
    pub shorten_timeout: Duration,
    /// Which listing's page a post links to.
    pub links: Links,
}

impl TextSettings {
    /// The post text section, validated.
    ///
    /// # Errors
    /// [`ConfigError`] for Bitly without a token, a base URL or `LINK_FALLBACK` that is not
    /// http(s), or a `LINK_PREFERENCE` naming no site with match pages.
    pub fn validate(&self) -> Result<PostText, ConfigError> {
        let provider = match self.shortener {
            ShortenerSetting::None => None,
            ShortenerSetting::Isgd => Some(Provider::Isgd),
            ShortenerSetting::Bitly => match text(&self.bitly_token) {
                Some(token) => Some(Provider::Bitly(SecretString::from(token.to_string()))),
                None => {
                    return Err(ConfigError::Missing {
                        var: "BITLY_TOKEN",
                        why: "SHORTENER=bitly needs a Bitly access token",
                    })
                }
            },
        };
        let shortener = match provider {
            Some(provider) => {
                let base = match text(&self.shortener_base_url) {
                    Some(b) => http_url("SHORTENER_BASE_URL", b)?,
                    None => provider.default_base(),
                };
                Some(ShortenerConfig { provider, base })
            }
            None => None,
        };
        let fallback = http_url(
            "LINK_FALLBACK",
            text(&self.link_fallback).unwrap_or(crate::cricket::link::DEFAULT_FALLBACK),
        )?;
        let preferred = text(&self.link_preference).unwrap_or_default();
        let links = Links::new(preferred, fallback)
            .map_err(|e| ConfigError::invalid("LINK_PREFERENCE", preferred, Problem::Link(e)))?;
        Ok(PostText {
            template_path: text(&self.template_path).map(PathBuf::from),
            shortener,
            shorten_timeout: self.shorten_timeout_secs,
            links,
        })
    }
}

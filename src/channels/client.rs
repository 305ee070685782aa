//! Building a channel's client from its validated settings.

use super::error::ChannelsError;
use super::schema::{Channel, SinkSettings};
use crate::post::Sink;
use std::time::Duration;

impl Channel {
    /// The channel's client. A Mastodon sink starts with Mastodon's default length rule; call
    /// [`Sink::prepare`] once to read the instance's own.
    ///
    /// # Errors
    /// [`ChannelsError::Sink`] naming the channel when the client cannot be built, or
    /// [`ChannelsError::Client`] when its secrets were not read (the file was read for a
    /// command that posts nothing).
    pub fn sink(&self, timeout: Duration, connect_timeout: Duration) -> Result<Sink, ChannelsError> {
        let client = |problem: String| ChannelsError::Client {
            channel: self.name.clone(),
            problem,
        };
        if !self.unset_secrets.is_empty() {
            return Err(client(format!(
                "cannot post without {}, which {} not set",
                self.unset_secrets.join(", "),
                if self.unset_secrets.len() == 1 { "is" } else { "are" }
            )));
        }
        let unread = || client("its secrets were not read".into());
        let built = match &self.sink {
            SinkSettings::X { base_url, credentials } => {
                let credentials = credentials.clone().ok_or_else(unread)?;
                Sink::x(base_url, credentials, timeout, connect_timeout)
            }
            SinkSettings::Mastodon {
                instance,
                token,
                visibility,
                language,
            } => {
                let token = token.clone().ok_or_else(unread)?;
                Sink::mastodon(
                    instance,
                    token,
                    &self.name,
                    *visibility,
                    language.clone(),
                    timeout,
                    connect_timeout,
                )
            }
            SinkSettings::Bluesky {
                service,
                handle,
                app_password,
                language,
            } => {
                let app_password = app_password.clone().ok_or_else(unread)?;
                Sink::bluesky(
                    service,
                    handle,
                    app_password,
                    &self.name,
                    language.clone(),
                    timeout,
                    connect_timeout,
                )
            }
            SinkSettings::Discord { webhook_url } => {
                let webhook_url = webhook_url.clone().ok_or_else(unread)?;
                Sink::discord(webhook_url, timeout, connect_timeout)
            }
            SinkSettings::Telegram {
                api_base,
                bot_token,
                chat_id,
            } => {
                let bot_token = bot_token.as_ref().ok_or_else(unread)?;
                Sink::telegram(api_base, bot_token, chat_id.clone(), timeout, connect_timeout)
            }
        };
        built.map_err(|source| ChannelsError::Sink {
            channel: self.name.clone(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::{Channels, Secrets};
    use crate::post::SinkKind;
    use std::path::Path;

    #[test]
    fn each_channel_builds_its_client() {
        let text = r#"
            [[channel]]
            name = "d"
            sink = "discord"
            webhook_url_env = "W"
            [[channel]]
            name = "t"
            sink = "telegram"
            token_env = "T"
            chat_id = "@c"
        "#;
        let env = |k: &str| match k {
            "W" => Some("https://discord.com/api/webhooks/1/t".to_string()),
            "T" => Some("1:a".to_string()),
            _ => None,
        };
        let c = Channels::parse(text, Path::new("c.toml"), &env, Secrets::Required).unwrap();
        let sinks: Vec<SinkKind> = c
            .channels
            .iter()
            .map(|c| c.sink(Duration::from_secs(5), Duration::from_secs(2)).unwrap().kind())
            .collect();
        assert_eq!(sinks, vec![SinkKind::Discord, SinkKind::Telegram]);
    }
}

//! A channel's result posts: which finished matches are due one (a result the page proves, no
//! older than `RESULT_MAX_AGE`), the post rendered from the result template, and the post it
//! replies to, read from the announcement's claim on the same channel. The claim, the pace, the
//! post and its record are the announcement's path unchanged (`mod.rs`): a result is an event
//! claimed in its own namespace of the channel's claims (see [`crate::event`]).

use super::{AnnounceError, Announcer, Rendered};
use crate::claim::{ClaimError, ClaimState, ClaimStore, ReplyTo};
use crate::cricket::{Match, MatchResult, Sighting};
use crate::event::WithoutAnnouncement;
use crate::post::SinkKind;
use chrono::{DateTime, TimeDelta, Utc};
use std::sync::Arc;

/// How a channel posts results.
#[derive(Clone)]
pub struct ResultPlan {
    /// The channel's announcement claims, where the post a result replies to is recorded.
    pub announcements: ClaimStore,
    /// The longest after a match's end (as far as its page shows) its result is posted.
    pub max_age: TimeDelta,
    /// What a result without an announcement on the channel gets.
    pub without_announcement: WithoutAnnouncement,
}

/// Where a result goes, by what its announcement's claim says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parent {
    /// As a reply to this post.
    Reply(ReplyTo),
    /// On its own; the reason, for the log and the dry run.
    Standalone(&'static str),
    /// Not now, or never (`result_without_announcement = "skip"`), for this reason.
    Withheld(&'static str),
}

impl Announcer {
    /// This announcer, posting results by `plan` instead of announcements: its store must be
    /// the channel's result namespace ([`ClaimStore::for_event`]) and its template a result
    /// template.
    #[must_use]
    pub fn for_results(mut self, plan: ResultPlan) -> Announcer {
        self.results = Some(Arc::new(plan));
        self
    }

    /// The event this announcer posts.
    pub fn event(&self) -> crate::event::Event {
        match self.results {
            Some(_) => crate::event::Event::Result,
            None => crate::event::Event::Announce,
        }
    }

    /// Whether `m` is due a result post on this channel at `now`: finished with a result its
    /// page proves ([`MatchResult::read`]) that ended within `RESULT_MAX_AGE` of `now`. `false`
    /// for an announcer of announcements, and for a result whose end the page does not show
    /// (its age cannot be told, so it is never taken for a fresh one).
    pub fn result_due(&self, m: &Match, now: DateTime<Utc>) -> bool {
        let Some(plan) = &self.results else {
            return false;
        };
        match MatchResult::read(m) {
            Ok(result) => result.ended_by().is_some_and(|end| now - end <= plan.max_age),
            Err(_) => false,
        }
    }

    /// The result post for `s`, fitted to the sink, and the post it replies to (`None`:
    /// standalone); `Ok(Err(why))` when no result is posted now (the page proves none, or
    /// the announcement's state says to wait or to skip).
    pub(super) async fn result_post(
        &self,
        plan: &ResultPlan,
        s: &Sighting,
    ) -> Result<Result<(Rendered, Option<ReplyTo>), &'static str>, AnnounceError> {
        let (m, key) = (&s.m, &s.ids.key);
        let Ok(result) = MatchResult::read(m) else {
            return Ok(Err("no result on its page"));
        };
        let rule = self.length_rule();
        let text = self
            .template
            .render_result(m, &result, &m.url, self.zone, self.sink_kind(), rule)
            .map_err(|source| AnnounceError::Render {
                key: key.clone(),
                source,
            })?;
        let parent = self.parent(plan, s).await.map_err(|source| AnnounceError::Store {
            key: key.clone(),
            source,
        })?;
        let reply = match parent {
            Parent::Reply(to) => Some(to),
            Parent::Standalone(why) => {
                tracing::debug!(match_key = %key, reason = why, "the result is posted on its own");
                None
            }
            Parent::Withheld(why) => return Ok(Err(why)),
        };
        Ok(Ok((Rendered::new(text, rule), reply)))
    }

    /// Where the result of `s` goes: under the announcement its channel posted, read from the
    /// announcement's claim under every identity of the match.
    async fn parent(&self, plan: &ResultPlan, s: &Sighting) -> Result<Parent, ClaimError> {
        let sink = self.sink_kind();
        let none = |why| match plan.without_announcement {
            WithoutAnnouncement::Post => Parent::Standalone(why),
            WithoutAnnouncement::Skip => Parent::Withheld(why),
        };
        let Some((_, claim, _)) = plan.announcements.find(&s.ids).await? else {
            return Ok(none("no announcement on this channel"));
        };
        Ok(match (claim.state, claim.post_id) {
            (ClaimState::Posted, Some(post_id)) => match sink {
                SinkKind::Discord => Parent::Standalone("a Discord webhook cannot reply"),
                SinkKind::Bluesky if claim.post_cid.is_none() => {
                    Parent::Standalone("the announcement's record CID is not recorded")
                }
                _ => Parent::Reply(ReplyTo {
                    post_id,
                    cid: claim.post_cid,
                }),
            },
            (ClaimState::Posted, None) => none("the announcement's post id is not known"),
            // Its post is in flight: the next cycle knows.
            (ClaimState::Claimed, _) => Parent::Withheld("the announcement is being posted"),
            // `claims reconcile` settles it where the platform can tell: wait for it there.
            (ClaimState::Unknown, _) if matches!(sink, SinkKind::X | SinkKind::Mastodon | SinkKind::Bluesky) => {
                Parent::Withheld("the announcement's outcome is unknown until reconciled")
            }
            (ClaimState::Unknown, _) => none("the announcement's outcome is unknown"),
            (ClaimState::Seeded, _) => none("the announcement was recorded at first start, not posted"),
            (ClaimState::Failed, _) => none("the announcement failed"),
        })
    }
}

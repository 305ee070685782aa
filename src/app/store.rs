//! The store as the app sees it: opening the one `Config` names, where each channel's claims
//! are kept in it, its first-start marker (initialising, readiness), and whether it may evict
//! claims.

use super::StartError;
use super::{App, MARKER_TTL_FACTOR};
use crate::claim::{
    ClaimError, ClaimStore, EmbeddedClaims, EvictionRefusal, EvictionSafety, MarkerOrigin, PostgresClaims,
    PostgresError, RedisClaims,
};
use crate::config::{ChannelList, Config, StoreConfig};
use secrecy::ExposeSecret;
use std::time::Duration;

/// How often a process extends its channels' first-start markers: far inside their TTL
/// (`MARKER_TTL_FACTOR` × `CLAIM_TTL_SECS`, at least three days), and rare enough that a
/// hundred channels cost a hundred store calls an hour, not a cycle.
const CHANNEL_MARKER_REFRESH: Duration = Duration::from_secs(3600);

/// Why the bot may not post on this store now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreReadiness {
    /// Initialised: posting allowed.
    Ready,
    /// Never initialised (no marker, never seen one).
    NotInitialised,
    /// The marker was seen by this process and is gone: the store lost its data.
    Wiped,
}

/// Whether `store` keeps its claims (see [`ClaimStore::eviction_safety`]), logged: checked before
/// a bot that posts starts, by `check-sources` and by `/healthz`.
///
/// # Errors
/// [`EvictionRefusal`]: claims may be evicted, nobody can tell, or Redis did not answer.
pub async fn check_eviction(store: &ClaimStore, asserted: bool) -> Result<EvictionSafety, EvictionRefusal> {
    let safety = store.eviction_safety(asserted).await?;
    if let EvictionSafety::Asserted { reply } = &safety {
        tracing::warn!(config_get = %reply, "Redis does not say its maxmemory-policy; relying on REDIS_EVICTION_POLICY_ASSERTED=noeviction");
    }
    Ok(safety)
}

/// The claims of the channel `name` of `channels` in the deployment's store `base`: under the
/// channel's own prefix (`<prefix>ch:<name>:`, [`ClaimStore::for_channel`]) for a channel of the
/// channels file; the deployment's own keys for the environment's X channel, as every release
/// before channels kept them. What the cycle claims in and the `claims` commands read.
pub fn channel_claims(base: &ClaimStore, channels: &ChannelList, name: &str) -> ClaimStore {
    match channels {
        ChannelList::File(_) => base.for_channel(name),
        ChannelList::Environment(_) => base.clone(),
    }
}

/// What a command does with the store it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Claims and records: PostgreSQL's ledger is created or migrated as needed.
    ReadWrite,
    /// Reads only (a dry run, `claims list` and `show`): nothing is created, on any store.
    ReadOnly,
}

/// Opens the store `config` names, read-only for a dry run (see [`open_store_for`]).
///
/// # Errors
/// As [`open_store_for`].
pub async fn open_store(config: &Config) -> Result<ClaimStore, StartError> {
    let access = if config.dry_run() {
        Access::ReadOnly
    } else {
        Access::ReadWrite
    };
    open_store_for(config, access).await
}

/// Opens the store `config` names for `access`. Read-only, a PostgreSQL schema without the
/// claims ledger is neither created nor migrated: a dry run reads every match as unclaimed (as
/// it does from an embedded file that does not exist), and `claims list` refuses (a mistyped
/// schema must not read as "no claims").
///
/// # Errors
/// [`StartError::Store`] when Redis or PostgreSQL cannot be reached (or PostgreSQL's
/// migrations fail, or a read-only listing finds no ledger), or the embedded file cannot be
/// opened.
pub async fn open_store_for(config: &Config, access: Access) -> Result<ClaimStore, StartError> {
    let failed = |what: String| move |source| StartError::Store { what, source };
    Ok(match &config.store.backend {
        StoreConfig::Redis(url) => ClaimStore::Redis(
            RedisClaims::connect_with(
                url.expose_secret(),
                &config.store.key_prefix,
                &config.store.instance_id,
                &config.store.redis,
            )
            .await
            .map_err(failed("connect to REDIS_URL".into()))?,
        ),
        StoreConfig::Embedded(path) if access == Access::ReadOnly => ClaimStore::Embedded(
            EmbeddedClaims::open_read_only(path, &config.store.key_prefix, &config.store.instance_id)
                .map_err(failed(format!("open the embedded store STORE_PATH={}", path.display())))?,
        ),
        StoreConfig::Postgres(url) if access == Access::ReadOnly => {
            let read = PostgresClaims::connect_read_only(
                url.expose_secret(),
                &config.store.key_prefix,
                &config.store.instance_id,
                config.store.database_ca_file.as_deref(),
            )
            .await;
            match read {
                Ok(store) => ClaimStore::Postgres(store),
                Err(ClaimError::Postgres {
                    source: PostgresError::NoLedger { schema },
                    ..
                }) if config.dry_run() => {
                    tracing::warn!(%schema, "DATABASE_URL has no claims ledger there: the dry run reads every match as unclaimed, and creates nothing");
                    ClaimStore::Embedded(
                        EmbeddedClaims::empty(&config.store.key_prefix, &config.store.instance_id)
                            .map_err(failed("make an empty store for the dry run".into()))?,
                    )
                }
                Err(e) => return Err(failed("open the PostgreSQL store DATABASE_URL".into())(e)),
            }
        }
        StoreConfig::Postgres(url) => ClaimStore::Postgres(
            PostgresClaims::connect_with(
                url.expose_secret(),
                &config.store.key_prefix,
                &config.store.instance_id,
                config.store.database_ca_file.as_deref(),
            )
            .await
            .map_err(failed("open the PostgreSQL store DATABASE_URL".into()))?,
        ),
        StoreConfig::Embedded(path) => ClaimStore::Embedded(
            EmbeddedClaims::open(path, &config.store.key_prefix, &config.store.instance_id)
                .map_err(failed(format!("open the embedded store STORE_PATH={}", path.display())))?,
        ),
    })
}

impl App {
    pub(super) fn marker_ttl(&self) -> Duration {
        self.policy.ttl.checked_mul(MARKER_TTL_FACTOR).unwrap_or(Duration::MAX)
    }

    /// `--init-store`: initialises the store if it has no marker (one atomic step; two
    /// processes doing it at once is safe). Returns whether this call wrote the marker.
    ///
    /// With a channels file, on a store without the deployment's marker, each channel's own
    /// marker is written first and the deployment's last, so that whoever finds the deployment's
    /// marker finds every initialised channel's too. A channel without a marker on an
    /// initialised store is taken for one added since, and its first cycle records the current
    /// matches instead of posting them: the other order let a replica starting at the same
    /// moment (or after an initialiser stopped half-way) do that to a channel whose marker was
    /// still to be written, and those matches were never announced there.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer; then the deployment's marker is written only
    /// if every channel's was, and running it again finishes the job.
    pub async fn init_store(&self) -> Result<bool, ClaimError> {
        use std::sync::atomic::Ordering;
        // On a store already initialised, a channel without a marker is a channel added since:
        // it seeds itself (see the cycle), so its marker is not written here.
        if self.store.marker().await?.is_none() {
            // A result's run has no marker written here: its first cycle finds none and records
            // the results already on the pages (seeded), so a first start posts no old result.
            for channel in self
                .channels
                .iter()
                .filter(|c| c.own_marker && c.event() == crate::event::Event::Announce)
            {
                channel.initialise(MarkerOrigin::InitStore, self.marker_ttl()).await?;
            }
        }
        let (marker, wrote) = self
            .store
            .initialise(MarkerOrigin::InitStore, self.marker_ttl())
            .await?;
        if wrote {
            tracing::warn!("store initialised by --init-store: every current match will be announced");
        } else {
            tracing::info!(by = %marker.by, at = %marker.at, how = %marker.how, "store already initialised");
        }
        self.saw_marker.store(true, Ordering::SeqCst);
        Ok(wrote)
    }

    /// Extends each channel's own first-start marker, at most once per
    /// [`CHANNEL_MARKER_REFRESH`] in this process: a channel's marker lives
    /// `MARKER_TTL_FACTOR` × `CLAIM_TTL_SECS` like the deployment's, and a marker left to
    /// expire made the next start take a running channel for one just added, which records the
    /// matches listed then (those waiting for `ANNOUNCE_BEFORE` too) without posting them.
    /// A marker this process saw and finds gone (deleted by hand; the deployment's is there)
    /// is written again, so the channel goes on posting rather than seeding itself.
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    async fn refresh_channel_markers(&self) -> Result<(), ClaimError> {
        use std::sync::atomic::Ordering;
        {
            let mut last = self
                .channel_markers_refreshed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if last.is_some_and(|at| at.elapsed() < CHANNEL_MARKER_REFRESH) {
                return Ok(());
            }
            *last = Some(std::time::Instant::now());
        }
        for channel in self.channels.iter().filter(|c| c.own_marker) {
            let store = channel.announcer.store();
            if store.refresh_marker(self.marker_ttl()).await? {
                channel.saw_marker.store(true, Ordering::SeqCst);
            } else if channel.saw_marker.load(Ordering::SeqCst) {
                tracing::warn!(channel = %channel.name(), "the channel's first-start marker is gone while the deployment's is there; written again, so the channel goes on posting");
                channel.initialise(MarkerOrigin::NewChannel, self.marker_ttl()).await?;
            }
        }
        Ok(())
    }

    /// Whether posting is allowed on the store now; refreshes the marker's TTL when present,
    /// and the channels' own markers (see [`App::refresh_channel_markers`]).
    ///
    /// # Errors
    /// [`ClaimError`] when the store cannot answer.
    pub async fn readiness(&self) -> Result<StoreReadiness, ClaimError> {
        use std::sync::atomic::Ordering;
        if self.store.refresh_marker(self.marker_ttl()).await? {
            self.saw_marker.store(true, Ordering::SeqCst);
            self.refresh_channel_markers().await?;
            return Ok(StoreReadiness::Ready);
        }
        Ok(if self.saw_marker.load(Ordering::SeqCst) {
            StoreReadiness::Wiped
        } else {
            StoreReadiness::NotInitialised
        })
    }
}

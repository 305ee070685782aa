//! Claims the store may drop: Redis' eviction policy (refused unless `noeviction`, or asserted
//! where `CONFIG` is disabled), and replication (`CLAIM_MIN_REPLICAS`). Each test starts its own
//! `redis-server`s on free ports.

use crate::cli::{bot, text, with_x};
use crate::helpers::{live_app, root, x_accepts, OwnRedis};
use std::process::Output;
use wiremock::MockServer;

/// Enough memory for the bot's few keys; what matters is the policy.
const MAXMEMORY: &str = "64mb";

/// `backfill --init-store` on the Cricbuzz fixture against `redis_url`, with `env` added.
async fn backfill(redis_url: &str, x: &MockServer, env: &[(&str, &str)]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = bot(dir.path());
    with_x(&mut cmd, x);
    cmd.env("REDIS_URL", redis_url)
        .env("SOURCES", root().join("fixtures/cricbuzz/live-scores_2026-07-17.html"))
        .env("MAX_POSTS_PER_CYCLE", "10")
        .envs(env.iter().copied())
        .args(["backfill", "--init-store"]);
    cmd.output().await.unwrap()
}

/// `check-sources` against `redis_url`.
async fn check_sources(redis_url: &str, env: &[(&str, &str)]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = bot(dir.path());
    cmd.env("REDIS_URL", redis_url)
        .env("SOURCES", root().join("fixtures/cricbuzz/live-scores_2026-07-17.html"))
        .envs(env.iter().copied())
        .arg("check-sources");
    cmd.output().await.unwrap()
}

async fn dbsize(redis: &OwnRedis) -> i64 {
    let mut conn = connect(redis).await;
    redis::cmd("DBSIZE").query_async(&mut conn).await.unwrap()
}

async fn connect(redis: &OwnRedis) -> redis::aio::MultiplexedConnection {
    redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}

async fn set_policy(redis: &OwnRedis, policy: &str) {
    let mut conn = connect(redis).await;
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg(policy)
        .exec_async(&mut conn)
        .await
        .unwrap();
}

fn evicting(policy: &str, why: &str) -> String {
    format!(
        "Redis maxmemory-policy is {policy}: {why}, and a match whose claim is evicted is announced again, so the bot refuses to post; run `CONFIG SET maxmemory-policy noeviction` on the server (and set `maxmemory-policy noeviction` in redis.conf so it survives a restart)"
    )
}

#[tokio::test]
async fn a_redis_that_may_evict_claims_is_refused_before_anything_is_posted_until_set_to_noeviction() {
    for (policy, why) in [
        (
            "volatile-lru",
            "when memory is full Redis evicts keys that have a TTL, and every claim key has one",
        ),
        (
            "allkeys-lru",
            "when memory is full Redis evicts any key, claim keys included",
        ),
    ] {
        let redis = OwnRedis::start_with(&["--maxmemory", MAXMEMORY, "--maxmemory-policy", policy]);
        let x = MockServer::start().await;
        x_accepts(&x, 0).await;
        let o = backfill(&redis.url(), &x, &[]).await;
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{policy}: {stdout}{stderr}");
        let refusal = evicting(policy, why);
        assert_eq!(
            stderr.lines().last(),
            Some(format!("error: {refusal}").as_str()),
            "{stderr}"
        );
        assert_eq!(dbsize(&redis).await, 0, "{policy}: nothing claimed, no marker written");

        let o = check_sources(&redis.url(), &[]).await;
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert_eq!(
            stdout.lines().last(),
            Some(format!("store redis: ERROR: {refusal}").as_str())
        );
        x.verify().await;

        set_policy(&redis, "noeviction").await;
        let x = MockServer::start().await;
        x_accepts(&x, 4).await;
        let o = backfill(&redis.url(), &x, &[]).await;
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
        assert!(stdout.contains("posted 4, skipped 0, failed 0"), "{stdout}");
        let o = check_sources(&redis.url(), &[]).await;
        assert_eq!(o.status.code(), Some(0));
        assert_eq!(
            text(&o).0.lines().last(),
            Some("store redis: ok (maxmemory-policy noeviction)")
        );
    }
}

#[tokio::test]
async fn where_config_is_disabled_posting_needs_the_operator_to_assert_noeviction() {
    let redis = OwnRedis::start_with(&["--rename-command", "CONFIG", ""]);
    let x = MockServer::start().await;
    x_accepts(&x, 0).await;
    let o = backfill(&redis.url(), &x, &[]).await;
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: cannot read Redis maxmemory-policy: CONFIG GET answered \"")
            && last.ends_with(
                "(managed Redis services often disable CONFIG), so nobody can tell whether claims may be evicted and the bot refuses to post; set the service's eviction policy to noeviction, then set REDIS_EVICTION_POLICY_ASSERTED=noeviction"
            ),
        "{last}"
    );
    assert_eq!(dbsize(&redis).await, 0);
    x.verify().await;

    let x = MockServer::start().await;
    x_accepts(&x, 4).await;
    let o = backfill(&redis.url(), &x, &[("REDIS_EVICTION_POLICY_ASSERTED", "noeviction")]).await;
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("posted 4, skipped 0, failed 0"), "{stdout}");
    assert!(
        stderr.contains("relying on REDIS_EVICTION_POLICY_ASSERTED=noeviction"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_policy_changed_to_evict_while_running_fails_healthz_and_stops_posting() {
    let redis = OwnRedis::start_with(&["--maxmemory", MAXMEMORY]);
    let x = MockServer::start().await;
    x_accepts(&x, 4).await;
    let app = live_app(&redis.url(), "durable:", &x).await;
    app.init_store().await.unwrap();
    assert_eq!(app.health().await, Vec::<String>::new());

    set_policy(&redis, "volatile-lru").await;
    let refusal = evicting(
        "volatile-lru",
        "when memory is full Redis evicts keys that have a TTL, and every claim key has one",
    );
    assert_eq!(app.health().await, vec![refusal.clone()]);
    let (summary, ok) = app.backfill().await;
    assert_eq!((summary.posted, ok), (0, false));
    assert_eq!(summary.refused.as_deref(), Some(refusal.as_str()));
    assert_eq!(dbsize(&redis).await, 1, "only the marker: nothing claimed");

    set_policy(&redis, "noeviction").await;
    assert_eq!(app.health().await, Vec::<String>::new());
    let (summary, ok) = app.backfill().await;
    assert_eq!((summary.posted, ok), (4, true));
}

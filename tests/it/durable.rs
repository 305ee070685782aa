//! Claims the store may drop: Redis' eviction policy (refused unless `noeviction`, or asserted
//! where `CONFIG` is disabled), and replication (`CLAIM_MIN_REPLICAS`). Each test starts its own
//! `redis-server`s on free ports.

use crate::cli::{bot, text, with_x};
use crate::helpers::{live_app, root, x_accepts, OwnRedis};
use std::process::Output;
use wiremock::MockServer;

/// Enough memory for the bot's few keys; what matters is the policy.
const MAXMEMORY: &str = "64mb";

/// `backfill --init-store` on the Cricbuzz fixture against `redis_url`, with `env` added, and
/// X expecting exactly `posts` posts (checked); the exit code must be `code` and stdout must
/// hold `summary` (`posted 4, skipped 0, failed 0`). Returns stderr.
async fn backfill(redis_url: &str, env: &[(&str, &str)], posts: u64, code: i32, summary: &str) -> String {
    let x = MockServer::start().await;
    x_accepts(&x, posts).await;
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = bot(dir.path());
    with_x(&mut cmd, &x);
    cmd.env("REDIS_URL", redis_url)
        .env("SOURCES", root().join("fixtures/cricbuzz/live-scores_2026-07-17.html"))
        .env("MAX_POSTS_PER_CYCLE", "10")
        .envs(env.iter().copied())
        .args(["backfill", "--init-store"]);
    let o = cmd.output().await.unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(code), "{stdout}{stderr}");
    assert!(stdout.contains(summary), "{stdout}");
    x.verify().await;
    stderr
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
        let stderr = backfill(&redis.url(), &[], 0, 1, "").await;
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

        set_policy(&redis, "noeviction").await;
        backfill(&redis.url(), &[], 4, 0, "posted 4, skipped 0, failed 0").await;
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
    let stderr = backfill(&redis.url(), &[], 0, 1, "").await;
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: cannot read Redis maxmemory-policy: CONFIG GET answered \"")
            && last.ends_with(
                "(managed Redis services often disable CONFIG), so nobody can tell whether claims may be evicted and the bot refuses to post; set the service's eviction policy to noeviction, then set REDIS_EVICTION_POLICY_ASSERTED=noeviction"
            ),
        "{last}"
    );
    assert_eq!(dbsize(&redis).await, 0);

    let asserted = [("REDIS_EVICTION_POLICY_ASSERTED", "noeviction")];
    let stderr = backfill(&redis.url(), &asserted, 4, 0, "posted 4, skipped 0, failed 0").await;
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

/// Field `name` of `INFO replication` on `redis`.
pub(crate) async fn replication(redis: &OwnRedis, name: &str) -> String {
    // A server changing role (a failover) closes its clients' connections, even one being
    // opened: a failed read is "not known yet", and the waits that ask this ask again.
    let Ok(mut conn) = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
    else {
        return String::new();
    };
    let Ok(info) = redis::cmd("INFO")
        .arg("replication")
        .query_async::<String>(&mut conn)
        .await
    else {
        return String::new();
    };
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Waits (up to 10 s) until `INFO replication` field `name` on `redis` reads `want`.
async fn wait_for_replication(redis: &OwnRedis, name: &str, want: &str) {
    for _ in 0..200 {
        if replication(redis, name).await == want {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{name} never became {want}");
}

/// The claim keys under `prefix` on `redis`, sorted.
async fn claim_keys(redis: &OwnRedis, prefix: &str) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}match:*"))
        .query_async(&mut connect(redis).await)
        .await
        .unwrap();
    keys.sort();
    keys
}

#[tokio::test]
async fn with_claim_min_replicas_a_claim_no_replica_acknowledged_is_released_and_not_posted() {
    let primary = OwnRedis::start();
    let port = primary.port().to_string();
    let mut replica = OwnRedis::start_with(&["--replicaof", "127.0.0.1", &port]);
    wait_for_replication(&replica, "master_link_status", "up").await;
    wait_for_replication(&primary, "connected_slaves", "1").await;
    let min_replicas = ("CLAIM_MIN_REPLICAS", "1");

    // The replica acknowledges: every match posted, and the replica, promoted, holds each claim.
    let up = [min_replicas, ("KEY_PREFIX", "up:")];
    backfill(&primary.url(), &up, 4, 0, "posted 4, skipped 0, failed 0").await;
    redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .exec_async(&mut connect(&replica).await)
        .await
        .unwrap();
    backfill(&replica.url(), &up, 0, 0, "posted 0, skipped 4, failed 0").await;
    replica.stop();
    wait_for_replication(&primary, "connected_slaves", "0").await;

    // No replica: nothing posted, the claim released, and the log says why.
    let down = [min_replicas, ("KEY_PREFIX", "down:")];
    let stderr = backfill(
        &primary.url(),
        &down,
        0,
        1,
        "posted 0, skipped 0, failed 1, store errors 1",
    )
    .await;
    let why = "was acknowledged by 0 of the 1 replicas CLAIM_MIN_REPLICAS requires within 2000 ms, so it might not survive a failover: not posting; the claim was released, and the match is tried again next cycle (check the replicas: INFO replication)";
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.contains("claim on 2026-07-17_") && l.contains(why))
            .count(),
        1,
        "{stderr}"
    );
    assert_eq!(claim_keys(&primary, "down:").await, Vec::<String>::new(), "released");

    // The same, without the setting: posted.
    backfill(
        &primary.url(),
        &[("KEY_PREFIX", "off:")],
        4,
        0,
        "posted 4, skipped 0, failed 0",
    )
    .await;
    assert_eq!(claim_keys(&primary, "off:").await.len(), 4);
}

/// The configuration error `args` (flags before `backfill`) give, as shown to the operator:
/// refused by clap as it reads a value, or by the validation of a section.
fn config_error(args: &[&str]) -> String {
    use clap::Parser;
    use cricket_announcer::config::{Config, Invocation, Needs};
    let cli = match cricket_announcer::cli::Cli::try_parse_from(
        ["cricket-announcer"].iter().chain(args).chain(&["backfill"]),
    ) {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.to_string();
            return text
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
                .to_string();
        }
    };
    Config::from_settings(&cli.settings, Invocation::new(&cli.source, Needs::NoPosting))
        .err()
        .expect("refused")
        .to_string()
}

#[test]
fn redis_only_settings_are_refused_where_they_cannot_apply() {
    assert_eq!(
        config_error(&["--database-url", "postgres://u@h/db", "--claim-min-replicas", "1"]),
        "invalid CLAIM_MIN_REPLICAS=\"1\": applies to Redis (REDIS_URL) only; PostgreSQL's synchronous replication is the server's setting (synchronous_standby_names)"
    );
    assert_eq!(
        config_error(&["--redis-url", "redis://h/", "--claim-min-replicas", "0"]),
        "invalid CLAIM_MIN_REPLICAS=\"0\": expected a whole number, at least 1"
    );
    assert_eq!(
        config_error(&["--redis-url", "redis://h/", "--redis-ca-file", "/etc/ca.pem"]),
        "invalid REDIS_CA_FILE=\"/etc/ca.pem\": applies to a TLS REDIS_URL only (rediss:// or valkeys://)"
    );
}

#[test]
fn an_owner_is_stuck_only_after_its_shortener_and_its_post_could_both_have_timed_out() {
    use clap::Parser;
    use cricket_announcer::announcer::{ClaimPolicy, STUCK_MARGIN};
    use cricket_announcer::cli::Cli;
    use cricket_announcer::config::{Config, Invocation, Needs};
    use std::time::Duration;
    let config = |args: &[&str]| {
        let mut all = vec!["cricket-announcer", "--source", "x.html", "--post-timeout-secs", "30"];
        all.extend_from_slice(args);
        all.extend(["--dry-run", "backfill"]);
        let cli = Cli::try_parse_from(all).unwrap();
        Config::from_settings(&cli.settings, Invocation::new(&cli.source, Needs::NoPosting)).unwrap()
    };
    let stuck_after = |c: &Config| ClaimPolicy::new(Duration::from_secs(86_400), 3, c.send_bound()).stuck_after;
    // No shortener: the post's time-out and the margin.
    assert_eq!(stuck_after(&config(&[])), Duration::from_secs(30) + STUCK_MARGIN);
    // Shortening comes between the claim and the post: its time-out counts too.
    let shortening = config(&["--shortener", "isgd", "--shorten-timeout-secs", "60"]);
    assert_eq!(stuck_after(&shortening), Duration::from_secs(90) + STUCK_MARGIN);
}

-- The PostgreSQL ledger: one row per match (the row IS the claim), never deleted, plus an
-- append-only event log of every state change and a small key/value table with expiry for the
-- keys that are not claims (attempt counters, the first-start marker).
-- Applied by refinery at startup (src/claim/postgres.rs); see migrations/README.md.

CREATE TABLE claims (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- KEY_PREFIX: several bots may share one database, as they may share one Redis.
    prefix      text        NOT NULL,
    match_key   text        NOT NULL,
    -- 'released' rows are logically absent: kept as history, claimable again.
    state       text        NOT NULL
                CHECK (state IN ('claimed', 'posted', 'unknown', 'failed', 'seeded', 'released')),
    owner       text        NOT NULL,
    token       text,
    title       text,
    attempts    integer,
    claimed_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    tweet_id    text,
    -- Why the row is in its state (the failure, the note on a duplicate...).
    detail      text,
    -- Past this instant the claim is logically absent and the next sighting may reclaim the row.
    expires_at  timestamptz NOT NULL,
    -- The claim record exactly as the bot wrote it last; the columns above are read from it.
    record      jsonb       NOT NULL,
    UNIQUE (prefix, match_key)
);

CREATE TABLE claim_events (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    claim_id   bigint      NOT NULL REFERENCES claims (id),
    prefix     text        NOT NULL,
    match_key  text        NOT NULL,
    -- A claims.state, or 'expired' when a lapsed claim was reclaimed by a later sighting.
    state      text        NOT NULL,
    owner      text        NOT NULL,
    tweet_id   text,
    detail     text,
    at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX claim_events_claim_id ON claim_events (claim_id);

-- Rows of claims change in place (one row per match), so the history lives here, written by
-- the database itself: no code path can change a claim without leaving an event.
CREATE FUNCTION log_claim_event() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
    IF tg_op = 'UPDATE' AND old.token IS DISTINCT FROM new.token AND old.state <> 'released' THEN
        -- A new token on a row that was not released: the old claim's TTL had passed.
        INSERT INTO claim_events (claim_id, prefix, match_key, state, owner, tweet_id, detail, at)
        VALUES (old.id, old.prefix, old.match_key, 'expired', old.owner, old.tweet_id, old.detail,
                old.expires_at);
    END IF;
    INSERT INTO claim_events (claim_id, prefix, match_key, state, owner, tweet_id, detail)
    VALUES (new.id, new.prefix, new.match_key, new.state, new.owner, new.tweet_id, new.detail);
    RETURN NULL;
END
$$;

CREATE TRIGGER claims_inserted AFTER INSERT ON claims
    FOR EACH ROW EXECUTE FUNCTION log_claim_event();
-- A TTL refresh (expires_at only) is not an event.
CREATE TRIGGER claims_changed AFTER UPDATE ON claims
    FOR EACH ROW
    WHEN (old.state IS DISTINCT FROM new.state
          OR old.token IS DISTINCT FROM new.token
          OR old.record IS DISTINCT FROM new.record)
    EXECUTE FUNCTION log_claim_event();

CREATE TABLE store_keys (
    key        text        PRIMARY KEY,
    value      text        NOT NULL,
    expires_at timestamptz NOT NULL
);

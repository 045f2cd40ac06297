-- 011: people signed in with Gitea (sign-in for the dashboard and the
-- River UI). The cookie carries a random secret; only its SHA-256 is kept,
-- so a copy of this table opens no session. A session ends at the first
-- of expires_at (absolute), idle_expires_at (moved on by use) and
-- revoked_at. permissions maps "owner/repo" to the scope the person's
-- Gitea permission gives there (read, write or approve; absent: none),
-- as read at permissions_at.
CREATE TABLE web_sessions (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    secret_hash     bytea NOT NULL UNIQUE,
    login           text NOT NULL,
    gitea_user_id   bigint NOT NULL,
    created_at      timestamptz NOT NULL,
    last_seen_at    timestamptz NOT NULL,
    idle_expires_at timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    revoked_at      timestamptz,
    permissions     jsonb NOT NULL DEFAULT '{}',
    permissions_at  timestamptz NOT NULL,
    user_agent      text NOT NULL DEFAULT ''
);
CREATE INDEX web_sessions_login ON web_sessions (lower(login));
CREATE INDEX web_sessions_ends ON web_sessions (least(expires_at, idle_expires_at, coalesce(revoked_at, 'infinity')));

-- A sign-in under way, from the redirect to Gitea until its callback: the
-- state's hash (the browser holds the state in a cookie as well) and the
-- PKCE verifier, which never leaves the server.
CREATE TABLE web_logins (
    state_hash bytea PRIMARY KEY,
    verifier   text NOT NULL,
    return_to  text NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX web_logins_created ON web_logins (created_at);

-- Standups: the daily report and its delivery to each configured sink.
--
-- The standups table belongs to 003_tools.sql (the agent tools' migration,
-- whose standup view serves the latest row). It is repeated here, with the
-- same definition and IF NOT EXISTS, only so that this migration stands on
-- its own where 003 is not present; where 003 ran first this is a no-op.
CREATE TABLE IF NOT EXISTS standups (
    id               bigserial PRIMARY KEY,
    project_id       bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    day              date NOT NULL,
    snapshot_version bigint NOT NULL DEFAULT 0,
    content          jsonb NOT NULL,
    text             text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, day)
);

-- One row per project, local day and sink: the delivery bookkeeping that
-- makes each sink get a day's standup exactly once. A row is written in
-- the same transaction as the River job that delivers it; the job marks it
-- delivered, or records the failed attempt and is retried with backoff.
CREATE TABLE standup_deliveries (
    project_id   bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    day          date NOT NULL,
    -- sink names one configured destination: webhook, slack, matrix, email
    -- or gitea.
    sink         text NOT NULL,
    status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts     int NOT NULL DEFAULT 0,
    last_error   text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    delivered_at timestamptz,
    UNIQUE (project_id, day, sink)
);

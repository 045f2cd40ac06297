-- Standups: delivery bookkeeping. The standups themselves are rows of the
-- standups table (003_tools.sql): one per project and local day, written
-- once by the daily job (store.InsertStandupOnce).

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

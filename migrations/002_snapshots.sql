-- Derived data: each issue's current lifecycle state, its transitions, and
-- the versioned snapshots that read tools serve.

CREATE TABLE issue_states (
    project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    number     bigint NOT NULL,
    state      text NOT NULL,
    flags      jsonb NOT NULL DEFAULT '{}',
    since      timestamptz NOT NULL,
    PRIMARY KEY (project_id, number)
);

CREATE TABLE transitions (
    id         bigserial PRIMARY KEY,
    project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    issue      bigint NOT NULL,
    from_state text NOT NULL DEFAULT '',
    to_state   text NOT NULL,
    at         timestamptz NOT NULL,
    -- cause names what moved the issue: "delivery:<id>", "timeline:<id>",
    -- "reconcile" or "time" (a flag such as stale that time alone sets).
    cause      text NOT NULL DEFAULT ''
);
CREATE INDEX transitions_issue ON transitions (project_id, issue, at, id);

CREATE TABLE snapshots (
    project_id     bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    version        bigint NOT NULL,
    inputs_hash    text NOT NULL,
    change_counter bigint NOT NULL,
    computed_at    timestamptz NOT NULL DEFAULT now(),
    duration_ms    double precision NOT NULL,
    data           jsonb NOT NULL,
    PRIMARY KEY (project_id, version)
);

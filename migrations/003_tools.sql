-- What the agent tools keep besides the mirror: the standups the daily job
-- produces (the standup view serves the latest) and the directive ledger
-- (pm-state.md) that record_directive appends to and apply_changes settles.

CREATE TABLE standups (
    id               bigserial PRIMARY KEY,
    project_id       bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    -- day is the local working day the standup is for; one per project and day.
    day              date NOT NULL,
    snapshot_version bigint NOT NULL DEFAULT 0,
    -- content is the deterministic report: drift, per-person plan, stale
    -- blockers. text is the prose delivered (template or checked model prose).
    content          jsonb NOT NULL,
    text             text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, day)
);

CREATE TABLE directives (
    id          bigserial PRIMARY KEY,
    project_id  bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('reprioritize', 'reestimate', 'set-deadline', 'scope', 'capacity', 'note')),
    -- quote is the PM's words, verbatim.
    quote       text NOT NULL,
    -- target is {issue?, milestone?, member?}.
    target      jsonb NOT NULL DEFAULT '{}',
    params      jsonb,
    rationale   text NOT NULL DEFAULT '',
    -- caller is the name of the token that recorded the directive.
    caller      text NOT NULL,
    -- consequence is the what-if's [{before, after}] per affected milestone,
    -- summary its one-line reading.
    consequence jsonb NOT NULL DEFAULT '[]',
    summary     text NOT NULL DEFAULT '',
    status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'applied')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    applied_at  timestamptz
);
CREATE INDEX directives_project_created ON directives (project_id, created_at DESC, id DESC);
CREATE INDEX directives_project_pending ON directives (project_id, id) WHERE status = 'pending';

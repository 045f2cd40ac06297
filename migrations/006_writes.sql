-- The write path of the agent tools: apply_changes' idempotency keys and
-- progress, the audit of every write call, and CommiTea's own capacity
-- calendar that capacity directives change.

-- One row per (project, idempotency key). ops_hash is the batch the key
-- was first used with; done lists the indexes of the ops already applied
-- and created the issue numbers create_issue ops got (by op index), so a
-- retry after a Gitea failure continues where the batch stopped. answer is
-- the final answer, replayed for 24 hours once status is 'done'.
CREATE TABLE tool_idempotency (
    project_id  bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    key         text NOT NULL,
    ops_hash    text NOT NULL,
    caller      text NOT NULL,
    status      text NOT NULL DEFAULT 'partial' CHECK (status IN ('partial', 'done')),
    done        jsonb NOT NULL DEFAULT '[]',
    created     jsonb NOT NULL DEFAULT '{}',
    answer      jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, key)
);
CREATE INDEX tool_idempotency_created ON tool_idempotency (created_at);

-- Every write tool call: who, what, and how it ended (outcome is applied,
-- partial, rejected, needs_approval, failed or recorded).
CREATE TABLE tool_audit (
    id          bigserial PRIMARY KEY,
    project_id  bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    tool        text NOT NULL,
    caller      text NOT NULL,
    input       jsonb NOT NULL,
    outcome     text NOT NULL,
    result      jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tool_audit_project_created ON tool_audit (project_id, created_at DESC);

-- CommiTea's capacity calendar: per person, focused hours per day (null:
-- the configured calendar's) and time off as [{"from","to"}] local dates.
-- The recompute overlays it on the configured team.
CREATE TABLE capacity (
    project_id    bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    login         text NOT NULL,
    hours_per_day double precision CHECK (hours_per_day IS NULL OR (hours_per_day > 0 AND hours_per_day <= 24)),
    time_off      jsonb NOT NULL DEFAULT '[]',
    directive_id  bigint REFERENCES directives (id) ON DELETE SET NULL,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, login)
);

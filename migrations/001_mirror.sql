-- The mirror of Gitea: projects, deliveries, issues and pull requests,
-- labels, milestones, dependencies, tracked time, comments, timelines and
-- per-project sync state.

CREATE TABLE projects (
    id             bigserial PRIMARY KEY,
    owner          text NOT NULL,
    name           text NOT NULL,
    -- change_counter moves with every change to the project's mirror; the
    -- recompute job compares it before and after a run so that a change
    -- merged into a running job is never lost.
    change_counter bigint NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner, name)
);

CREATE TABLE deliveries (
    id          text PRIMARY KEY,
    project_id  bigint REFERENCES projects (id) ON DELETE CASCADE,
    event       text NOT NULL,
    action      text NOT NULL DEFAULT '',
    repo        text NOT NULL DEFAULT '',
    ignored     text NOT NULL DEFAULT '',
    received_at timestamptz NOT NULL DEFAULT now(),
    payload     bytea NOT NULL
);
CREATE INDEX deliveries_project_received ON deliveries (project_id, received_at);

CREATE TABLE issues (
    project_id       bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    number           bigint NOT NULL,
    gitea_id         bigint NOT NULL DEFAULT 0,
    is_pull          boolean NOT NULL DEFAULT false,
    title            text NOT NULL DEFAULT '',
    body             text NOT NULL DEFAULT '',
    state            text NOT NULL DEFAULT 'open',
    labels           text[] NOT NULL DEFAULT '{}',
    milestone_id     bigint,
    assignees        text[] NOT NULL DEFAULT '{}',
    author           text NOT NULL DEFAULT '',
    ref              text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    closed_at        timestamptz,
    due_date         timestamptz,
    merged           boolean NOT NULL DEFAULT false,
    closing_refs     bigint[] NOT NULL DEFAULT '{}',
    last_activity_at timestamptz NOT NULL,
    -- last_delivery names the delivery that last changed the row, so a
    -- lifecycle transition can say which event caused it.
    last_delivery    text NOT NULL DEFAULT '',
    search           tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', coalesce(title, '')), 'A') ||
        setweight(to_tsvector('english', coalesce(body, '')), 'B')) STORED,
    PRIMARY KEY (project_id, number)
);
CREATE INDEX issues_search ON issues USING gin (search);
CREATE INDEX issues_project_updated ON issues (project_id, updated_at);

CREATE TABLE labels (
    project_id  bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id          bigint NOT NULL,
    name        text NOT NULL,
    color       text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    exclusive   boolean NOT NULL DEFAULT false,
    PRIMARY KEY (project_id, id)
);

CREATE TABLE milestones (
    project_id  bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id          bigint NOT NULL,
    title       text NOT NULL,
    description text NOT NULL DEFAULT '',
    state       text NOT NULL DEFAULT 'open',
    due_on      timestamptz,
    closed_at   timestamptz,
    updated_at  timestamptz,
    PRIMARY KEY (project_id, id)
);

CREATE TABLE dependencies (
    project_id      bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    issue           bigint NOT NULL,
    depends_on      bigint NOT NULL,
    depends_on_repo text NOT NULL DEFAULT '',
    PRIMARY KEY (project_id, issue, depends_on, depends_on_repo)
);

CREATE TABLE tracked_times (
    project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id         bigint NOT NULL,
    issue      bigint NOT NULL,
    login      text NOT NULL DEFAULT '',
    seconds    bigint NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, id)
);
CREATE INDEX tracked_times_issue ON tracked_times (project_id, issue);

CREATE TABLE comments (
    project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id         bigint NOT NULL,
    issue      bigint NOT NULL,
    author     text NOT NULL DEFAULT '',
    body       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, id)
);
CREATE INDEX comments_issue ON comments (project_id, issue, created_at);

CREATE TABLE timeline_events (
    project_id   bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id           bigint NOT NULL,
    issue        bigint NOT NULL,
    kind         text NOT NULL,
    actor        text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    label        text NOT NULL DEFAULT '',
    assignee     text NOT NULL DEFAULT '',
    removed      boolean NOT NULL DEFAULT false,
    milestone_id bigint,
    ref_issue    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, id)
);
CREATE INDEX timeline_events_issue ON timeline_events (project_id, issue, created_at);

CREATE TABLE sync_state (
    project_id       bigint PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    -- last_synced_at is the Gitea-side time the last complete reconcile or
    -- backfill started from; the next reconcile lists changes since then.
    last_synced_at   timestamptz,
    backfill_done_at timestamptz,
    -- backfill_cursor is the highest issue number whose dependencies,
    -- timeline and times were imported, so a crashed backfill resumes.
    backfill_cursor  bigint NOT NULL DEFAULT 0,
    updated_at       timestamptz NOT NULL DEFAULT now()
);

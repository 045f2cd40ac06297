-- 014: each issue's history, so the project's own backtest can see the
-- project as it was at a past date: a row is the issue's labels,
-- milestone, assignees, state and same-repository dependencies as they
-- stood from valid_from until the next row's valid_from. Backfill derives
-- the rows from the issue's Gitea timeline; after that every write to the
-- mirror (deliveries, reconciles, CommiTea's own writes) appends a row
-- when one of these fields changed.

CREATE TABLE issue_history (
    project_id   bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    number       bigint NOT NULL,
    valid_from   timestamptz NOT NULL,
    state        text NOT NULL,
    closed_at    timestamptz,
    labels       text[] NOT NULL DEFAULT '{}',
    milestone_id bigint,
    assignees    text[] NOT NULL DEFAULT '{}',
    depends_on   bigint[] NOT NULL DEFAULT '{}',
    -- source is "timeline" (derived at backfill), "delivery:ID" (a
    -- webhook), "sync" (reconcile or backfill listing) or "write" (a
    -- dependency CommiTea itself added or removed).
    source       text NOT NULL,
    PRIMARY KEY (project_id, number, valid_from)
);

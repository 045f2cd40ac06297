-- 016: each milestone's forecast over its whole life, for the milestone
-- page's history chart (p50/p80 and open scope over time against the due
-- date, as Jira's version report draws it). Snapshots are pruned to the
-- last hundred, so the history cannot be read back from them; these rows
-- are never pruned (they go with their project).
--
-- A 'live' row is what a recompute published, one per milestone and hour
-- (the forecast's plan quantum: every forecast of an hour starts from the
-- same instant), the latest of the hour kept. A 'replay' row is what the
-- live model forecast at one of the project's backtest cut-offs from the
-- project as it stood then: the milestone's life before CommiTea watched
-- it. Each backtest replaces the project's replay rows.
CREATE TABLE milestone_history (
    project_id   bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    milestone_id bigint NOT NULL,
    source       text NOT NULL CHECK (source IN ('live', 'replay')),
    at           timestamptz NOT NULL,
    -- version is the snapshot a live row came from.
    version      bigint,
    title        text NOT NULL DEFAULT '',
    due          timestamptz,
    hard         boolean NOT NULL DEFAULT false,
    -- open is the issues the forecast scheduled, done those closed then.
    open         integer NOT NULL,
    done         integer NOT NULL,
    -- The finish-date range; null when nothing was open.
    p10          timestamptz,
    p50          timestamptz,
    p80          timestamptz,
    -- p_due is the share of trials on time; null without a due date.
    p_due        double precision,
    PRIMARY KEY (project_id, milestone_id, source, at)
);

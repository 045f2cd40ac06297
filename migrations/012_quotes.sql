-- 012: the quote is what happens (scheduler/doc.go, "One planning rule").
--
-- draw_keys: the random-draw key of an issue CommiTea filed from a
-- proposal, so the issue keeps the draws it was quoted with whatever number
-- Gitea gave it. Issues without a row draw by their number.
CREATE TABLE draw_keys (
    project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    number     bigint NOT NULL,
    draw_key   bigint NOT NULL,
    PRIMARY KEY (project_id, number)
);

-- plan_holds: a write tool quoted its change on the plan of snapshot
-- snapshot_version; the next recompute that covers change_counter forecasts
-- on that plan first, even when its hour has passed, then moves on.
CREATE TABLE plan_holds (
    project_id       bigint PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    snapshot_version bigint NOT NULL,
    change_counter   bigint NOT NULL
);

-- The ledger keeps, for a directive once applied, what was quoted when it
-- was applied (predicted: [{milestone, title, before, after}]) and the
-- change counter its last write reached; the first snapshot covering that
-- counter records the band it realized (realized: [{milestone, title,
-- band}]) and its version.
ALTER TABLE directives
    ADD COLUMN predicted        jsonb,
    ADD COLUMN applied_counter  bigint,
    ADD COLUMN realized         jsonb,
    ADD COLUMN realized_version bigint,
    ADD COLUMN realized_at      timestamptz;
CREATE INDEX directives_unrealized ON directives (project_id) WHERE applied_counter IS NOT NULL AND realized IS NULL;

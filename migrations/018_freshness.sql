-- 018: how far a project's snapshot is behind its mirror, in time.
-- behind_since is when the mirror first held a change its latest snapshot
-- lacks: set by the change counter's bump that finds the latest snapshot
-- covering every earlier change. Readers bound it by the latest snapshot's
-- own time, so no recompute has to write the projects row. /readyz,
-- /metrics and query_project report the lag from it, so a monitor sees a
-- forecast that stopped following Gitea.
ALTER TABLE projects ADD COLUMN behind_since timestamptz;
UPDATE projects p SET behind_since = now()
WHERE p.change_counter > coalesce(
    (SELECT s.change_counter FROM snapshots s WHERE s.project_id = p.id ORDER BY s.version DESC LIMIT 1), -1);

-- 015: the search vector reads a bounded prefix of each issue. Postgres
-- refuses a tsvector over 1 MB, and the generated column made the whole
-- upsert fail with it: an issue body of a few MB of distinct words (which
-- Gitea accepts) was refused on every delivery and every reconcile, so the
-- issue never reached the mirror. The text itself is stored as it is; only
-- search looks at the first 1,000 characters of the title and the first
-- 100,000 of the body (at most a few hundred KB of vector).
ALTER TABLE issues DROP COLUMN search;
ALTER TABLE issues ADD COLUMN search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', left(coalesce(title, ''), 1000)), 'A') ||
    setweight(to_tsvector('english', left(coalesce(body, ''), 100000)), 'B')) STORED;
CREATE INDEX issues_search ON issues USING gin (search);

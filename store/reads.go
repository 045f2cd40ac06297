package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Narrow reads for the read tools: each loads only what one answer needs,
// so a request never pays for the whole mirror.

// Versions says how far a project's mirror and snapshot have moved: the
// mirror's change counter and the latest snapshot's version (0 when none).
// Readers that cache derived data compare both in one round trip.
type Versions struct {
	ChangeCounter   int64
	SnapshotVersion int64
	// Backfilled is whether the project's first backfill completed: before
	// it the mirror, and any snapshot of it, is partial.
	Backfilled bool
	// Rescued is whether the latest snapshot's rescue options are stored:
	// they come after the snapshot (store.PutRescue).
	Rescued bool
}

// ProjectVersions reads a project's Versions.
func ProjectVersions(ctx context.Context, q DBTX, projectID int64) (Versions, error) {
	var v Versions
	err := q.QueryRow(ctx, `SELECT p.change_counter, coalesce(s.version, 0), coalesce(s.rescued, false),
		EXISTS (SELECT 1 FROM sync_state y WHERE y.project_id = p.id AND y.backfill_done_at IS NOT NULL)
		FROM projects p LEFT JOIN LATERAL (SELECT version, rescue IS NOT NULL AS rescued FROM snapshots
			WHERE project_id = p.id ORDER BY version DESC LIMIT 1) s ON true
		WHERE p.id = $1`, projectID).Scan(&v.ChangeCounter, &v.SnapshotVersion, &v.Rescued, &v.Backfilled)
	if noRows(err) {
		return Versions{}, fmt.Errorf("versions of project %d: %w", projectID, ErrNotFound)
	}
	if err != nil {
		return Versions{}, fmt.Errorf("versions of project %d: %w", projectID, err)
	}
	return v, nil
}

// IssueHead is the part of an issue that lists show: no body.
type IssueHead struct {
	Number    int64
	IsPull    bool
	Title     string
	State     string
	Labels    []string
	Milestone *int64
	Assignees []string
	UpdatedAt time.Time
	ClosedAt  *time.Time
}

// IssueHeads loads the heads of a project's issues and pull requests, by
// number.
func IssueHeads(ctx context.Context, q DBTX, projectID int64) ([]IssueHead, error) {
	out, err := collect(ctx, q, `SELECT number, is_pull, title, state, labels, milestone_id, assignees, updated_at, closed_at
		FROM issues WHERE project_id = $1 ORDER BY number`, projectID, func(r pgx.Rows) (IssueHead, error) {
		var h IssueHead
		err := r.Scan(&h.Number, &h.IsPull, &h.Title, &h.State, &h.Labels, &h.Milestone, &h.Assignees, &h.UpdatedAt, &h.ClosedAt)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("issue heads of project %d: %w", projectID, err)
	}
	return out, nil
}

// Milestones loads a project's milestones, by id.
func Milestones(ctx context.Context, q DBTX, projectID int64) ([]Milestone, error) {
	out, err := collect(ctx, q, `SELECT id, title, description, state, due_on, closed_at, updated_at
		FROM milestones WHERE project_id = $1 ORDER BY id`, projectID, func(r pgx.Rows) (Milestone, error) {
		var x Milestone
		err := r.Scan(&x.ID, &x.Title, &x.Description, &x.State, &x.DueOn, &x.ClosedAt, &x.UpdatedAt)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("milestones of project %d: %w", projectID, err)
	}
	return out, nil
}

// LatestComments returns an issue's newest comments, newest first, with the
// issue's total number of comments.
func LatestComments(ctx context.Context, q DBTX, projectID, issue int64, limit int) ([]Comment, int, error) {
	out, err := collectArgs(ctx, q, `SELECT id, issue, author, body, created_at, updated_at FROM comments
		WHERE project_id = $1 AND issue = $2 ORDER BY created_at DESC, id DESC LIMIT $3`, func(r pgx.Rows) (Comment, error) {
		var c Comment
		err := r.Scan(&c.ID, &c.Issue, &c.Author, &c.Body, &c.CreatedAt, &c.UpdatedAt)
		return c, err
	}, projectID, issue, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("comments of issue %d: %w", issue, err)
	}
	var total int
	if err := q.QueryRow(ctx, `SELECT count(*) FROM comments WHERE project_id = $1 AND issue = $2`, projectID, issue).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count comments of issue %d: %w", issue, err)
	}
	return out, total, nil
}

// IssueDependencies returns what an issue depends on and the issues of the
// same repository that depend on it.
func IssueDependencies(ctx context.Context, q DBTX, projectID, issue int64) (dependsOn []Dependency, blocks []int64, err error) {
	dependsOn, err = collectArgs(ctx, q, `SELECT issue, depends_on, depends_on_repo FROM dependencies
		WHERE project_id = $1 AND issue = $2 ORDER BY depends_on_repo, depends_on`, func(r pgx.Rows) (Dependency, error) {
		var d Dependency
		err := r.Scan(&d.Issue, &d.DependsOn, &d.DependsOnRepo)
		return d, err
	}, projectID, issue)
	if err != nil {
		return nil, nil, fmt.Errorf("dependencies of issue %d: %w", issue, err)
	}
	blocks, err = collectArgs(ctx, q, `SELECT issue FROM dependencies
		WHERE project_id = $1 AND depends_on = $2 AND depends_on_repo = '' ORDER BY issue`, func(r pgx.Rows) (int64, error) {
		var n int64
		err := r.Scan(&n)
		return n, err
	}, projectID, issue)
	if err != nil {
		return nil, nil, fmt.Errorf("dependents of issue %d: %w", issue, err)
	}
	return dependsOn, blocks, nil
}

// IssueTransitions returns one issue's lifecycle transitions in order.
func IssueTransitions(ctx context.Context, q DBTX, projectID, issue int64) ([]Transition, error) {
	out, err := collectArgs(ctx, q, `SELECT issue, from_state, to_state, at, cause FROM transitions
		WHERE project_id = $1 AND issue = $2 ORDER BY at, id`, func(r pgx.Rows) (Transition, error) {
		var t Transition
		err := r.Scan(&t.Issue, &t.From, &t.To, &t.At, &t.Cause)
		return t, err
	}, projectID, issue)
	if err != nil {
		return nil, fmt.Errorf("transitions of issue %d: %w", issue, err)
	}
	return out, nil
}

// SearchQuery is a full-text search over a project's issue titles and
// bodies. Empty filters match everything; Numbers, when not nil, restricts
// the search to those issues.
type SearchQuery struct {
	Text     string
	Assignee string
	Label    string // matched case-insensitively
	Numbers  []int64
	Limit    int
}

// SearchHit is one issue matching a search, best first.
type SearchHit struct {
	Number  int64
	IsPull  bool
	Title   string
	State   string
	Rank    float64
	Snippet string
}

// SearchIssues runs a web-search-style query (quoted phrases, OR, -word)
// against the issues' tsvector and returns the best hits and how many match,
// in one statement; snippets are cut only for the hits returned.
func SearchIssues(ctx context.Context, q DBTX, projectID int64, s SearchQuery) ([]SearchHit, int, error) {
	var numbers any
	if s.Numbers != nil {
		numbers = s.Numbers
	}
	var total int
	hits, err := collectArgs(ctx, q, `WITH query AS (SELECT websearch_to_tsquery('english', $2) AS q),
	hits AS (
		SELECT i.number, i.is_pull, i.title, i.state, i.body, ts_rank(i.search, query.q) AS rank, count(*) OVER () AS total
		FROM issues i, query
		WHERE i.project_id = $1 AND i.search @@ query.q
		AND ($3 = '' OR EXISTS (SELECT 1 FROM unnest(i.assignees) a WHERE lower(a) = lower($3)))
		AND ($4 = '' OR EXISTS (SELECT 1 FROM unnest(i.labels) l WHERE lower(l) = lower($4)))
		AND ($5::bigint[] IS NULL OR i.number = ANY($5))
		ORDER BY rank DESC, i.number LIMIT $6)
	SELECT number, is_pull, title, state, rank,
		ts_headline('english', body, query.q, 'MaxWords=20, MinWords=8, MaxFragments=1'), total
	FROM hits, query ORDER BY rank DESC, number`, func(r pgx.Rows) (SearchHit, error) {
		var h SearchHit
		var rank float32
		err := r.Scan(&h.Number, &h.IsPull, &h.Title, &h.State, &rank, &h.Snippet, &total)
		h.Rank = float64(rank)
		return h, err
	}, projectID, s.Text, s.Assignee, s.Label, numbers, s.Limit)
	if err != nil {
		return nil, 0, fmt.Errorf("search project %d: %w", projectID, err)
	}
	return hits, total, nil
}

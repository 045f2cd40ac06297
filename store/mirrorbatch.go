package store

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// MirrorBatch queues mirror writes and sends them as a handful of
// multi-row statements in one round trip. The webhook ingester writes a
// whole group commit through one batch: a statement per row (an issue
// upsert, its history row, each label and milestone of every delivery) cost
// a hundred statements for a batch of twenty deliveries, and their
// per-statement work (bind, executor start-up, one pgx encode each) was
// most of the database's share of a delivery. Now a batch is a few
// statements whatever its size.
//
// The writes to one issue apply in the order they were queued, as they
// would one statement each: they are split into passes, each issue taking
// part in a pass with at most one write of each kind (deletion, upsert,
// comment, comment deletion, activity, in that order), and a pass's rows
// go in by ascending issue number. Row locks are therefore taken in one
// stable order, issue rows first, then labels and milestones by id (each
// once, already deduplicated by the caller), which the reconcile follows
// too; see worker.queueChanges.
type MirrorBatch struct {
	projectID  int64
	ops        []issueOp
	labels     []Label
	milestones []Milestone
}

// opKind orders the writes to one issue inside a pass.
type opKind int

const (
	opDeleteIssue opKind = iota
	opUpsert
	opComment
	opDeleteComment
	opTouch
)

type issueOp struct {
	kind     opKind
	number   int64
	write    IssueWrite
	comment  Comment
	id       int64 // the comment deleted
	at       time.Time
	delivery string
}

// NewMirrorBatch starts a batch of writes to one project's mirror.
func NewMirrorBatch(projectID int64) *MirrorBatch { return &MirrorBatch{projectID: projectID} }

// Len is the number of statements Run sends.
func (m *MirrorBatch) Len() int { return m.build().Len() }

// Issue queues an issue upsert (newest updated_at wins) and the version it
// makes.
func (m *MirrorBatch) Issue(w IssueWrite) {
	m.ops = append(m.ops, issueOp{kind: opUpsert, number: w.Issue.Number, write: w})
}

// DeleteIssue queues the removal of an issue and what hangs off it.
func (m *MirrorBatch) DeleteIssue(number int64) {
	m.ops = append(m.ops, issueOp{kind: opDeleteIssue, number: number})
}

// Label queues a label upsert. Every delivery carries its issue's labels,
// so nearly every upsert repeats the stored row; an upsert that conflicts
// locks the row until commit even when it changes nothing, which would
// make every concurrent group commit queue on the few shared label rows.
// A row is therefore written only when it differs (a plain read first).
func (m *MirrorBatch) Label(l Label) { m.labels = append(m.labels, l) }

// Milestone queues a milestone upsert from a delivery's copy of it,
// written only when it differs (see Label) and only over an older copy.
// Gitea sends no webhook for a milestone edit: the copy rides on an issue
// event and was rendered when that event happened, so a delivery that
// arrives after an edit written through (set_deadline_hard) or reconciled
// would otherwise put the milestone back as it was. A copy replaces the
// row only when its updated_at is later, or when either lacks one.
func (m *MirrorBatch) Milestone(x Milestone) { m.milestones = append(m.milestones, x) }

// Comment queues a comment upsert.
func (m *MirrorBatch) Comment(c Comment) {
	m.ops = append(m.ops, issueOp{kind: opComment, number: c.Issue, comment: c})
}

// DeleteComment queues the removal of comment id on issue.
func (m *MirrorBatch) DeleteComment(issue, id int64) {
	m.ops = append(m.ops, issueOp{kind: opDeleteComment, number: issue, id: id})
}

// Touch queues a sign of activity on an issue.
func (m *MirrorBatch) Touch(number int64, at time.Time, delivery string) {
	m.ops = append(m.ops, issueOp{kind: opTouch, number: number, at: at, delivery: delivery})
}

// Run sends the queued writes.
func (m *MirrorBatch) Run(ctx context.Context, q DBTX) error {
	b := m.build()
	if b.Len() == 0 {
		return nil
	}
	return runBatch(ctx, q, b, "write mirror batch")
}

// passes splits the queued issue writes into passes (see MirrorBatch),
// each sorted by issue number, queue order kept among equals.
func (m *MirrorBatch) passes() [][]issueOp {
	type state struct {
		pass int
		last opKind
	}
	seen := map[int64]state{}
	var out [][]issueOp
	for _, op := range m.ops {
		s, ok := seen[op.number]
		switch {
		case !ok:
			s = state{pass: 0, last: op.kind}
		case op.kind <= s.last:
			s = state{pass: s.pass + 1, last: op.kind}
		default:
			s.last = op.kind
		}
		seen[op.number] = s
		for len(out) <= s.pass {
			out = append(out, nil)
		}
		out[s.pass] = append(out[s.pass], op)
	}
	for _, p := range out {
		slices.SortStableFunc(p, func(a, b issueOp) int { return cmp.Compare(a.number, b.number) })
	}
	return out
}

func (m *MirrorBatch) build() *pgx.Batch {
	b := &pgx.Batch{}
	for _, pass := range m.passes() {
		var deleted, commentsGone []int64
		var upserts []IssueWrite
		var comments []Comment
		var touches []issueOp
		for _, op := range pass {
			switch op.kind {
			case opDeleteIssue:
				deleted = append(deleted, op.number)
			case opUpsert:
				upserts = append(upserts, op.write)
			case opComment:
				comments = append(comments, op.comment)
			case opDeleteComment:
				commentsGone = append(commentsGone, op.id)
			case opTouch:
				touches = append(touches, op)
			}
		}
		if len(deleted) > 0 {
			queueDeleteIssues(b, m.projectID, deleted)
		}
		if len(upserts) > 0 {
			queueIssueUpserts(b, m.projectID, upserts)
		}
		if len(comments) > 0 {
			queueComments(b, m.projectID, comments)
		}
		if len(commentsGone) > 0 {
			b.Queue(`DELETE FROM comments WHERE project_id = $1 AND id = ANY($2)`, m.projectID, commentsGone)
		}
		if len(touches) > 0 {
			queueTouches(b, m.projectID, touches)
		}
	}
	if len(m.labels) > 0 {
		queueLabels(b, m.projectID, m.labels)
	}
	if len(m.milestones) > 0 {
		queueMilestoneCopies(b, m.projectID, m.milestones)
	}
	return b
}

func queueDeleteIssues(b *pgx.Batch, projectID int64, numbers []int64) {
	b.Queue(`DELETE FROM issues WHERE project_id = $1 AND number = ANY($2)`, projectID, numbers)
	b.Queue(`DELETE FROM dependencies WHERE project_id = $1 AND (issue = ANY($2) OR (depends_on = ANY($2) AND depends_on_repo = ''))`, projectID, numbers)
	b.Queue(`DELETE FROM comments WHERE project_id = $1 AND issue = ANY($2)`, projectID, numbers)
	b.Queue(`DELETE FROM tracked_times WHERE project_id = $1 AND issue = ANY($2)`, projectID, numbers)
	b.Queue(`DELETE FROM timeline_events WHERE project_id = $1 AND issue = ANY($2)`, projectID, numbers)
	b.Queue(`DELETE FROM issue_history WHERE project_id = $1 AND number = ANY($2)`, projectID, numbers)
}

// upsertIssuesSQL is upsertIssueSQL for many issues at once, each at most
// once, in the order given. Array columns travel as array literals (one
// text each), since unnest cannot take an array of arrays.
const upsertIssuesSQL = `
INSERT INTO issues (project_id, number, gitea_id, is_pull, title, body, state, labels, milestone_id,
	assignees, author, ref, created_at, updated_at, closed_at, due_date, merged, closing_refs,
	last_activity_at, last_delivery, delivered)
SELECT $1, u.number, u.gitea_id, u.is_pull, u.title, u.body, u.state, u.labels::text[], u.milestone_id,
	u.assignees::text[], u.author, u.ref, u.created_at, u.updated_at, u.closed_at, u.due_date, u.merged, u.closing_refs::bigint[],
	u.last_activity_at, u.last_delivery, u.last_delivery <> ''
FROM unnest($2::bigint[], $3::bigint[], $4::boolean[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[],
	$10::text[], $11::text[], $12::text[], $13::timestamptz[], $14::timestamptz[], $15::timestamptz[], $16::timestamptz[],
	$17::boolean[], $18::text[], $19::timestamptz[], $20::text[]) WITH ORDINALITY
	AS u(number, gitea_id, is_pull, title, body, state, labels, milestone_id, assignees, author, ref, created_at, updated_at,
	closed_at, due_date, merged, closing_refs, last_activity_at, last_delivery, ord)
ORDER BY u.ord
` + issueUpsertConflictSQL

// recordVersionsSQL is recordVersionSQL for many issues at once (each at
// most once), every version starting at its issue's updated_at.
const recordVersionsSQL = `
INSERT INTO issue_history (project_id, number, valid_from, state, closed_at, labels, milestone_id, assignees, depends_on, source)
SELECT i.project_id, i.number, GREATEST(i.updated_at, COALESCE(l.valid_from, '-infinity')),
	i.state, i.closed_at, i.labels, i.milestone_id, i.assignees, d.deps, u.source
FROM unnest($2::bigint[], $3::text[]) WITH ORDINALITY AS u(number, source, ord)
JOIN issues i ON i.project_id = $1 AND i.number = u.number
CROSS JOIN LATERAL (SELECT COALESCE(array_agg(depends_on ORDER BY depends_on), '{}') AS deps FROM dependencies
	WHERE project_id = i.project_id AND issue = i.number AND depends_on_repo = '') d
LEFT JOIN LATERAL (SELECT * FROM issue_history h WHERE h.project_id = i.project_id AND h.number = i.number
	ORDER BY h.valid_from DESC LIMIT 1) l ON true
WHERE l.number IS NULL OR l.state <> i.state OR l.closed_at IS DISTINCT FROM i.closed_at
	OR NOT (l.labels @> i.labels AND l.labels <@ i.labels) OR l.milestone_id IS DISTINCT FROM i.milestone_id
	OR NOT (l.assignees @> i.assignees AND l.assignees <@ i.assignees) OR l.depends_on <> d.deps
ORDER BY u.ord
ON CONFLICT (project_id, number, valid_from) DO UPDATE SET state = EXCLUDED.state, closed_at = EXCLUDED.closed_at,
	labels = EXCLUDED.labels, milestone_id = EXCLUDED.milestone_id, assignees = EXCLUDED.assignees,
	depends_on = EXCLUDED.depends_on, source = EXCLUDED.source`

// queueIssueUpserts queues one statement upserting ws (distinct numbers)
// and one recording the versions they make.
func queueIssueUpserts(b *pgx.Batch, projectID int64, ws []IssueWrite) {
	n := len(ws)
	numbers, giteaIDs, milestones := make([]int64, n), make([]int64, n), make([]*int64, n)
	pulls, merged := make([]bool, n), make([]bool, n)
	titles, bodies, states, labels, assignees := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	authors, refs, closing, deliveries, sources := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	created, updated, activity := make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
	closed, due := make([]*time.Time, n), make([]*time.Time, n)
	for k, w := range ws {
		i := w.Issue
		numbers[k], giteaIDs[k], milestones[k], pulls[k], merged[k] = i.Number, i.GiteaID, i.Milestone, i.IsPull, i.Merged
		titles[k], bodies[k], states[k] = cleanText(i.Title), cleanText(i.Body), cleanText(i.State)
		labels[k], assignees[k], closing[k] = textArrayLiteral(cleanTexts(i.Labels)), textArrayLiteral(cleanTexts(i.Assignees)), int8ArrayLiteral(i.ClosingRefs)
		authors[k], refs[k], deliveries[k], sources[k] = cleanText(i.Author), cleanText(i.Ref), cleanText(w.Delivery), cleanText(versionSource(w.Delivery))
		created[k], updated[k], closed[k], due[k] = i.CreatedAt, i.UpdatedAt, i.ClosedAt, i.DueDate
		activity[k] = i.LastActivityAt
		if activity[k].IsZero() {
			activity[k] = i.UpdatedAt
		}
	}
	b.Queue(upsertIssuesSQL, projectID, numbers, giteaIDs, pulls, titles, bodies, states, labels, milestones,
		assignees, authors, refs, created, updated, closed, due, merged, closing, activity, deliveries)
	b.Queue(recordVersionsSQL, projectID, numbers, sources)
}

func queueComments(b *pgx.Batch, projectID int64, cs []Comment) {
	n := len(cs)
	ids, issues := make([]int64, n), make([]int64, n)
	authors, bodies := make([]string, n), make([]string, n)
	created, updated := make([]time.Time, n), make([]time.Time, n)
	for k, c := range cs {
		ids[k], issues[k], authors[k], bodies[k], created[k], updated[k] = c.ID, c.Issue, cleanText(c.Author), cleanText(c.Body), c.CreatedAt, c.UpdatedAt
	}
	b.Queue(`INSERT INTO comments (project_id, id, issue, author, body, created_at, updated_at)
		SELECT $1, u.id, u.issue, u.author, u.body, u.created_at, u.updated_at
		FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[]) WITH ORDINALITY
			AS u(id, issue, author, body, created_at, updated_at, ord)
		ORDER BY u.ord
		ON CONFLICT (project_id, id) DO UPDATE SET body = EXCLUDED.body, updated_at = EXCLUDED.updated_at`,
		projectID, ids, issues, authors, bodies, created, updated)
}

func queueTouches(b *pgx.Batch, projectID int64, ts []issueOp) {
	n := len(ts)
	numbers, ats, deliveries := make([]int64, n), make([]time.Time, n), make([]string, n)
	for k, t := range ts {
		numbers[k], ats[k], deliveries[k] = t.number, t.at, cleanText(t.delivery)
	}
	b.Queue(`UPDATE issues SET last_activity_at = GREATEST(issues.last_activity_at, u.at),
		last_delivery = CASE WHEN u.delivery = '' THEN issues.last_delivery ELSE u.delivery END
		FROM unnest($2::bigint[], $3::timestamptz[], $4::text[]) AS u(number, at, delivery)
		WHERE issues.project_id = $1 AND issues.number = u.number`, projectID, numbers, ats, deliveries)
}

// queueLabels writes the labels (distinct ids) that differ from the stored
// rows, by ascending id.
func queueLabels(b *pgx.Batch, projectID int64, ls []Label) {
	ls = slices.Clone(ls)
	slices.SortStableFunc(ls, func(a, b Label) int { return cmp.Compare(a.ID, b.ID) })
	n := len(ls)
	ids, names, colors, descs, excl := make([]int64, n), make([]string, n), make([]string, n), make([]string, n), make([]bool, n)
	for k, l := range ls {
		ids[k], names[k], colors[k], descs[k], excl[k] = l.ID, cleanText(l.Name), cleanText(l.Color), cleanText(l.Description), l.Exclusive
	}
	b.Queue(`INSERT INTO labels (project_id, id, name, color, description, exclusive)
		SELECT $1, u.id, u.name, u.color, u.description, u.exclusive
		FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::boolean[]) AS u(id, name, color, description, exclusive)
		WHERE NOT EXISTS (SELECT 1 FROM labels l WHERE l.project_id = $1 AND l.id = u.id AND l.name = u.name
			AND l.color = u.color AND l.description = u.description AND l.exclusive = u.exclusive)
		ORDER BY u.id
		ON CONFLICT (project_id, id) DO UPDATE SET name = EXCLUDED.name, color = EXCLUDED.color,
		description = EXCLUDED.description, exclusive = EXCLUDED.exclusive`,
		projectID, ids, names, colors, descs, excl)
}

// queueMilestoneCopies writes delivered milestone copies (distinct ids) by
// ascending id, each only when it differs and is newer (see Milestone).
func queueMilestoneCopies(b *pgx.Batch, projectID int64, ms []Milestone) {
	ms = slices.Clone(ms)
	slices.SortStableFunc(ms, func(a, b Milestone) int { return cmp.Compare(a.ID, b.ID) })
	n := len(ms)
	ids, titles, descs, states := make([]int64, n), make([]string, n), make([]string, n), make([]string, n)
	due, closed, updated := make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
	for k, x := range ms {
		ids[k], titles[k], descs[k], states[k] = x.ID, cleanText(x.Title), cleanText(x.Description), cleanText(x.State)
		due[k], closed[k], updated[k] = x.DueOn, x.ClosedAt, x.UpdatedAt
	}
	b.Queue(`INSERT INTO milestones (project_id, id, title, description, state, due_on, closed_at, updated_at)
		SELECT $1, u.id, u.title, u.description, u.state, u.due_on, u.closed_at, u.updated_at
		FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::timestamptz[])
			AS u(id, title, description, state, due_on, closed_at, updated_at)
		WHERE NOT EXISTS (SELECT 1 FROM milestones m WHERE m.project_id = $1 AND m.id = u.id AND (m.title = u.title
			AND m.description = u.description AND m.state = u.state AND m.due_on IS NOT DISTINCT FROM u.due_on
			AND m.closed_at IS NOT DISTINCT FROM u.closed_at AND m.updated_at IS NOT DISTINCT FROM u.updated_at
			OR m.updated_at IS NOT NULL AND u.updated_at IS NOT NULL AND m.updated_at >= u.updated_at))
		ORDER BY u.id
		ON CONFLICT (project_id, id) DO UPDATE SET title = EXCLUDED.title, description = EXCLUDED.description,
		state = EXCLUDED.state, due_on = EXCLUDED.due_on, closed_at = EXCLUDED.closed_at, updated_at = EXCLUDED.updated_at
		WHERE milestones.updated_at IS NULL OR EXCLUDED.updated_at IS NULL OR EXCLUDED.updated_at > milestones.updated_at`,
		projectID, ids, titles, descs, states, due, closed, updated)
}

// textArrayLiteral writes ss as a Postgres text[] literal, every element
// quoted (so none reads as NULL) with quotes and backslashes escaped.
func textArrayLiteral(ss []string) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for k, s := range ss {
		if k > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('"')
		for i := 0; i < len(s); i++ {
			if s[i] == '"' || s[i] == '\\' {
				sb.WriteByte('\\')
			}
			sb.WriteByte(s[i])
		}
		sb.WriteByte('"')
	}
	sb.WriteByte('}')
	return sb.String()
}

// int8ArrayLiteral writes ns as a Postgres bigint[] literal.
func int8ArrayLiteral(ns []int64) string {
	b := []byte{'{'}
	for k, n := range ns {
		if k > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return string(append(b, '}'))
}

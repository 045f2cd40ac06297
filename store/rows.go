package store

import "time"

// Project is one Gitea repository served by this instance.
type Project struct {
	ID    int64
	Owner string
	Name  string
}

// FullName is the project's "owner/repo" form, the way users and Gitea name it.
func (p Project) FullName() string { return p.Owner + "/" + p.Name }

// Issue mirrors one Gitea issue or pull request. Webhook ingest, backfill and
// reconcile all produce this shape, so the three converge on the same rows.
type Issue struct {
	Number    int64 // per-repository index (#N)
	GiteaID   int64 // instance-wide id
	IsPull    bool
	Title     string
	Body      string
	State     string   // "open" or "closed"
	Labels    []string // label names as Gitea spells them
	Milestone *int64   // Gitea milestone id, nil when none
	Assignees []string // logins, sorted
	Author    string
	// Ref is the issue's branch reference ("ref" in Gitea); for a pull
	// request it holds the head branch.
	Ref       string
	CreatedAt time.Time
	UpdatedAt time.Time
	ClosedAt  *time.Time
	DueDate   *time.Time
	// Merged is set for pull requests closed by merging.
	Merged bool
	// ClosingRefs are the issue numbers a pull request closes through a
	// keyword (fixes #N, closes #N, resolves #N) in its title or body.
	ClosingRefs []int64
	// LastActivityAt is the latest sign of life: an update or a comment.
	LastActivityAt time.Time
}

// Label mirrors a repository label.
type Label struct {
	ID          int64
	Name        string
	Color       string
	Description string
	Exclusive   bool
}

// Milestone mirrors a repository milestone.
type Milestone struct {
	ID          int64
	Title       string
	Description string
	State       string // "open" or "closed"
	DueOn       *time.Time
	ClosedAt    *time.Time
	UpdatedAt   *time.Time
}

// Dependency says issue Number cannot finish before DependsOn finishes.
// Both are issue numbers in the same project; a dependency on another
// repository's issue keeps that repository in DependsOnRepo ("owner/repo").
type Dependency struct {
	Issue         int64
	DependsOn     int64
	DependsOnRepo string // empty for the same repository
}

// TrackedTime is one entry of time tracked against an issue.
type TrackedTime struct {
	ID      int64
	Issue   int64
	User    string
	Seconds int64
	Created time.Time
}

// Comment is a comment on an issue or pull request; comments count as
// activity and the latest ones are shown by the issue view.
type Comment struct {
	ID        int64
	Issue     int64
	Author    string
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TimelineEvent is one entry of an issue's timeline, kept so lifecycle
// transitions can be rebuilt after a backfill. Kind is Gitea's comment type
// name ("label", "assignees", "close", "reopen", "milestone", "comment",
// "pull_ref", "add_dependency", ...). Data holds the fields that matter for
// the kind (label name, assignee, added or removed).
type TimelineEvent struct {
	ID        int64
	Issue     int64
	Kind      string
	Actor     string
	CreatedAt time.Time
	Label     string // for label events
	Assignee  string // for assignee events
	Removed   bool   // label or assignee removed rather than added
	Milestone *int64 // for milestone events: the new milestone id
	RefIssue  int64  // for pull_ref/dependency events: the other issue
}

package gitea

import (
	"strconv"
	"strings"
	"time"
)

// User is the part of a Gitea user CommiTea reads.
type User struct {
	ID       int64  `json:"id"`
	Login    string `json:"login"`
	FullName string `json:"full_name"`
	Email    string `json:"email"`
}

// Label is a repository label as the API and webhooks render it.
type Label struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Exclusive   bool   `json:"exclusive"`
	IsArchived  bool   `json:"is_archived"`
	Color       string `json:"color"`
	Description string `json:"description"`
	URL         string `json:"url"`
}

// Milestone is a repository milestone.
type Milestone struct {
	ID           int64      `json:"id"`
	Title        string     `json:"title"`
	Description  string     `json:"description"`
	State        string     `json:"state"`
	OpenIssues   int        `json:"open_issues"`
	ClosedIssues int        `json:"closed_issues"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    *time.Time `json:"updated_at"`
	ClosedAt     *time.Time `json:"closed_at"`
	DueOn        *time.Time `json:"due_on"`
}

// RepositoryMeta is the short repository reference embedded in an issue.
type RepositoryMeta struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Owner    string `json:"owner"`
	FullName string `json:"full_name"`
}

// Repository is the full repository object of webhook envelopes and
// pull request branches. Owner is a user object there, unlike RepositoryMeta.
type Repository struct {
	ID            int64  `json:"id"`
	Owner         *User  `json:"owner"`
	Name          string `json:"name"`
	FullName      string `json:"full_name"`
	HTMLURL       string `json:"html_url"`
	DefaultBranch string `json:"default_branch"`
	Private       bool   `json:"private"`
}

// PullRequestMeta marks an issue that is a pull request; the issues API and
// issue_comment payloads carry it instead of the full pull request. Draft
// and HTMLURL are filled from webhooks only: the SDK, which the client reads
// issues through, does not decode them (ListPulls has Draft).
type PullRequestMeta struct {
	Merged   bool       `json:"merged"`
	MergedAt *time.Time `json:"merged_at"`
	Draft    bool       `json:"draft"`
	HTMLURL  string     `json:"html_url"`
}

// Issue is an issue (or a pull request seen through the issues API).
type Issue struct {
	ID          int64            `json:"id"`
	URL         string           `json:"url"`
	HTMLURL     string           `json:"html_url"`
	Number      int64            `json:"number"`
	User        *User            `json:"user"`
	Title       string           `json:"title"`
	Body        string           `json:"body"`
	Ref         string           `json:"ref"`
	Labels      []Label          `json:"labels"`
	Milestone   *Milestone       `json:"milestone"`
	Assignee    *User            `json:"assignee"` // webhooks only; the SDK drops it (Assignees has it too)
	Assignees   []User           `json:"assignees"`
	State       string           `json:"state"`
	IsLocked    bool             `json:"is_locked"`
	Comments    int              `json:"comments"`
	CreatedAt   time.Time        `json:"created_at"`
	UpdatedAt   time.Time        `json:"updated_at"`
	ClosedAt    *time.Time       `json:"closed_at"`
	DueDate     *time.Time       `json:"due_date"`
	PullRequest *PullRequestMeta `json:"pull_request"`
	Repository  *RepositoryMeta  `json:"repository"`
}

// IsPull reports whether the issue is a pull request.
func (i Issue) IsPull() bool { return i.PullRequest != nil }

// PRBranch is one side (head or base) of a pull request.
type PRBranch struct {
	Label  string      `json:"label"`
	Ref    string      `json:"ref"`
	Sha    string      `json:"sha"`
	RepoID int64       `json:"repo_id"`
	Repo   *Repository `json:"repo"`
}

// PullRequest is a pull request as the pulls API and pull_request webhooks
// render it.
type PullRequest struct {
	ID                 int64      `json:"id"`
	URL                string     `json:"url"`
	Number             int64      `json:"number"`
	User               *User      `json:"user"`
	Title              string     `json:"title"`
	Body               string     `json:"body"`
	Labels             []Label    `json:"labels"`
	Milestone          *Milestone `json:"milestone"`
	Assignee           *User      `json:"assignee"`
	Assignees          []User     `json:"assignees"`
	RequestedReviewers []User     `json:"requested_reviewers"`
	State              string     `json:"state"`
	Draft              bool       `json:"draft"`
	IsLocked           bool       `json:"is_locked"`
	Comments           int        `json:"comments"`
	HTMLURL            string     `json:"html_url"`
	Mergeable          bool       `json:"mergeable"`
	Merged             bool       `json:"merged"`
	MergedAt           *time.Time `json:"merged_at"`
	MergeCommitSha     string     `json:"merge_commit_sha"`
	MergedBy           *User      `json:"merged_by"`
	Base               *PRBranch  `json:"base"`
	Head               *PRBranch  `json:"head"`
	DueDate            *time.Time `json:"due_date"`
	CreatedAt          time.Time  `json:"created_at"`
	UpdatedAt          time.Time  `json:"updated_at"`
	ClosedAt           *time.Time `json:"closed_at"`
}

// HeadBranch is the pull request's source branch name. After the branch is
// deleted Gitea reports the head ref as "refs/pull/N/head" and keeps the
// branch name only in the head label ("branch", or "owner:branch" for a fork).
func (p PullRequest) HeadBranch() string {
	if p.Head == nil {
		return ""
	}
	ref := strings.TrimPrefix(p.Head.Ref, "refs/heads/")
	if strings.HasPrefix(ref, "refs/pull/") || ref == "" {
		label := p.Head.Label
		if i := strings.LastIndexByte(label, ':'); i >= 0 {
			label = label[i+1:]
		}
		if label != "" {
			return label
		}
	}
	return ref
}

// Comment is an issue or pull request comment.
type Comment struct {
	ID             int64     `json:"id"`
	HTMLURL        string    `json:"html_url"`
	PullRequestURL string    `json:"pull_request_url"`
	IssueURL       string    `json:"issue_url"`
	User           *User     `json:"user"`
	Body           string    `json:"body"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// IssueNumber is the number of the issue or pull request the comment belongs
// to. The comment object carries no number field, only the page URL of its
// issue (…/issues/N) or pull request (…/pulls/N); 0 when neither parses.
func (c Comment) IssueNumber() int64 {
	if n := numberFromURL(c.IssueURL); n > 0 {
		return n
	}
	return numberFromURL(c.PullRequestURL)
}

// numberFromURL reads the trailing "/N" of an issue or pull request URL.
func numberFromURL(u string) int64 {
	if i := strings.IndexAny(u, "#?"); i >= 0 {
		u = u[:i]
	}
	u = strings.TrimRight(u, "/")
	i := strings.LastIndexByte(u, '/')
	if i < 0 {
		return 0
	}
	n, err := strconv.ParseInt(u[i+1:], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// TrackedTime is one tracked-time entry. IssueID is Gitea's instance-wide
// issue id; the embedded Issue (present in the API) gives the number.
type TrackedTime struct {
	ID       int64     `json:"id"`
	Created  time.Time `json:"created"`
	Time     int64     `json:"time"` // seconds
	UserID   int64     `json:"user_id"`
	UserName string    `json:"user_name"`
	IssueID  int64     `json:"issue_id"`
	Issue    *Issue    `json:"issue"`
}

// TimelineComment is one raw entry of an issue timeline. The SDK's type
// cannot decode it (label is an object, not a string), so this mirrors the
// recorded Forgejo shape. For "label" entries Body is "1" when the label was
// added and empty when it was removed.
type TimelineComment struct {
	ID              int64        `json:"id"`
	Type            string       `json:"type"`
	HTMLURL         string       `json:"html_url"`
	PullRequestURL  string       `json:"pull_request_url"`
	IssueURL        string       `json:"issue_url"`
	User            *User        `json:"user"`
	Body            string       `json:"body"`
	CreatedAt       time.Time    `json:"created_at"`
	UpdatedAt       time.Time    `json:"updated_at"`
	OldMilestone    *Milestone   `json:"old_milestone"`
	Milestone       *Milestone   `json:"milestone"`
	TrackedTime     *TrackedTime `json:"tracked_time"`
	OldTitle        string       `json:"old_title"`
	NewTitle        string       `json:"new_title"`
	OldRef          string       `json:"old_ref"`
	NewRef          string       `json:"new_ref"`
	RefIssue        *Issue       `json:"ref_issue"`
	RefComment      *Comment     `json:"ref_comment"`
	RefAction       string       `json:"ref_action"`
	RefCommitSha    string       `json:"ref_commit_sha"`
	ReviewID        int64        `json:"review_id"`
	Label           *Label       `json:"label"`
	Assignee        *User        `json:"assignee"`
	RemovedAssignee bool         `json:"removed_assignee"`
	DependentIssue  *Issue       `json:"dependent_issue"`
}

// IssueMeta names an issue in some repository, the way the dependency
// endpoints want it.
type IssueMeta struct {
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	Index int64  `json:"index"`
}

// ChangeFrom is the previous value of an edited field in a webhook.
type ChangeFrom struct {
	From string `json:"from"`
}

// Changes lists what an "edited" webhook changed.
type Changes struct {
	Title *ChangeFrom `json:"title,omitempty"`
	Body  *ChangeFrom `json:"body,omitempty"`
	Ref   *ChangeFrom `json:"ref,omitempty"`
}

// IssuePayload is the body of an "issues" webhook.
type IssuePayload struct {
	Action     string      `json:"action"`
	Number     int64       `json:"number"`
	Changes    *Changes    `json:"changes"`
	Issue      *Issue      `json:"issue"`
	Repository *Repository `json:"repository"`
	Sender     *User       `json:"sender"`
	CommitID   string      `json:"commit_id"`
}

// ReviewPayload is the review carried by pull request review webhooks.
type ReviewPayload struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

// PullRequestPayload is the body of "pull_request" webhooks and of the
// review events ("pull_request_comment", "pull_request_approved", ...).
type PullRequestPayload struct {
	Action            string         `json:"action"`
	Number            int64          `json:"number"`
	Changes           *Changes       `json:"changes"`
	PullRequest       *PullRequest   `json:"pull_request"`
	RequestedReviewer *User          `json:"requested_reviewer"`
	Repository        *Repository    `json:"repository"`
	Sender            *User          `json:"sender"`
	CommitID          string         `json:"commit_id"`
	Review            *ReviewPayload `json:"review"`
}

// IssueCommentPayload is the body of an "issue_comment" webhook, for issues
// and pull requests alike (IsPull, with PullRequest set for pulls).
type IssueCommentPayload struct {
	Action      string       `json:"action"`
	Issue       *Issue       `json:"issue"`
	PullRequest *PullRequest `json:"pull_request"`
	Comment     *Comment     `json:"comment"`
	Changes     *Changes     `json:"changes"`
	Repository  *Repository  `json:"repository"`
	Sender      *User        `json:"sender"`
	IsPull      bool         `json:"is_pull"`
}

package gitea

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/commitea/commitea/store"
)

// ErrMalformedDelivery marks a webhook body that cannot be a delivery of its
// event (bad JSON, or a required object missing). The handler answers 4xx.
var ErrMalformedDelivery = errors.New("malformed gitea delivery")

// Change is the mirror change one webhook delivery calls for. The payload's
// stale fields are already corrected by the action: after label_cleared
// Issue.Labels is empty, after demilestoned Issue.Milestone is nil, after
// closed/reopened the state follows the action.
type Change struct {
	Event  string // X-Gitea-Event header value
	Action string // body "action"
	Repo   string // repository full name, "owner/repo"
	Sender string // login of the user who acted

	// Ignored says the delivery changes nothing in the mirror (an event or
	// action CommiTea does not mirror); Reason says why.
	Ignored bool
	Reason  string

	// Issue is the full row of the affected issue or pull request, to be
	// upserted, or nil.
	Issue *store.Issue
	// IssueDeleted asks to drop the issue (action "deleted").
	IssueDeleted bool
	// Labels are the label definitions the payload carries (current ones
	// only), for upserting into the label mirror.
	Labels []store.Label
	// Milestone is the milestone definition the payload carries, or nil.
	Milestone *store.Milestone

	// Comment is the comment to upsert, or with CommentDeleted set, the one
	// to delete (its ID and Issue are set).
	Comment        *store.Comment
	CommentDeleted bool

	// Changed names the issue aspects the action touched: "created",
	// "content", "state", "labels", "milestone", "assignees", "merged",
	// "review", "commits", "comment".
	Changed []string
	// CommitID is the commit that closed the issue, when one did (a merged
	// pull request's "Fixes #N" closes #N with commit_id set).
	CommitID string
}

// DecodeDelivery turns a webhook delivery (the X-Gitea-Event or
// X-Forgejo-Event header value and the raw body) into the mirror change to
// apply. The action is taken as the truth over stale payload fields.
// Malformed JSON returns an error wrapping ErrMalformedDelivery; events and
// actions that do not touch the mirror return a Change with Ignored set.
func DecodeDelivery(event string, body []byte) (Change, error) {
	ch := Change{Event: event}
	switch {
	case event == "issues":
		return decodeIssues(ch, body)
	case event == "issue_comment":
		return decodeIssueComment(ch, body)
	case strings.HasPrefix(event, "pull_request"):
		return decodePull(ch, body)
	}
	// Still reject garbage for events we do not mirror: a body that is not a
	// JSON object was never sent by Gitea.
	var probe struct {
		Repository *Repository `json:"repository"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return Change{}, fmt.Errorf("decode %q delivery: %w: %v", event, ErrMalformedDelivery, err)
	}
	if probe.Repository != nil {
		ch.Repo = probe.Repository.FullName
	}
	ch.Ignored = true
	ch.Reason = fmt.Sprintf("event %q is not mirrored", event)
	return ch, nil
}

func decodeIssues(ch Change, body []byte) (Change, error) {
	var p IssuePayload
	if err := json.Unmarshal(body, &p); err != nil {
		return Change{}, fmt.Errorf("decode issues delivery: %w: %v", ErrMalformedDelivery, err)
	}
	if p.Issue == nil || p.Repository == nil {
		return Change{}, fmt.Errorf("decode issues delivery: %w: issue or repository missing", ErrMalformedDelivery)
	}
	if err := possible("issues", p.Issue.Number, len(p.Issue.Labels)); err != nil {
		return Change{}, err
	}
	ch.Action, ch.Repo, ch.Sender, ch.CommitID = p.Action, p.Repository.FullName, login(p.Sender), p.CommitID
	if p.Issue.Repository == nil {
		p.Issue.Repository = &RepositoryMeta{ID: p.Repository.ID, Name: p.Repository.Name, FullName: p.Repository.FullName}
	}
	row := p.Issue.Row()
	return applyAction(ch, &row, p.Issue.Labels, p.Issue.Milestone)
}

func decodePull(ch Change, body []byte) (Change, error) {
	var p PullRequestPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return Change{}, fmt.Errorf("decode %s delivery: %w: %v", ch.Event, ErrMalformedDelivery, err)
	}
	if p.PullRequest == nil || p.Repository == nil {
		return Change{}, fmt.Errorf("decode %s delivery: %w: pull_request or repository missing", ch.Event, ErrMalformedDelivery)
	}
	if err := possible(ch.Event, p.PullRequest.Number, len(p.PullRequest.Labels)); err != nil {
		return Change{}, err
	}
	ch.Action, ch.Repo, ch.Sender, ch.CommitID = p.Action, p.Repository.FullName, login(p.Sender), p.CommitID
	pr := *p.PullRequest
	if pr.Base == nil || pr.Base.Repo == nil {
		pr.Base = &PRBranch{Repo: p.Repository}
	}
	row := pr.Row()
	return applyAction(ch, &row, pr.Labels, pr.Milestone)
}

// applyAction corrects the row by the action and fills the change.
func applyAction(ch Change, row *store.Issue, labels []Label, ms *Milestone) (Change, error) {
	switch ch.Action {
	case "opened", "created":
		ch.Changed = []string{"created"}
	case "edited":
		ch.Changed = []string{"content"}
	case "closed":
		row.State = "closed"
		ch.Changed = []string{"state"}
		if row.Merged {
			ch.Changed = append(ch.Changed, "merged")
		}
	case "reopened":
		row.State = "open"
		row.ClosedAt = nil
		ch.Changed = []string{"state"}
	case "label_updated":
		ch.Changed = []string{"labels"}
	case "label_cleared":
		// The payload still lists the labels that were just removed.
		row.Labels = []string{}
		labels = nil
		ch.Changed = []string{"labels"}
	case "milestoned":
		ch.Changed = []string{"milestone"}
	case "demilestoned":
		// The payload still carries the milestone that was just removed.
		row.Milestone = nil
		ms = nil
		ch.Changed = []string{"milestone"}
	case "assigned", "unassigned":
		ch.Changed = []string{"assignees"}
	case "synchronized":
		ch.Changed = []string{"commits"}
	case "review_requested", "review_request_removed", "reviewed", "approved", "rejected":
		ch.Changed = []string{"review"}
	case "deleted":
		ch.IssueDeleted = true
		ch.Changed = []string{"deleted"}
	default:
		ch.Ignored = true
		ch.Reason = fmt.Sprintf("action %q of event %q is not mirrored", ch.Action, ch.Event)
		return ch, nil
	}
	ch.Issue = row
	ch.Labels = labelRows(labels)
	if ms != nil {
		m := ms.Row()
		ch.Milestone = &m
	}
	return ch, nil
}

func decodeIssueComment(ch Change, body []byte) (Change, error) {
	var p IssueCommentPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return Change{}, fmt.Errorf("decode issue_comment delivery: %w: %v", ErrMalformedDelivery, err)
	}
	if p.Issue == nil || p.Comment == nil || p.Repository == nil {
		return Change{}, fmt.Errorf("decode issue_comment delivery: %w: issue, comment or repository missing", ErrMalformedDelivery)
	}
	labels := len(p.Issue.Labels)
	if p.PullRequest != nil {
		labels = max(labels, len(p.PullRequest.Labels))
	}
	if err := possible("issue_comment", p.Issue.Number, labels); err != nil {
		return Change{}, err
	}
	ch.Action, ch.Repo, ch.Sender = p.Action, p.Repository.FullName, login(p.Sender)
	if p.Issue.Repository == nil {
		p.Issue.Repository = &RepositoryMeta{ID: p.Repository.ID, Name: p.Repository.Name, FullName: p.Repository.FullName}
	}
	var row store.Issue
	if p.PullRequest != nil {
		// The pull request object knows the head branch; the issue view of a
		// pull request does not.
		pr := *p.PullRequest
		if pr.Base == nil || pr.Base.Repo == nil {
			pr.Base = &PRBranch{Repo: p.Repository}
		}
		row = pr.Row()
	} else {
		row = p.Issue.Row()
	}
	c := p.Comment.Row()
	c.Issue = p.Issue.Number
	switch p.Action {
	case "created", "edited":
		row.LastActivityAt = latest(row.LastActivityAt, c.UpdatedAt)
		ch.Comment = &c
	case "deleted":
		ch.Comment = &c
		ch.CommentDeleted = true
	default:
		ch.Ignored = true
		ch.Reason = fmt.Sprintf("action %q of event %q is not mirrored", p.Action, ch.Event)
		return ch, nil
	}
	ch.Changed = []string{"comment"}
	ch.Issue = &row
	ch.Labels = labelRows(p.Issue.Labels)
	if p.Issue.Milestone != nil {
		m := p.Issue.Milestone.Row()
		ch.Milestone = &m
	}
	return ch, nil
}

// MaxLabelsPerIssue bounds the labels one delivery may put on an issue.
// Gitea has no hard limit, but a repository with more than a thousand
// labels on one issue does not exist; a payload claiming it is an attack
// on the label mirror (each one is a row).
const MaxLabelsPerIssue = 1000

// possible refuses values no Gitea sends: issue numbers start at 1.
func possible(event string, number int64, labels int) error {
	if number < 1 {
		return fmt.Errorf("decode %s delivery: %w: issue number %d (numbers start at 1)", event, ErrMalformedDelivery, number)
	}
	if labels > MaxLabelsPerIssue {
		return fmt.Errorf("decode %s delivery: %w: %d labels on one issue (at most %d)", event, ErrMalformedDelivery, labels, MaxLabelsPerIssue)
	}
	return nil
}

func labelRows(labels []Label) []store.Label {
	if len(labels) == 0 {
		return nil
	}
	return Rows[Label, store.Label](labels)
}

package gitea_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// want describes the expected Change of one recorded delivery; nil slices
// and zero values are checked as written.
type want struct {
	ignored        bool
	action         string
	number         int64
	isPull         bool
	state          string
	labels         []string
	milestone      int64 // 0: none
	assignees      []string
	ref            string
	merged         bool
	closingRefs    []int64
	comment        int64
	commentDeleted bool
	changed        string
	commitID       bool
}

func TestDecodeRecordedDeliveries(t *testing.T) {
	ds, err := giteafake.Deliveries()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 41 {
		t.Fatalf("got %d recorded deliveries, want 41", len(ds))
	}
	est := []string{"deadline/hard", "est/S", "p/1"}
	wants := map[string]want{
		"001-push-noaction":                 {ignored: true},
		"002-issues-opened":                 {action: "opened", number: 1, state: "open", labels: []string{}, assignees: []string{}, changed: "created"},
		"003-issues-edited":                 {action: "edited", number: 1, state: "open", labels: []string{}, assignees: []string{}, changed: "content"},
		"004-issues-edited":                 {action: "edited", number: 1, state: "open", labels: []string{}, assignees: []string{}, changed: "content"},
		"005-issues-label_updated":          {action: "label_updated", number: 1, state: "open", labels: []string{"deadline/hard", "est/S"}, assignees: []string{}, changed: "labels"},
		"006-issues-label_updated":          {action: "label_updated", number: 1, state: "open", labels: []string{"deadline/hard", "est/M"}, assignees: []string{}, changed: "labels"},
		"007-issues-label_updated":          {action: "label_updated", number: 1, state: "open", labels: []string{"deadline/hard", "est/M", "p/1"}, assignees: []string{}, changed: "labels"},
		"008-issues-label_updated":          {action: "label_updated", number: 1, state: "open", labels: []string{"est/M", "p/1"}, assignees: []string{}, changed: "labels"},
		"009-issues-label_updated":          {action: "label_updated", number: 1, state: "open", labels: []string{"est/S"}, assignees: []string{}, changed: "labels"},
		"010-issues-label_cleared":          {action: "label_cleared", number: 1, state: "open", labels: []string{}, assignees: []string{}, changed: "labels"},
		"011-issues-milestoned":             {action: "milestoned", number: 1, state: "open", labels: []string{}, milestone: 1, assignees: []string{}, changed: "milestone"},
		"012-issues-demilestoned":           {action: "demilestoned", number: 1, state: "open", labels: []string{}, assignees: []string{}, changed: "milestone"},
		"013-issues-milestoned":             {action: "milestoned", number: 1, state: "open", labels: []string{}, milestone: 1, assignees: []string{}, changed: "milestone"},
		"014-issues-assigned":               {action: "assigned", number: 1, state: "open", labels: []string{}, milestone: 1, assignees: []string{"ceo"}, changed: "assignees"},
		"015-issues-assigned":               {action: "assigned", number: 1, state: "open", labels: []string{}, milestone: 1, assignees: []string{"ceo", "dev"}, changed: "assignees"},
		"016-issues-unassigned":             {action: "unassigned", number: 1, state: "open", labels: []string{}, milestone: 1, assignees: []string{"ceo"}, changed: "assignees"},
		"017-issues-unassigned":             {action: "unassigned", number: 1, state: "open", labels: []string{}, milestone: 1, assignees: []string{}, changed: "assignees"},
		"018-issue_comment-created":         {action: "created", number: 1, state: "open", labels: []string{}, milestone: 1, assignees: []string{}, comment: 21, changed: "comment"},
		"019-issue_comment-edited":          {action: "edited", number: 1, state: "open", labels: []string{}, milestone: 1, assignees: []string{}, comment: 21, changed: "comment"},
		"020-issue_comment-created":         {action: "created", number: 1, state: "open", labels: []string{}, milestone: 1, assignees: []string{}, comment: 22, changed: "comment"},
		"021-issue_comment-deleted":         {action: "deleted", number: 1, state: "open", labels: []string{}, milestone: 1, assignees: []string{}, comment: 22, commentDeleted: true, changed: "comment"},
		"022-issues-closed":                 {action: "closed", number: 1, state: "closed", labels: []string{}, milestone: 1, assignees: []string{}, changed: "state"},
		"023-issues-reopened":               {action: "reopened", number: 1, state: "open", labels: []string{}, milestone: 1, assignees: []string{}, changed: "state"},
		"024-issues-label_updated":          {action: "label_updated", number: 1, state: "open", labels: est, milestone: 1, assignees: []string{}, changed: "labels"},
		"025-issues-opened":                 {action: "opened", number: 2, state: "open", labels: []string{}, assignees: []string{}, changed: "created"},
		"026-issues-opened":                 {action: "opened", number: 3, state: "open", labels: []string{}, assignees: []string{}, changed: "created"},
		"027-create-noaction":               {ignored: true},
		"028-push-noaction":                 {ignored: true},
		"029-pull_request-opened":           {action: "opened", number: 4, isPull: true, state: "open", labels: []string{}, assignees: []string{}, ref: "fix-1", closingRefs: []int64{1}, changed: "created"},
		"030-pull_request-label_updated":    {action: "label_updated", number: 4, isPull: true, state: "open", labels: []string{"p/1"}, assignees: []string{}, ref: "fix-1", closingRefs: []int64{1}, changed: "labels"},
		"031-pull_request-assigned":         {action: "assigned", number: 4, isPull: true, state: "open", labels: []string{"p/1"}, assignees: []string{"ceo"}, ref: "fix-1", closingRefs: []int64{1}, changed: "assignees"},
		"032-pull_request-milestoned":       {action: "milestoned", number: 4, isPull: true, state: "open", labels: []string{"p/1"}, milestone: 1, assignees: []string{"ceo"}, ref: "fix-1", closingRefs: []int64{1}, changed: "milestone"},
		"033-issue_comment-created":         {action: "created", number: 4, isPull: true, state: "open", labels: []string{"p/1"}, milestone: 1, assignees: []string{"ceo"}, ref: "fix-1", closingRefs: []int64{1}, comment: 44, changed: "comment"},
		"034-pull_request-review_requested": {action: "review_requested", number: 4, isPull: true, state: "open", labels: []string{"p/1"}, milestone: 1, assignees: []string{"ceo"}, ref: "fix-1", closingRefs: []int64{1}, changed: "review"},
		"035-push-noaction":                 {ignored: true},
		"036-pull_request-synchronized":     {action: "synchronized", number: 4, isPull: true, state: "open", labels: []string{"p/1"}, milestone: 1, assignees: []string{"ceo"}, ref: "fix-1", closingRefs: []int64{1}, changed: "commits"},
		"037-pull_request_comment-reviewed": {action: "reviewed", number: 4, isPull: true, state: "open", labels: []string{"p/1"}, milestone: 1, assignees: []string{"ceo"}, ref: "fix-1", closingRefs: []int64{1}, changed: "review"},
		"038-pull_request-closed":           {action: "closed", number: 4, isPull: true, state: "closed", labels: []string{"p/1"}, milestone: 1, assignees: []string{"ceo"}, ref: "fix-1", merged: true, closingRefs: []int64{1}, changed: "state"},
		"039-issues-closed":                 {action: "closed", number: 1, state: "closed", labels: est, milestone: 1, assignees: []string{}, changed: "state", commitID: true},
		"040-push-noaction":                 {ignored: true},
		"041-delete-noaction":               {ignored: true},
	}
	for _, d := range ds {
		t.Run(d.Name, func(t *testing.T) {
			w, ok := wants[d.Name]
			if !ok {
				t.Fatalf("no expectation for %s", d.Name)
			}
			ch, err := gitea.DecodeDelivery(d.Event, d.RawBody)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Repo != "ceo/demo" {
				t.Errorf("repo %q", ch.Repo)
			}
			if ch.Ignored != w.ignored {
				t.Fatalf("ignored = %v (%s), want %v", ch.Ignored, ch.Reason, w.ignored)
			}
			if w.ignored {
				if ch.Issue != nil || ch.Comment != nil {
					t.Errorf("ignored change carries rows: %+v", ch)
				}
				return
			}
			if ch.Action != w.action {
				t.Errorf("action %q, want %q", ch.Action, w.action)
			}
			is := ch.Issue
			if is == nil {
				t.Fatal("no issue row")
			}
			if is.Number != w.number || is.IsPull != w.isPull || is.State != w.state || is.Ref != w.ref || is.Merged != w.merged {
				t.Errorf("issue #%d pull=%v state=%s ref=%q merged=%v, want #%d pull=%v state=%s ref=%q merged=%v",
					is.Number, is.IsPull, is.State, is.Ref, is.Merged, w.number, w.isPull, w.state, w.ref, w.merged)
			}
			if !slices.Equal(is.Labels, w.labels) || is.Labels == nil {
				t.Errorf("labels %q, want %q", is.Labels, w.labels)
			}
			gotMS := int64(0)
			if is.Milestone != nil {
				gotMS = *is.Milestone
			}
			if gotMS != w.milestone {
				t.Errorf("milestone %d, want %d", gotMS, w.milestone)
			}
			if (ch.Milestone == nil) != (w.milestone == 0) {
				t.Errorf("milestone definition %+v with milestone %d", ch.Milestone, w.milestone)
			}
			if !slices.Equal(is.Assignees, w.assignees) || is.Assignees == nil {
				t.Errorf("assignees %q, want %q", is.Assignees, w.assignees)
			}
			if !slices.Equal(is.ClosingRefs, w.closingRefs) {
				t.Errorf("closing refs %v, want %v", is.ClosingRefs, w.closingRefs)
			}
			if len(ch.Labels) != len(w.labels) {
				t.Errorf("label definitions %+v, want %d", ch.Labels, len(w.labels))
			}
			if w.comment != 0 {
				if ch.Comment == nil || ch.Comment.ID != w.comment || ch.Comment.Issue != w.number || ch.CommentDeleted != w.commentDeleted {
					t.Errorf("comment %+v deleted=%v, want id %d on #%d deleted=%v", ch.Comment, ch.CommentDeleted, w.comment, w.number, w.commentDeleted)
				}
			} else if ch.Comment != nil {
				t.Errorf("unexpected comment %+v", ch.Comment)
			}
			if !slices.Contains(ch.Changed, w.changed) {
				t.Errorf("changed %v, want %q", ch.Changed, w.changed)
			}
			if (ch.CommitID != "") != w.commitID {
				t.Errorf("commit id %q", ch.CommitID)
			}
			if is.Author != "ceo" || is.CreatedAt.IsZero() || is.UpdatedAt.IsZero() || is.GiteaID == 0 {
				t.Errorf("row basics missing: %+v", is)
			}
			if w.state == "closed" && is.ClosedAt == nil {
				t.Error("closed without closed_at")
			}
		})
	}
}

func TestDecodeDeliveryMalformed(t *testing.T) {
	for _, tc := range []struct{ event, body string }{
		{"issues", `{"action":"opened","issue":`},
		{"issues", `{"action":"opened"}`},
		{"pull_request", `[1,2]`},
		{"issue_comment", `{"action":"created","issue":{"number":1},"repository":{"full_name":"a/b"}}`},
		{"push", `not json`},
	} {
		_, err := gitea.DecodeDelivery(tc.event, []byte(tc.body))
		if !errors.Is(err, gitea.ErrMalformedDelivery) {
			t.Errorf("%s %s: err %v, want ErrMalformedDelivery", tc.event, tc.body, err)
		}
	}
}

func TestDecodeDeliveryUnknownAction(t *testing.T) {
	ch, err := gitea.DecodeDelivery("issues", []byte(`{"action":"pinned","number":1,"issue":{"number":1},"repository":{"full_name":"a/b"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Ignored || ch.Issue != nil || ch.Repo != "a/b" {
		t.Errorf("got %+v, want ignored", ch)
	}
}

func TestParseClosingRefs(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []int64
	}{
		{"Fixes #1", []int64{1}},
		{"fixes #3 and closes #2, also resolves #3", []int64{2, 3}},
		{"CLOSED #7\nResolved: #8", []int64{7, 8}},
		{"fix ceo/demo#5 and other/repo#6", []int64{5}},
		{"Fix CEO/Demo#9", []int64{9}},
		{"refs #4, prefixes #5, see #6", nil},
		{"(closes #10) [fixed #11]", []int64{10, 11}},
		{"closes#12", nil},
		{"", nil},
	} {
		got := gitea.ParseClosingRefs(tc.text, "ceo/demo")
		if !slices.Equal(got, tc.want) {
			t.Errorf("ParseClosingRefs(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
)

// Applying apply_changes' ops, one at a time, through the Gitea adapter.
// Every op is idempotent on the Gitea side (a label already there, a
// dependency that exists, an issue already closed count as done), and each
// one's result is written through to the mirror in a transaction that also
// records the op as done under the idempotency key and moves the change
// counter, so a failure loses nothing already applied and a retry with the
// key continues after it.

// apply runs op i.
func (b *batch) apply(ctx context.Context, i int, op Op) error {
	switch op.Op {
	case "create_issue":
		return b.createIssue(ctx, i, op)
	case "set_estimate":
		return b.setScopedLabel(ctx, i, op.Issue, op.Estimate)
	case "set_priority":
		return b.setScopedLabel(ctx, i, op.Issue, op.Priority)
	case "set_milestone":
		var m int64 // 0 removes the milestone
		if op.Milestone != nil {
			m = *op.Milestone
		}
		return b.editIssue(ctx, i, op.Issue, gitea.EditIssueOptions{Milestone: &m})
	case "close_issue":
		return b.editIssue(ctx, i, op.Issue, gitea.EditIssueOptions{State: gitea.String("closed")})
	case "remove_label":
		return b.removeLabel(ctx, i, op)
	case "add_dep", "remove_dep":
		return b.changeDep(ctx, i, op)
	case "set_deadline_hard":
		return b.setDeadlineHard(ctx, i, *op.Milestone, *op.Hard)
	case "set_assignees":
		// Absolute, so a retry sets the same list; [] takes everyone off.
		logins := append([]string{}, op.Assignees...)
		return b.editIssue(ctx, i, op.Issue, gitea.EditIssueOptions{Assignees: &logins})
	}
	return fmt.Errorf("op %d: unknown op %q passed validation", i, op.Op)
}

// commit writes an op's result through to the mirror and records it done,
// in one transaction.
func (b *batch) commit(ctx context.Context, i int, created int64, write func(tx store.Tx) error) error {
	err := store.InTx(ctx, b.s.Pool, func(tx store.Tx) error {
		if write != nil {
			if err := write(tx); err != nil {
				return err
			}
		}
		if key := strings.TrimSpace(b.in.IdempotencyKey); key != "" {
			if err := store.RecordOpDone(ctx, tx, b.p.ID, key, i, created); err != nil {
				return err
			}
		}
		return b.s.markChanged(ctx, tx, b.p.ID, b.quote.PlanVersion)
	})
	if err != nil {
		return fmt.Errorf("write op %d (%s) through to the mirror: %w", i, b.in.Ops[i].Op, err)
	}
	b.done[i] = true
	return nil
}

func (b *batch) gitea() GiteaWriter { return b.s.Write.Gitea }

func upsertIssue(ctx context.Context, tx store.Tx, projectID int64, is gitea.Issue) error {
	return store.UpsertIssues(ctx, tx, projectID, []store.IssueWrite{{Issue: is.Row()}})
}

func (b *batch) createIssue(ctx context.Context, i int, op Op) error {
	n, filed := b.created[i]
	if !filed {
		ids, err := b.labelIDs(ctx, op.Labels)
		if err != nil {
			return err
		}
		opt := gitea.CreateIssueOptions{Title: op.Title, Body: op.Body, Labels: ids}
		if op.Milestone != nil {
			opt.Milestone = *op.Milestone
		}
		is, err := b.gitea().CreateIssue(ctx, b.p.Owner, b.p.Name, opt)
		if err != nil {
			return err
		}
		n = is.Number
		b.created[i] = n
		// The issue exists now: record it before its dependencies, so a
		// retry adds them rather than filing a second issue.
		err = store.InTx(ctx, b.s.Pool, func(tx store.Tx) error {
			if err := upsertIssue(ctx, tx, b.p.ID, is); err != nil {
				return err
			}
			if err := store.PutDrawKey(ctx, tx, b.p.ID, n, proposalDrawKeys(b.in.Ops)[i]); err != nil {
				return err
			}
			if key := strings.TrimSpace(b.in.IdempotencyKey); key != "" {
				if err := store.RecordCreated(ctx, tx, b.p.ID, key, i, n); err != nil {
					return err
				}
			}
			return b.s.markChanged(ctx, tx, b.p.ID, b.quote.PlanVersion)
		})
		if err != nil {
			return fmt.Errorf("write created issue #%d through to the mirror: %w", n, err)
		}
	}
	deps := make([]int64, 0, len(op.Deps))
	creates := createIndexes(b.in.Ops)
	for _, d := range op.Deps {
		if d < 0 {
			// Validated: the -d-th create_issue comes before this one and
			// was filed already.
			d = b.created[creates[-d-1]]
		}
		deps = append(deps, d)
	}
	for _, d := range deps {
		if err := b.gitea().AddDependency(ctx, b.p.Owner, b.p.Name, n, b.meta(d)); err != nil {
			return err
		}
	}
	return b.commit(ctx, i, n, func(tx store.Tx) error {
		for _, d := range deps {
			if err := store.AddDependency(ctx, tx, b.p.ID, store.Dependency{Issue: n, DependsOn: d}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (b *batch) meta(n int64) gitea.IssueMeta {
	return gitea.IssueMeta{Owner: b.p.Owner, Repo: b.p.Name, Index: n}
}

// setScopedLabel puts an est/* or p/* label on an issue and takes off any
// other label of that scope, which Gitea does by itself for exclusive
// labels but not for a label someone created without the flag.
func (b *batch) setScopedLabel(ctx context.Context, i int, number int64, name string) error {
	canon, _ := canonicalLabel(name)
	l, err := b.label(ctx, canon)
	if err != nil {
		return err
	}
	after, err := b.gitea().AddLabels(ctx, b.p.Owner, b.p.Name, number, []int64{l.ID})
	if err != nil {
		return err
	}
	scope := labelScope(canon)
	for _, other := range after {
		if other.ID != l.ID && labelScope(other.Name) == scope {
			if err := b.gitea().RemoveLabel(ctx, b.p.Owner, b.p.Name, number, other.ID); err != nil {
				return err
			}
		}
	}
	return b.refreshIssue(ctx, i, number)
}

func (b *batch) removeLabel(ctx context.Context, i int, op Op) error {
	canon, _ := canonicalLabel(op.Label)
	if err := b.loadLabels(ctx); err != nil {
		return err
	}
	l, exists := b.labels[canon]
	if !exists {
		// Not even in the repository: nothing to remove.
		return b.commit(ctx, i, 0, nil)
	}
	is, err := b.gitea().GetIssue(ctx, b.p.Owner, b.p.Name, op.Issue)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(is.Labels, func(x gitea.Label) bool { return x.ID == l.ID }) {
		return b.commit(ctx, i, 0, func(tx store.Tx) error { return upsertIssue(ctx, tx, b.p.ID, is) })
	}
	if err := b.gitea().RemoveLabel(ctx, b.p.Owner, b.p.Name, op.Issue, l.ID); err != nil {
		return err
	}
	return b.refreshIssue(ctx, i, op.Issue)
}

// refreshIssue reads the issue back after a label change (the label
// endpoints answer with labels only) and writes it through.
func (b *batch) refreshIssue(ctx context.Context, i int, number int64) error {
	is, err := b.gitea().GetIssue(ctx, b.p.Owner, b.p.Name, number)
	if err != nil {
		return err
	}
	return b.commit(ctx, i, 0, func(tx store.Tx) error { return upsertIssue(ctx, tx, b.p.ID, is) })
}

func (b *batch) editIssue(ctx context.Context, i int, number int64, opt gitea.EditIssueOptions) error {
	is, err := b.gitea().EditIssue(ctx, b.p.Owner, b.p.Name, number, opt)
	if err != nil {
		return err
	}
	return b.commit(ctx, i, 0, func(tx store.Tx) error { return upsertIssue(ctx, tx, b.p.ID, is) })
}

func (b *batch) changeDep(ctx context.Context, i int, op Op) error {
	dep := store.Dependency{Issue: op.Issue, DependsOn: op.DependsOn}
	if op.Op == "add_dep" {
		// The adapter checks first and takes Forgejo's 500 "issue
		// dependency does already exist" as done.
		if err := b.gitea().AddDependency(ctx, b.p.Owner, b.p.Name, op.Issue, b.meta(op.DependsOn)); err != nil {
			return err
		}
		return b.commit(ctx, i, 0, func(tx store.Tx) error { return store.AddDependency(ctx, tx, b.p.ID, dep) })
	}
	if err := b.gitea().RemoveDependency(ctx, b.p.Owner, b.p.Name, op.Issue, b.meta(op.DependsOn)); err != nil {
		return err
	}
	return b.commit(ctx, i, 0, func(tx store.Tx) error { return store.RemoveDependency(ctx, tx, b.p.ID, dep) })
}

// setDeadlineHard adds or removes the "deadline: hard" line of the
// milestone's description, read fresh from Gitea so an edit made there
// since the last sync is kept.
func (b *batch) setDeadlineHard(ctx context.Context, i int, id int64, hard bool) error {
	ms, err := b.gitea().ListMilestones(ctx, b.p.Owner, b.p.Name)
	if err != nil {
		return err
	}
	k := slices.IndexFunc(ms, func(m gitea.Milestone) bool { return m.ID == id })
	if k < 0 {
		return Errorf(CodeNotFound, "milestone", "milestone %d is no longer in Gitea; %s", id, b.progress(i, strings.TrimSpace(b.in.IdempotencyKey)))
	}
	m := ms[k]
	if desc := worker.WithHardLine(m.Description, hard); desc != m.Description {
		if m, err = b.gitea().EditMilestone(ctx, b.p.Owner, b.p.Name, id, gitea.EditMilestoneOptions{Description: &desc}); err != nil {
			return err
		}
	}
	return b.commit(ctx, i, 0, func(tx store.Tx) error {
		return store.UpsertMilestones(ctx, tx, b.p.ID, []store.Milestone{m.Row()})
	})
}

// loadLabels reads the repository's labels once per batch.
func (b *batch) loadLabels(ctx context.Context) error {
	if b.labels != nil {
		return nil
	}
	ls, err := b.gitea().ListLabels(ctx, b.p.Owner, b.p.Name)
	if err != nil {
		return err
	}
	b.labels = make(map[string]gitea.Label, len(ls))
	for _, l := range ls {
		name := strings.ToLower(l.Name)
		if _, dup := b.labels[name]; !dup {
			b.labels[name] = l
		}
	}
	return nil
}

// label returns the repository's label for a CommiTea label name (matched
// case-insensitively), creating it, lowercase and exclusive, on first use.
func (b *batch) label(ctx context.Context, canon string) (gitea.Label, error) {
	if err := b.loadLabels(ctx); err != nil {
		return gitea.Label{}, err
	}
	if l, ok := b.labels[canon]; ok {
		return l, nil
	}
	scope := labelScope(canon)
	l, err := b.gitea().CreateLabel(ctx, b.p.Owner, b.p.Name, gitea.CreateLabelOptions{
		Name: canon, Color: labelColors[scope], Exclusive: true, Description: labelDescriptions[scope]})
	if err != nil {
		// The create is never retried (a repeat would make a second
		// label); the next batch lists the labels again and finds it if it
		// was made after all.
		b.labels = nil
		return gitea.Label{}, err
	}
	b.labels[canon] = l
	if err := store.UpsertLabels(ctx, b.s.Pool, b.p.ID, []store.Label{l.Row()}); err != nil {
		return gitea.Label{}, err
	}
	return l, nil
}

func (b *batch) labelIDs(ctx context.Context, names []string) ([]int64, error) {
	var ids []int64
	for _, n := range names {
		canon, _ := canonicalLabel(n)
		l, err := b.label(ctx, canon)
		if err != nil {
			return nil, err
		}
		ids = append(ids, l.ID)
	}
	return ids, nil
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
)

// The write path shared by apply_changes and record_directive: the Gitea
// adapter they write through, the engine that answers their what-ifs, the
// job queue that recomputes after a write, and the audit of every call.

// GiteaWriter is the part of the Gitea adapter the write tools use;
// *gitea.Client is one.
type GiteaWriter interface {
	CreateIssue(ctx context.Context, owner, repo string, opt gitea.CreateIssueOptions) (gitea.Issue, error)
	EditIssue(ctx context.Context, owner, repo string, index int64, opt gitea.EditIssueOptions) (gitea.Issue, error)
	GetIssue(ctx context.Context, owner, repo string, index int64) (gitea.Issue, error)
	AddLabels(ctx context.Context, owner, repo string, index int64, ids []int64) ([]gitea.Label, error)
	RemoveLabel(ctx context.Context, owner, repo string, index, labelID int64) error
	ListLabels(ctx context.Context, owner, repo string) ([]gitea.Label, error)
	CreateLabel(ctx context.Context, owner, repo string, opt gitea.CreateLabelOptions) (gitea.Label, error)
	AddDependency(ctx context.Context, owner, repo string, index int64, dep gitea.IssueMeta) error
	RemoveDependency(ctx context.Context, owner, repo string, index int64, dep gitea.IssueMeta) error
	ListMilestones(ctx context.Context, owner, repo string) ([]gitea.Milestone, error)
	EditMilestone(ctx context.Context, owner, repo string, id int64, opt gitea.EditMilestoneOptions) (gitea.Milestone, error)
	// RepoPermission is a login's access mode on the repository, which
	// says whether Gitea lets them be assigned.
	RepoPermission(ctx context.Context, owner, repo, login string) (string, error)
}

// WriteConfig is what the write tools need besides the database. Without
// Gitea, apply_changes answers GITEA_UNAVAILABLE (record_directive needs no
// Gitea). Engine builds the what-if inputs the way the recompute does
// (people, calendars, calibration, trials); nil uses a Forecaster with the
// defaults. Jobs, when set, gets a recompute job in the transaction of each
// write; without it the freshness watch notices the change counter.
type WriteConfig struct {
	Gitea  GiteaWriter
	Engine *worker.Forecaster
	Jobs   worker.JobInserter
	// Now is the clock; tests set it.
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Write.Now != nil {
		return s.Write.Now()
	}
	return time.Now()
}

func (s *Service) engine() *worker.Forecaster {
	if s.Write.Engine != nil {
		return s.Write.Engine
	}
	return &worker.Forecaster{Pool: s.Pool, Log: s.Log, Now: s.Write.Now}
}

// markChanged moves the change counter and enqueues a recompute in the
// transaction of the mirror writes it is about, as the sync does. plan is
// the snapshot version the write's quote was made on (0: none): the next
// recompute forecasts the write on that plan first, so the quote is what
// the first snapshot showing the write says.
func (s *Service) markChanged(ctx context.Context, tx store.Tx, projectID, plan int64) error {
	if err := store.BumpChangeCounters(ctx, tx, []int64{projectID}); err != nil {
		return err
	}
	if plan > 0 {
		if err := store.HoldPlan(ctx, tx, projectID, plan); err != nil {
			return err
		}
	}
	if s.Write.Jobs == nil {
		return nil
	}
	if _, err := s.Write.Jobs.InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: worker.RecomputeArgs{ProjectID: projectID}}}); err != nil {
		return fmt.Errorf("enqueue recompute: %w", err)
	}
	return nil
}

// audit records a write call; a failure to audit is logged, not returned,
// since the call itself has already happened.
func (s *Service) audit(ctx context.Context, projectID int64, tool string, c Caller, input any, outcome string, result any) {
	in, err := json.Marshal(input)
	if err != nil {
		in = []byte(`{}`)
	}
	res, err := json.Marshal(result)
	if err != nil || string(res) == "null" {
		res = []byte(`{}`)
	}
	err = store.AppendAudit(context.WithoutCancel(ctx), s.Pool, projectID, store.AuditEntry{
		Tool: tool, Caller: c.Name, Input: in, Outcome: outcome, Result: res})
	if err != nil {
		s.Log.ErrorContext(ctx, "audit write tool call", slog.String("tool", tool), slog.Any("error", err))
	}
}

// whatIf runs the engine's what-if on the project as the mirror has it
// now; changes turns that input into the hypothetical changes (so they can
// skip what the input already shows). No change compares nothing and says
// so.
func (s *Service) whatIf(ctx context.Context, projectID int64, changes func(scheduler.Input) []scheduler.Change) (worker.Quote, error) {
	q, err := s.engine().WhatIf(ctx, projectID, changes)
	if err != nil {
		return worker.Quote{}, fmt.Errorf("what-if: %w", err)
	}
	return q, nil
}

// giteaError turns a failed Gitea call into the tool error the caller sees,
// with what was done before it.
func giteaError(err error, done string) error {
	var apiErr *gitea.APIError
	msg := err.Error()
	if errors.As(err, &apiErr) {
		msg = fmt.Sprintf("Gitea answered %d to %s %s: %s", apiErr.Status, apiErr.Method, apiErr.Path, apiErr.Message)
		if apiErr.Unavailable {
			msg = fmt.Sprintf("Gitea stayed unavailable for %s %s after %d attempts: %s", apiErr.Method, apiErr.Path, apiErr.Attempts, apiErr.Message)
		}
	}
	return Errorf(CodeGiteaUnavailable, "", "%s; %s", msg, done)
}

// markDirectiveApplied settles a directive in the ledger with the quote its
// changes were made on: every milestone's band before and after (the
// predicted figures) and the change counter the writes reached, so the
// first snapshot covering them records the realized figures beside them
// (worker.Forecaster.Recompute). A quote that could not be computed
// predicts nothing.
func (s *Service) markDirectiveApplied(ctx context.Context, projectID, id int64, q worker.Quote) error {
	counter, err := store.ChangeCounter(ctx, s.Pool, projectID)
	if err != nil {
		return err
	}
	predicted, err := predictedJSON(q)
	if err != nil {
		return err
	}
	return store.MarkDirectiveApplied(ctx, s.Pool, projectID, id, s.now(), predicted, counter)
}

// predictedJSON is what a quote predicts for every milestone, as the ledger
// keeps it; nil when the quote compared no forecasts (no change, or none
// computed): the snapshot then realizes what the baseline already showed.
func predictedJSON(q worker.Quote) (json.RawMessage, error) {
	if len(q.After.Milestones) == 0 && len(q.Before.Milestones) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(scheduler.AllEffects(q.Before, q.After))
	if err != nil {
		return nil, fmt.Errorf("encode predicted figures: %w", err)
	}
	return raw, nil
}

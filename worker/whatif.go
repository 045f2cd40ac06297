package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// The write tools' what-if. It makes the changes to a copy of the mirror
// (and of the capacity calendar) the way Gitea, the write-through and the
// webhook will make them, then forecasts that copy through the recompute's
// own path on the plan the next recompute forecasts the change on; so the
// quote is the next snapshot, lifecycle, calibration, draws and all.

// Quote is a what-if's answer: the difference, and the snapshot whose plan
// it was made on (0 for a fresh plan), which a write holds the next
// recompute to (store.HoldPlan).
type Quote struct {
	scheduler.WhatIfResult
	PlanVersion int64
	// Before and After are the whole forecasts compared (After is what the
	// first snapshot after the change will hold); zero when no change was
	// asked for.
	Before, After scheduler.Forecast `json:"-"`
}

// WhatIf forecasts the project's mirror as it is now with and without
// changes. changes turns the engine's input into the hypothetical changes
// (so callers can leave out what the input already shows); none quote "no
// change to the forecast". The baseline is the latest snapshot's forecast
// when that snapshot was computed from this very input, else it is
// forecast too.
func (f *Forecaster) WhatIf(ctx context.Context, projectID int64, changes func(scheduler.Input) []scheduler.Change) (Quote, error) {
	st, err := loadProjectState(ctx, f.Pool, projectID, nil)
	if err != nil {
		return Quote{}, fmt.Errorf("what-if: %w", err)
	}
	now := f.now().UTC()
	plan, version, err := st.quotedPlan(now)
	if err != nil {
		return Quote{}, fmt.Errorf("what-if on %s: %w", st.project.FullName(), err)
	}
	base := f.model(st, plan, now)
	cs := changes(base.input)
	if len(cs) == 0 {
		return Quote{WhatIfResult: scheduler.WhatIfResult{Consequence: "no change to the forecast", Milestones: []scheduler.MilestoneDelta{}, Issues: []scheduler.IssueDelta{}}, PlanVersion: version}, nil
	}
	next, proposed, err := applyToMirror(st, cs, now)
	if err != nil {
		return Quote{}, fmt.Errorf("what-if: %w", err)
	}
	after, err := f.forecast(next, plan, now, false)
	if err != nil {
		return Quote{}, fmt.Errorf("what-if: %w", err)
	}
	before, err := f.baseline(ctx, st, base, version, after.forecast.Trials)
	if err != nil {
		return Quote{}, err
	}
	res := scheduler.DiffForecasts(before, after.forecast, after.model.input, proposed)
	return Quote{WhatIfResult: res, PlanVersion: version, Before: before, After: after.forecast}, nil
}

// baseline is the forecast of base: the snapshot's own when it was made
// from the same input (hash) with as many trials, otherwise a fresh run.
func (f *Forecaster) baseline(ctx context.Context, st projectState, base engineModel, version int64, trials int) (scheduler.Forecast, error) {
	if version > 0 && st.head != nil && st.head.Version == version && st.head.InputsHash == inputsHash(base) {
		raw, err := store.SnapshotPart(ctx, f.Pool, st.project.ID, version, "forecast")
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return scheduler.Forecast{}, err
		}
		var fc scheduler.Forecast
		if err == nil && json.Unmarshal(raw, &fc) == nil && fc.Trials == trials {
			return fc, nil
		}
	}
	fc, err := scheduler.Run(base.input, f.forecastOptions(st.project.ID))
	if err != nil {
		return scheduler.Forecast{}, fmt.Errorf("what-if baseline of %s: %w", st.project.FullName(), err)
	}
	return fc, nil
}

// applyToMirror returns a copy of st with the changes made as Gitea makes
// them (est/* and p/* replace their scope, a close stamps closed_at, a new
// issue takes the next number and its draw key), and the numbers given to
// proposed issues. st itself is not modified. A change the mirror already
// shows changes nothing, as the write would not; an unknown issue or
// milestone is an error.
func applyToMirror(st projectState, changes []scheduler.Change, now time.Time) (projectState, []int64, error) {
	st.mirror.Issues = slices.Clone(st.mirror.Issues)
	st.mirror.Milestones = slices.Clone(st.mirror.Milestones)
	st.mirror.Dependencies = slices.Clone(st.mirror.Dependencies)
	st.caps = slices.Clone(st.caps)
	keys := make(map[int64]int64, len(st.drawKeys)+1)
	for n, k := range st.drawKeys {
		keys[n] = k
	}
	st.drawKeys = keys
	m := &st.mirror

	at := make(map[int64]int, len(m.Issues))
	next := int64(0)
	for k, is := range m.Issues {
		at[is.Number] = k
		next = max(next, is.Number)
	}
	issue := func(n int64) (*store.Issue, error) {
		k, ok := at[n]
		if !ok || m.Issues[k].IsPull {
			return nil, fmt.Errorf("issue #%d is not in the mirror", n)
		}
		is := &m.Issues[k]
		is.Labels = slices.Clone(is.Labels)
		return is, nil
	}
	milestone := func(id int64) (*store.Milestone, error) {
		k := slices.IndexFunc(m.Milestones, func(x store.Milestone) bool { return x.ID == id })
		if k < 0 {
			return nil, fmt.Errorf("milestone %d is not in the mirror", id)
		}
		return &m.Milestones[k], nil
	}
	placeholders := map[int64]int64{}
	var proposed []int64
	for k, c := range changes {
		var err error
		switch c.Kind {
		case scheduler.AddIssue:
			if c.NewIssue == nil {
				err = errors.New("no newIssue")
				break
			}
			next++
			if err = proposeIssue(&st, *c.NewIssue, next, placeholders, now, issue, milestone); err == nil {
				at[next] = len(m.Issues) - 1
				proposed = append(proposed, next)
				if c.NewIssue.Number < 0 {
					placeholders[c.NewIssue.Number] = next
				}
			}
		case scheduler.SetCapacity:
			err = addCapacity(&st, c)
		default:
			err = changeMirror(m, c, now, issue, milestone)
		}
		if err != nil {
			return projectState{}, nil, fmt.Errorf("change %d (%s): %w", k+1, c.Kind, err)
		}
	}
	return st, proposed, nil
}

// changeMirror makes one change to an existing issue or milestone.
func changeMirror(m *store.Mirror, c scheduler.Change, now time.Time, issue func(int64) (*store.Issue, error), milestone func(int64) (*store.Milestone, error)) error {
	switch c.Kind {
	case scheduler.SetEstimate, scheduler.SetPriority, scheduler.SetMilestone, scheduler.RemoveLabel, scheduler.CloseIssue, scheduler.SetAssignees:
		is, err := issue(c.Issue)
		if err != nil {
			return err
		}
		switch c.Kind {
		case scheduler.SetEstimate:
			if c.Estimate != "" && !c.Estimate.Valid() {
				return fmt.Errorf("unknown estimate %q", c.Estimate)
			}
			is.Labels = scopedLabel(is.Labels, "est/", string(c.Estimate))
		case scheduler.SetPriority:
			if c.Priority < 0 || c.Priority > 3 {
				return fmt.Errorf("priority %d outside 0..3", c.Priority)
			}
			is.Labels = scopedLabel(is.Labels, "p/", fmt.Sprint(c.Priority))
		case scheduler.RemoveLabel:
			is.Labels = slices.DeleteFunc(is.Labels, func(l string) bool { return strings.EqualFold(strings.TrimSpace(l), strings.TrimSpace(c.Label)) })
		case scheduler.SetMilestone:
			is.Milestone = nil
			if c.Milestone != 0 {
				if _, err := milestone(c.Milestone); err != nil {
					return err
				}
				is.Milestone = &c.Milestone
			}
		case scheduler.SetAssignees:
			// As the mirror reads Gitea's answer: sorted, each login once.
			var logins []string
			for _, l := range c.Assignees {
				if l = strings.TrimSpace(l); l != "" {
					logins = append(logins, l)
				}
			}
			slices.Sort(logins)
			logins = slices.Compact(logins)
			if slices.Equal(logins, is.Assignees) || len(logins) == 0 && len(is.Assignees) == 0 {
				return nil // Gitea changes nothing, so nothing is touched
			}
			is.Assignees = logins
		case scheduler.CloseIssue:
			if is.State != "closed" {
				closed := now
				is.State, is.ClosedAt = "closed", &closed
			}
		}
		is.UpdatedAt = now
		return nil
	case scheduler.SetDueDate, scheduler.SetHardness:
		ms, err := milestone(c.Milestone)
		if err != nil {
			return err
		}
		if c.Kind == scheduler.SetHardness {
			ms.Description = WithHardLine(ms.Description, c.Hard)
			return nil
		}
		ms.DueOn = nil
		if !c.Due.IsZero() {
			due := c.Due
			ms.DueOn = &due
		}
		return nil
	case scheduler.AddDep, scheduler.RemoveDep:
		if _, err := issue(c.Issue); err != nil {
			return err
		}
		if _, err := issue(c.DependsOn); err != nil {
			return err
		}
		if c.Issue == c.DependsOn {
			return errors.New("an issue cannot depend on itself")
		}
		d := store.Dependency{Issue: c.Issue, DependsOn: c.DependsOn}
		k := slices.Index(m.Dependencies, d)
		switch {
		case c.Kind == scheduler.RemoveDep && k >= 0:
			m.Dependencies = slices.Delete(m.Dependencies, k, k+1)
		case c.Kind == scheduler.AddDep && k < 0:
			m.Dependencies = insertDependency(m.Dependencies, d)
		}
		return nil
	}
	return fmt.Errorf("unknown change kind %q", c.Kind)
}

// insertDependency adds d where LoadMirror would list it (by issue, then
// repository, then number), so the engine sees dependencies in one order
// whichever way they came.
func insertDependency(deps []store.Dependency, d store.Dependency) []store.Dependency {
	k, _ := slices.BinarySearchFunc(deps, d, func(a, b store.Dependency) int {
		if a.Issue != b.Issue {
			return compareInt(a.Issue, b.Issue)
		}
		if c := strings.Compare(a.DependsOnRepo, b.DependsOnRepo); c != 0 {
			return c
		}
		return compareInt(a.DependsOn, b.DependsOn)
	})
	return slices.Insert(deps, k, d)
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// scopedLabel puts prefix+value on in place of every label of that scope,
// as apply_changes does (Gitea's exclusive scopes, and labels someone made
// without the flag); an empty value only takes them off.
func scopedLabel(labels []string, prefix, value string) []string {
	labels = slices.DeleteFunc(labels, func(l string) bool {
		return strings.HasPrefix(strings.ToLower(strings.TrimSpace(l)), prefix)
	})
	if value != "" {
		labels = append(labels, prefix+value)
	}
	return labels
}

// proposeIssue files a proposed issue in the copy of the mirror as number,
// open, created now, with its dependencies (placeholders of earlier
// proposals resolved) and its draw key.
func proposeIssue(st *projectState, n scheduler.Issue, number int64, placeholders map[int64]int64, now time.Time,
	issue func(int64) (*store.Issue, error), milestone func(int64) (*store.Milestone, error)) error {
	is := store.Issue{Number: number, Title: n.Title, State: "open", Labels: slices.Clone(n.Labels),
		CreatedAt: now, UpdatedAt: now, LastActivityAt: now}
	if n.Milestone != 0 {
		if _, err := milestone(n.Milestone); err != nil {
			return err
		}
		id := n.Milestone
		is.Milestone = &id
	}
	if n.Assignee != "" {
		is.Assignees = []string{n.Assignee}
	}
	var deps []int64
	for _, d := range n.DependsOn {
		if d < 0 {
			real, ok := placeholders[d]
			if !ok {
				return fmt.Errorf("depends on proposed issue %d, which no earlier change proposes", d)
			}
			d = real
		} else if _, err := issue(d); err != nil {
			return err
		}
		if !slices.Contains(deps, d) {
			deps = append(deps, d)
		}
	}
	st.mirror.Issues = append(st.mirror.Issues, is)
	for _, d := range deps {
		st.mirror.Dependencies = insertDependency(st.mirror.Dependencies, store.Dependency{Issue: number, DependsOn: d})
	}
	key := n.DrawKey
	if key == 0 {
		key = scheduler.ProposalDrawKey(n.Title, "", 0)
	}
	st.drawKeys[number] = key
	return nil
}

// addCapacity lays a capacity change over the copy of the capacity
// calendar as store.PutCapacity does: hours per day replaced when given,
// time off added, one entry per login (kept in the byte order
// store.CapacityCalendar reads them in).
func addCapacity(st *projectState, c scheduler.Change) error {
	if c.Person == "" {
		return errors.New("no person")
	}
	if c.HoursPerDay < 0 || c.HoursPerDay > 24 {
		return fmt.Errorf("hours per day %v outside 0..24", c.HoursPerDay)
	}
	k := slices.IndexFunc(st.caps, func(x store.Capacity) bool { return x.Login == c.Person })
	if k < 0 {
		st.caps = append(st.caps, store.Capacity{Login: c.Person})
		slices.SortStableFunc(st.caps, func(a, b store.Capacity) int { return strings.Compare(a.Login, b.Login) })
		k = slices.IndexFunc(st.caps, func(x store.Capacity) bool { return x.Login == c.Person })
	}
	cp := &st.caps[k]
	if c.HoursPerDay > 0 {
		h := c.HoursPerDay
		cp.HoursPerDay = &h
	}
	cp.TimeOff = slices.Clone(cp.TimeOff)
	for _, r := range c.TimeOff {
		span := store.DateSpan{From: r.From.Format(time.DateOnly), To: r.To.Format(time.DateOnly)}
		if !slices.Contains(cp.TimeOff, span) {
			cp.TimeOff = append(cp.TimeOff, span)
		}
	}
	return nil
}

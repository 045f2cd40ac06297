package worker

import (
	"context"
	"fmt"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// What-ifs on the live mirror. A consequence shown to a person ("v1.0 p80
// moves Dec 12 → Dec 15") must come from the engine, never from a model,
// and must be what the next recompute would say if the changes landed. So
// a what-if rebuilds the forecast's input exactly as Recompute does (the
// same lifecycle rules, calibration, team and trial count) from the
// current mirror, and asks scheduler.WhatIf with the baseline's seed.

// EngineInput builds a project's forecast input from the current mirror,
// calibration included, at the Forecaster's clock: the input the next
// recompute would forecast.
func (f *Forecaster) EngineInput(ctx context.Context, projectID int64) (scheduler.Input, error) {
	var (
		project     store.Project
		mirror      store.Mirror
		transitions []store.Transition
	)
	err := store.InSnapshotTx(ctx, f.Pool, func(tx store.Tx) error {
		var err error
		if project, err = store.ProjectByID(ctx, tx, projectID); err != nil {
			return err
		}
		if mirror, err = store.LoadMirror(ctx, tx, projectID); err != nil {
			return err
		}
		transitions, err = store.Transitions(ctx, tx, projectID)
		return err
	})
	if err != nil {
		return scheduler.Input{}, fmt.Errorf("load project %d: %w", projectID, err)
	}
	model := buildModel(project.FullName(), mirror, transitions, f.People, f.DefaultCalendar, f.StaleWorkingDays, f.now().UTC())
	model.input.Calibration = scheduler.Calibrate(model.samples, f.Calibration)
	return model.input, nil
}

// WhatIf forecasts a project's current input with and without changes,
// with the recompute's trial count (and the seed derived from the input,
// as the recompute's), so both draw the same samples.
func (f *Forecaster) WhatIf(ctx context.Context, projectID int64, changes []scheduler.Change) (scheduler.WhatIfResult, error) {
	in, err := f.EngineInput(ctx, projectID)
	if err != nil {
		return scheduler.WhatIfResult{}, err
	}
	res, err := scheduler.WhatIf(in, changes, scheduler.Options{Trials: f.Trials})
	if err != nil {
		return scheduler.WhatIfResult{}, fmt.Errorf("what-if on project %d: %w", projectID, err)
	}
	return res, nil
}

package store

import (
	"context"
	"fmt"
	"time"
)

// MilestonePoint is one milestone's forecast at one time: a row of
// milestone_history (see migration 016).
type MilestonePoint struct {
	MilestoneID int64
	Source      string // HistoryLive or HistoryReplay
	At          time.Time
	Version     int64 // the snapshot of a live point
	Title       string
	Due         time.Time // zero: no due date
	Hard        bool
	Open, Done  int
	// P10, P50 and P80 are zero when nothing was open.
	P10, P50, P80 time.Time
	// PDue is the share of trials on time (0 without a due date).
	PDue float64
}

// Sources of milestone history.
const (
	HistoryLive   = "live"   // published by a recompute
	HistoryReplay = "replay" // the live model at a backtest cut-off
)

// historyHour is a live point's slot: one per milestone and hour, the
// forecast's plan quantum.
func historyHour(t time.Time) time.Time { return t.UTC().Truncate(time.Hour) }

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

const putPointSQL = `
INSERT INTO milestone_history (project_id, milestone_id, source, at, version, title, due, hard, open, done, p10, p50, p80, p_due)
SELECT $1, m, $2, a, v, t, d, h, o, dn, q10, q50, q80, pd FROM unnest($3::bigint[], $4::timestamptz[], $5::bigint[], $6::text[],
	$7::timestamptz[], $8::boolean[], $9::int[], $10::int[], $11::timestamptz[], $12::timestamptz[], $13::timestamptz[], $14::float8[])
	AS u(m, a, v, t, d, h, o, dn, q10, q50, q80, pd)
ON CONFLICT (project_id, milestone_id, source, at) DO UPDATE SET version = EXCLUDED.version, title = EXCLUDED.title,
	due = EXCLUDED.due, hard = EXCLUDED.hard, open = EXCLUDED.open, done = EXCLUDED.done,
	p10 = EXCLUDED.p10, p50 = EXCLUDED.p50, p80 = EXCLUDED.p80, p_due = EXCLUDED.p_due`

func putPoints(ctx context.Context, q DBTX, projectID int64, source string, ps []MilestonePoint) error {
	if len(ps) == 0 {
		return nil
	}
	n := len(ps)
	ms, vs, os, ds := make([]int64, n), make([]*int64, n), make([]int32, n), make([]int32, n)
	ats, dues, p10, p50, p80 := make([]time.Time, n), make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
	titles, hard, pdue := make([]string, n), make([]bool, n), make([]*float64, n)
	for i, p := range ps {
		ms[i], titles[i], hard[i], os[i], ds[i] = p.MilestoneID, cleanText(p.Title), p.Hard, int32(p.Open), int32(p.Done)
		ats[i] = p.At.UTC()
		if source == HistoryLive {
			ats[i] = historyHour(p.At)
		}
		if p.Version != 0 {
			vs[i] = &ps[i].Version
		}
		dues[i], p10[i], p50[i], p80[i] = nullTime(p.Due), nullTime(p.P10), nullTime(p.P50), nullTime(p.P80)
		if !p.Due.IsZero() {
			pdue[i] = &ps[i].PDue
		}
	}
	if _, err := q.Exec(ctx, putPointSQL, projectID, source, ms, ats, vs, titles, dues, hard, os, ds, p10, p50, p80, pdue); err != nil {
		return fmt.Errorf("record %s milestone history of project %d: %w", source, projectID, err)
	}
	return nil
}

// RecordMilestoneForecasts keeps what a recompute published for each
// milestone as its live point of the hour (a later recompute in the same
// hour replaces it).
func RecordMilestoneForecasts(ctx context.Context, q DBTX, projectID int64, ps []MilestonePoint) error {
	return putPoints(ctx, q, projectID, HistoryLive, ps)
}

// ReplaceReplayedForecasts replaces the project's replay points with ps.
func ReplaceReplayedForecasts(ctx context.Context, q DBTX, projectID int64, ps []MilestonePoint) error {
	if _, err := q.Exec(ctx, `DELETE FROM milestone_history WHERE project_id = $1 AND source = $2`, projectID, HistoryReplay); err != nil {
		return fmt.Errorf("clear replayed milestone history of project %d: %w", projectID, err)
	}
	return putPoints(ctx, q, projectID, HistoryReplay, ps)
}

// MilestoneHistory is one milestone's forecast over its life, oldest
// first: every live point, and before the first of them the replay points
// (what the forecast would have said before CommiTea watched).
func MilestoneHistory(ctx context.Context, q DBTX, projectID, milestoneID int64) ([]MilestonePoint, error) {
	rows, err := q.Query(ctx, `
		SELECT source, at, coalesce(version, 0), title, due, hard, open, done, p10, p50, p80, coalesce(p_due, 0)
		FROM milestone_history h
		WHERE project_id = $1 AND milestone_id = $2 AND (source = $3 OR at < coalesce(
			(SELECT min(at) FROM milestone_history WHERE project_id = $1 AND milestone_id = $2 AND source = $3), 'infinity'))
		ORDER BY at, source`, projectID, milestoneID, HistoryLive)
	if err != nil {
		return nil, fmt.Errorf("milestone %d history: %w", milestoneID, err)
	}
	defer rows.Close()
	var out []MilestonePoint
	for rows.Next() {
		p := MilestonePoint{MilestoneID: milestoneID}
		var due, p10, p50, p80 *time.Time
		if err := rows.Scan(&p.Source, &p.At, &p.Version, &p.Title, &due, &p.Hard, &p.Open, &p.Done, &p10, &p50, &p80, &p.PDue); err != nil {
			return nil, fmt.Errorf("milestone %d history: %w", milestoneID, err)
		}
		for _, f := range []struct {
			dst *time.Time
			src *time.Time
		}{{&p.Due, due}, {&p.P10, p10}, {&p.P50, p50}, {&p.P80, p80}} {
			if f.src != nil {
				*f.dst = f.src.UTC()
			}
		}
		p.At = p.At.UTC()
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("milestone %d history: %w", milestoneID, err)
	}
	return out, nil
}

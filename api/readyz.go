package api

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
)

// ProjectFreshness is one project's line in the /readyz body.
type ProjectFreshness struct {
	Project string `json:"project"`
	// Ready is false until the first backfill completed and a snapshot
	// exists; until then tools answer NOT_READY for the project.
	Ready           bool  `json:"ready"`
	SnapshotVersion int64 `json:"snapshotVersion"`
	// ChangesBehind and SecondsBehind are how far the snapshot is behind
	// the mirror: changes it lacks, and how long the oldest of them has
	// waited.
	ChangesBehind      int64   `json:"changesBehind"`
	SecondsBehind      float64 `json:"secondsBehind"`
	SnapshotAgeSeconds float64 `json:"snapshotAgeSeconds"`
}

type readyzBody struct {
	Status        string             `json:"status"`
	Reason        string             `json:"reason,omitempty"`
	MaxLagSeconds float64            `json:"maxLagSeconds,omitempty"`
	Projects      []ProjectFreshness `json:"projects,omitempty"`
}

// readyz answers a load balancer: 200 while the database answers and the
// migrations are current, whatever the forecasts' lag, so that a slow
// recompute never takes the API (and the webhook receiver) out of
// rotation. The body lists each project's lag for a person; monitors ask
// /readyz?fresh=1, which answers 503 when a project is not ready or is
// behind by more than MaxLag.
func readyz(cfg Config) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), 2*time.Second)
		defer cancel()
		if cfg.Ready != nil {
			if err := cfg.Ready(ctx); err != nil {
				writeJSON(w, http.StatusServiceUnavailable, readyzBody{Status: "not ready", Reason: err.Error()})
				return
			}
		}
		fresh := req.URL.Query().Get("fresh")
		wantFresh := fresh != "" && fresh != "0" && fresh != "false"
		body := readyzBody{Status: "ready"}
		if cfg.Freshness == nil {
			writeJSON(w, http.StatusOK, body)
			return
		}
		projects, err := cfg.Freshness(ctx)
		if err != nil {
			body.Reason = "project freshness: " + err.Error()
			status := http.StatusOK
			if wantFresh {
				body.Status, status = "stale", http.StatusServiceUnavailable
			}
			writeJSON(w, status, body)
			return
		}
		body.Projects = projects
		if cfg.MaxLag > 0 {
			body.MaxLagSeconds = cfg.MaxLag.Seconds()
		}
		var stale []string
		for _, p := range projects {
			switch {
			case !p.Ready:
				stale = append(stale, p.Project+" is not ready (first import or recompute not done)")
			case cfg.MaxLag > 0 && p.SecondsBehind > cfg.MaxLag.Seconds():
				stale = append(stale, fmt.Sprintf("%s is %d changes and %.0fs behind its mirror", p.Project, p.ChangesBehind, math.Floor(p.SecondsBehind)))
			}
		}
		if wantFresh && len(stale) > 0 {
			body.Status, body.Reason = "stale", strings.Join(stale, "; ")
			writeJSON(w, http.StatusServiceUnavailable, body)
			return
		}
		writeJSON(w, http.StatusOK, body)
	}
}

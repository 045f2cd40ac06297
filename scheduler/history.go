package scheduler

// History CSV layouts (what ReadHistoryCSV accepts; the header row decides):
//
// CommiTea's own layout, columns by name, in any order, case-insensitive:
//
//	id        required  any text, unique per row
//	created   required  when the issue was opened
//	started   optional  when work started (empty: unknown)
//	resolved  required  when it was done (empty: still open)
//	estimate  optional  est/xs..est/xl (or xs..xl), hours ("6h"), or story points ("5")
//	assignee  optional  login
//	labels    optional  labels separated by ';'
//	spent     optional  tracked hours
//
// Times are RFC 3339, "YYYY-MM-DD HH:MM:SS" (UTC) or "YYYY-MM-DD" (UTC).
//
// The jira-history layout as published by Tawosi et al.: ID, Issue_Key,
// Type, Status, Resolution, Creation_Date, Resolution_Date, Story_Point,
// Timespent, In_Progress_Minutes, Total_Effort_Minutes,
// Resolution_Time_Minutes; NULL marks a missing value. Story_Point is the
// estimate, Timespent (seconds) the tracked time, and the issue is taken to
// have started In_Progress_Minutes before it was resolved (the time it spent
// in an in-progress status, so the latest start consistent with it).

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// HistoryItem is one issue of a replayed history.
type HistoryItem struct {
	ID       string
	Number   int64 // 1.. in order of creation
	Created  time.Time
	Started  time.Time // zero when unknown
	Resolved time.Time // zero when still open
	// The estimate: Size for est/* sizes, Hours for hour estimates,
	// StoryPoints for points. At most one is set.
	Size         Size
	Hours        float64
	StoryPoints  float64
	TrackedHours float64 // 0 when none was tracked
	Assignee     string
	Labels       []string
}

// NominalHours is the item's estimate in focused hours: a size's nominal
// hours, an hour estimate as is, or story points at hoursPerPoint each
// (PriorHoursPerStoryPoint when hoursPerPoint is 0). 0 when there is none.
func (h HistoryItem) NominalHours(hoursPerPoint float64) float64 {
	switch {
	case h.Size.Valid():
		return h.Size.NominalHours()
	case h.Hours > 0:
		return h.Hours
	case h.StoryPoints > 0:
		if hoursPerPoint <= 0 {
			hoursPerPoint = PriorHoursPerStoryPoint
		}
		return h.StoryPoints * hoursPerPoint
	}
	return 0
}

// ReadHistoryCSV reads a history in either documented layout and returns it
// sorted by creation, numbered from 1.
func ReadHistoryCSV(r io.Reader) ([]HistoryItem, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("read history header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	var parse func(rec []string) (HistoryItem, error)
	if _, ok := col["creation_date"]; ok {
		parse = jiraHistoryRow(col)
	} else {
		parse, err = ownHistoryRow(col)
		if err != nil {
			return nil, err
		}
	}
	var items []HistoryItem
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read history line %d: %w", line, err)
		}
		it, err := parse(rec)
		if err != nil {
			return nil, fmt.Errorf("history line %d: %w", line, err)
		}
		items = append(items, it)
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Created.Before(items[j].Created) })
	for i := range items {
		items[i].Number = int64(i + 1)
	}
	return items, nil
}

func field(rec []string, col map[string]int, name string) string {
	i, ok := col[name]
	if !ok || i >= len(rec) {
		return ""
	}
	v := strings.TrimSpace(rec[i])
	if strings.EqualFold(v, "NULL") {
		return ""
	}
	return v
}

func parseHistoryTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("unreadable time %q", s)
}

func parseOptionalFloat(name, s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s %q is not a non-negative number", name, s)
	}
	return v, nil
}

func jiraHistoryRow(col map[string]int) func([]string) (HistoryItem, error) {
	return func(rec []string) (HistoryItem, error) {
		var it HistoryItem
		var err error
		it.ID = field(rec, col, "issue_key")
		if it.ID == "" {
			it.ID = field(rec, col, "id")
		}
		if it.Created, err = parseHistoryTime(field(rec, col, "creation_date")); err != nil || it.Created.IsZero() {
			return it, fmt.Errorf("Creation_Date: %v", orMissing(err))
		}
		if it.Resolved, err = parseHistoryTime(field(rec, col, "resolution_date")); err != nil {
			return it, fmt.Errorf("Resolution_Date: %w", err)
		}
		if it.StoryPoints, err = parseOptionalFloat("Story_Point", field(rec, col, "story_point")); err != nil {
			return it, err
		}
		secs, err := parseOptionalFloat("Timespent", field(rec, col, "timespent"))
		if err != nil {
			return it, err
		}
		it.TrackedHours = secs / 3600
		inProgress, err := parseOptionalFloat("In_Progress_Minutes", field(rec, col, "in_progress_minutes"))
		if err != nil {
			return it, err
		}
		if inProgress > 0 && !it.Resolved.IsZero() {
			it.Started = it.Resolved.Add(-time.Duration(inProgress * float64(time.Minute)))
			if it.Started.Before(it.Created) {
				it.Started = it.Created
			}
		}
		if t := field(rec, col, "type"); t != "" {
			it.Labels = []string{"type/" + strings.ToLower(t)}
		}
		return it, nil
	}
}

func orMissing(err error) error {
	if err == nil {
		return errors.New("missing")
	}
	return err
}

func ownHistoryRow(col map[string]int) (func([]string) (HistoryItem, error), error) {
	for _, need := range []string{"id", "created", "resolved"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("history header has no %q column (own layout needs id, created, resolved; jira-history layout needs Creation_Date)", need)
		}
	}
	return func(rec []string) (HistoryItem, error) {
		var it HistoryItem
		var err error
		it.ID = field(rec, col, "id")
		if it.ID == "" {
			return it, errors.New("id: missing")
		}
		if it.Created, err = parseHistoryTime(field(rec, col, "created")); err != nil || it.Created.IsZero() {
			return it, fmt.Errorf("created: %v", orMissing(err))
		}
		if it.Started, err = parseHistoryTime(field(rec, col, "started")); err != nil {
			return it, fmt.Errorf("started: %w", err)
		}
		if it.Resolved, err = parseHistoryTime(field(rec, col, "resolved")); err != nil {
			return it, fmt.Errorf("resolved: %w", err)
		}
		if !it.Resolved.IsZero() && it.Resolved.Before(it.Created) {
			return it, fmt.Errorf("resolved %s before created %s", it.Resolved, it.Created)
		}
		if err := parseEstimate(field(rec, col, "estimate"), &it); err != nil {
			return it, err
		}
		if it.TrackedHours, err = parseOptionalFloat("spent", field(rec, col, "spent")); err != nil {
			return it, err
		}
		it.Assignee = field(rec, col, "assignee")
		for _, l := range strings.Split(field(rec, col, "labels"), ";") {
			if l = strings.TrimSpace(l); l != "" {
				it.Labels = append(it.Labels, l)
			}
		}
		if s, _, _ := ParseLabels(it.Labels); s != "" && it.Size == "" && it.Hours == 0 && it.StoryPoints == 0 {
			it.Size = s
		}
		return it, nil
	}, nil
}

// parseEstimate reads "est/m" or "m" (a size), "6h" (hours) or "5" (points).
func parseEstimate(s string, it *HistoryItem) error {
	if s == "" {
		return nil
	}
	l := strings.ToLower(s)
	if sz := Size(strings.TrimPrefix(l, "est/")); sz.Valid() {
		it.Size = sz
		return nil
	}
	if h, ok := strings.CutSuffix(l, "h"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(h), 64)
		if err != nil || v <= 0 {
			return fmt.Errorf("estimate %q: hours must be a positive number", s)
		}
		it.Hours = v
		return nil
	}
	v, err := strconv.ParseFloat(l, 64)
	if err != nil || v < 0 {
		return fmt.Errorf("estimate %q is neither a size (est/xs..est/xl), hours (6h) nor story points", s)
	}
	it.StoryPoints = v
	return nil
}

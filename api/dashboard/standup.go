package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/standup"
)

// The standup page renders the standup of record as a report: its sections
// (standup.Report.Sections, the one list the template text, the prose check
// and this page all walk), each entry's subject linked to its page and its
// flags as badges, and the delivered text, whether template or checked
// model prose, folded away below.

type standupData struct {
	Found bool
	Day   string
	Since string
	// Reconstructed: Since is no standup's day but the project as its
	// history shows it then (the first standup).
	Reconstructed bool
	Snapshot      int64
	Written       string
	Sections      []standupSection
	Text          string
}

type standupSection struct {
	Key, Heading, Intro, Empty string
	Entries                    []standupEntry
}

type standupEntry struct {
	Label, Link, Text string
	Flags             []standup.Flag
	Groups            []standupGroup
}

type standupGroup struct {
	Role    string
	Entries []standupEntry
}

func (d *Dashboard) standup(ctx context.Context, p store.Project, _ *snapshot, _ *http.Request) (string, any, error) {
	row, err := store.LatestStandup(ctx, d.cfg.Pool, p.ID)
	if errors.Is(err, store.ErrNotFound) {
		return "Standup", standupData{}, nil
	}
	if err != nil {
		return "", nil, err
	}
	var rep standup.Report
	if err := json.Unmarshal(row.Content, &rep); err != nil {
		return "", nil, fmt.Errorf("decode standup %d: %w", row.ID, err)
	}
	base := d.cfg.Prefix + "/" + p.FullName()
	data := standupData{Found: true, Day: row.Day.Format("Monday 2 January 2006"), Snapshot: row.SnapshotVersion,
		Written: stamp(row.CreatedAt), Text: row.Text}
	if rep.Since != "" {
		data.Since, data.Reconstructed = dayText(rep.Since), rep.Reconstructed
	}
	for _, s := range rep.Sections() {
		sec := standupSection{Key: s.Key, Heading: s.Heading, Intro: s.Intro, Empty: s.Empty}
		for _, e := range s.Entries {
			sec.Entries = append(sec.Entries, standupEntryOf(base, e))
		}
		data.Sections = append(data.Sections, sec)
	}
	return "Standup, " + row.Day.Format("Mon 2 Jan 2006"), data, nil
}

func standupEntryOf(base string, e standup.Entry) standupEntry {
	out := standupEntry{Label: e.Subject.Label(), Text: e.Text, Flags: e.Flags}
	switch e.Subject.Kind {
	case standup.SubjectIssue:
		out.Link = base + "/issues/" + strconv.FormatInt(e.Subject.Issue, 10)
	case standup.SubjectMilestone:
		out.Link = base + "/milestones/" + strconv.FormatInt(e.Subject.Milestone, 10)
	case standup.SubjectPerson:
		out.Link = base + "/people#" + e.Subject.Person
	}
	for _, g := range e.Groups() {
		grp := standupGroup{Role: g.Role}
		for _, sub := range g.Entries {
			grp.Entries = append(grp.Entries, standupEntryOf(base, sub))
		}
		out.Groups = append(out.Groups, grp)
	}
	return out
}

// flagKind maps a standup flag to a badge colour.
func flagKind(kind string) string {
	switch kind {
	case standup.FlagCriticalChain, standup.FlagLate, standup.FlagBlocked:
		return "bad"
	case standup.FlagHardDeadline:
		return "hard"
	}
	return "warn"
}

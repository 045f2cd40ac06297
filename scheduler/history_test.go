package scheduler

import (
	"strings"
	"testing"
	"time"
)

func TestReadHistoryCSVJiraLayout(t *testing.T) {
	in := `ID,Issue_Key,Type,Status,Resolution,Creation_Date,Resolution_Date,Story_Point,Timespent,In_Progress_Minutes,Total_Effort_Minutes,Resolution_Time_Minutes
2,X-2,"New Feature",Closed,Fixed,"2020-01-03 10:00:00","2020-01-10 10:00:00",5,NULL,120,120,100
1,X-1,Bug,Closed,Fixed,"2020-01-01 10:00:00","2020-01-02 10:00:00",NULL,7200,0,0,100
`
	items, err := ReadHistoryCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].ID != "X-1" || items[0].Number != 1 || items[1].Number != 2 {
		t.Fatalf("not sorted by creation and numbered: %+v", items)
	}
	x1, x2 := items[0], items[1]
	if x1.StoryPoints != 0 || x1.TrackedHours != 2 || !x1.Started.IsZero() {
		t.Errorf("X-1: %+v", x1)
	}
	if x2.StoryPoints != 5 || !x2.Started.Equal(time.Date(2020, 1, 10, 8, 0, 0, 0, time.UTC)) || x2.Labels[0] != "type/new feature" {
		t.Errorf("X-2: %+v", x2)
	}
	if got := x2.NominalHours(2); got != 10 {
		t.Errorf("5 points at 2 h: %v", got)
	}
}

func TestReadHistoryCSVOwnLayout(t *testing.T) {
	in := `id,created,resolved,estimate,labels,assignee,started,spent
a,2026-01-05,2026-01-09T12:00:00Z,est/l,area/ui; p/1,ann,2026-01-06 09:00:00,
b,2026-01-06T00:00:00+02:00,,6h,,,,
c,2026-01-07,2026-01-08,3,,,,4.5
d,2026-01-08,2026-01-09,,est/xs;x,,,
`
	items, err := ReadHistoryCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]HistoryItem{}
	for _, it := range items {
		byID[it.ID] = it
	}
	if a := byID["a"]; a.Size != SizeL || a.Assignee != "ann" || len(a.Labels) != 2 || a.Labels[1] != "p/1" || a.Started.Hour() != 9 {
		t.Errorf("a: %+v", a)
	}
	if b := byID["b"]; b.Hours != 6 || !b.Resolved.IsZero() || b.Created.Hour() != 22 {
		t.Errorf("b: %+v", b)
	}
	if c := byID["c"]; c.StoryPoints != 3 || c.TrackedHours != 4.5 {
		t.Errorf("c: %+v", c)
	}
	if d := byID["d"]; d.Size != SizeXS {
		t.Errorf("d takes its size from its est/ label: %+v", d)
	}
}

func TestReadHistoryCSVErrors(t *testing.T) {
	for name, in := range map[string]string{
		"no header":        "",
		"missing column":   "id,created\na,2026-01-01\n",
		"bad time":         "id,created,resolved\na,yesterday,\n",
		"resolved early":   "id,created,resolved\na,2026-01-02,2026-01-01\n",
		"bad estimate":     "id,created,resolved,estimate\na,2026-01-01,,huge\n",
		"jira bad minutes": "Creation_Date,Resolution_Date,In_Progress_Minutes\n2020-01-01,2020-01-02,many\n",
	} {
		if _, err := ReadHistoryCSV(strings.NewReader(in)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

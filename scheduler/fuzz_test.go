package scheduler

import (
	"strings"
	"testing"
)

// FuzzReadHistoryCSV: the backtest reads history CSVs someone exported;
// no file may panic the reader, and what it returns is numbered from 1 in
// creation order.
func FuzzReadHistoryCSV(f *testing.F) {
	f.Add("ID,Issue_Key,Type,Status,Resolution,Creation_Date,Resolution_Date,Story_Point,Timespent,In_Progress_Minutes,Total_Effort_Minutes,Resolution_Time_Minutes\n" +
		"2,X-2,\"New Feature\",Closed,Fixed,\"2020-01-03 10:00:00\",\"2020-01-10 10:00:00\",5,NULL,120,120,100\n")
	f.Add("id,created,resolved,estimate,labels,assignee,started,spent\na,2026-01-05,2026-01-09T12:00:00Z,est/l,area/ui; p/1,ann,2026-01-06 09:00:00,\nb,2026-01-06T00:00:00+02:00,,6h,,,,\n")
	f.Add("id,created,resolved\n,,\n\"unterminated")
	f.Add("id,created,resolved,estimate\nx,2026-01-05,2025-01-01,-3\ny,9999-99-99,,NaN\n")
	f.Fuzz(func(t *testing.T, in string) {
		items, err := ReadHistoryCSV(strings.NewReader(in))
		if err != nil {
			return
		}
		for i, it := range items {
			if it.Number != int64(i+1) {
				t.Fatalf("item %d numbered %d", i, it.Number)
			}
			if i > 0 && it.Created.Before(items[i-1].Created) {
				t.Fatalf("items not in creation order at %d", i)
			}
		}
	})
}

package tools

import (
	"cmp"
	"slices"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// The list views' orders depend only on the snapshot and the mirror, so
// they are built once when either changes and shared by every request;
// a request then filters the presorted lists in one pass and renders only
// the items it shows.

// issueItem is one snapshot issue with what ordering and filtering need.
type issueItem struct {
	st       *scheduler.IssueStatus
	h        *store.IssueHead // nil when the mirror lost the issue
	fc       *scheduler.IssueForecast
	priority int
	closed   time.Time
}

// orders are the presorted lists of one projectView.
type orders struct {
	board map[scheduler.State][]*issueItem
	// byMilestone lists each milestone's issues, open work driving the
	// date first, done last.
	byMilestone map[int64][]*issueItem
}

func (v *projectView) buildOrders() {
	items := make([]issueItem, len(v.Data.Statuses))
	o := orders{board: map[scheduler.State][]*issueItem{}, byMilestone: map[int64][]*issueItem{}}
	for i := range v.Data.Statuses {
		st := &v.Data.Statuses[i]
		it := &items[i]
		*it = issueItem{st: st, h: v.Head[st.Number], fc: v.Forecast[st.Number], priority: scheduler.DefaultPriority}
		if h := it.h; h != nil {
			_, it.priority, _ = scheduler.ParseLabels(h.Labels)
			if h.ClosedAt != nil {
				it.closed = *h.ClosedAt
			}
			if h.Milestone != nil {
				o.byMilestone[*h.Milestone] = append(o.byMilestone[*h.Milestone], it)
			}
		}
		o.board[st.State] = append(o.board[st.State], it)
	}
	for s, col := range o.board {
		if s == scheduler.Done {
			// The most recently finished first.
			slices.SortFunc(col, func(a, b *issueItem) int {
				return cmp.Or(b.closed.Compare(a.closed), cmp.Compare(b.st.Number, a.st.Number))
			})
			continue
		}
		slices.SortFunc(col, func(a, b *issueItem) int {
			return cmp.Or(cmp.Compare(a.priority, b.priority), cmp.Compare(a.st.Number, b.st.Number))
		})
	}
	for _, l := range o.byMilestone {
		slices.SortFunc(l, func(a, b *issueItem) int {
			return cmp.Or(
				cmp.Compare(boolInt(a.st.State == scheduler.Done), boolInt(b.st.State == scheduler.Done)),
				-cmp.Compare(critical(a.fc), critical(b.fc)),
				-cmp.Compare(p80Unix(a.fc), p80Unix(b.fc)),
				cmp.Compare(a.st.Number, b.st.Number))
		})
	}
	v.orders = o
}

func p80Unix(f *scheduler.IssueForecast) int64 {
	if f == nil || f.P80.IsZero() || f.Unschedulable != "" {
		return 0
	}
	return f.P80.Unix()
}

// keep is the request's list filters as a predicate over items.
func (q *query) keep(it *issueItem) bool { return q.matches(it.st, it.h) }

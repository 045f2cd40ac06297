package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/commitea/commitea/store"
)

// The search view: Postgres full-text search over issue titles and bodies
// (web-search syntax: quoted phrases, OR, -word), best match first, with
// the list filters applied in the same query.

// SearchView is the search payload.
type SearchView struct {
	Query  string       `json:"query"`
	Total  int          `json:"total"`
	Issues []SearchItem `json:"issues"`
	Meta
}

// SearchItem is one hit.
type SearchItem struct {
	Issue   int64  `json:"issue"`
	Title   string `json:"title"`
	State   string `json:"state"`
	IsPull  bool   `json:"isPull,omitempty"`
	Snippet string `json:"snippet,omitempty"`
}

func (q *query) search(ctx context.Context) (Answer[any], error) {
	text := strings.TrimSpace(q.f.Query)
	if text == "" {
		return Answer[any]{}, Errorf(CodeInvalidInput, "filters.query", "view search needs filters.query (free text)")
	}
	if len(text) > MaxQueryBytes {
		return Answer[any]{}, Errorf(CodeInvalidInput, "filters.query", "filters.query is %d bytes; keep it under %d", len(text), MaxQueryBytes)
	}
	sq := store.SearchQuery{Text: text, Assignee: q.f.Assignee, Label: q.f.Label, Limit: q.caps.Limit}
	// Lifecycle state and milestone live in the snapshot and mirror heads:
	// they restrict the search to a set of numbers.
	if q.f.State != "" || q.f.MilestoneID != nil {
		sq.Numbers = []int64{}
		for n, h := range q.v.Head {
			if q.matches(q.v.Status[n], h) {
				sq.Numbers = append(sq.Numbers, n)
			}
		}
	}
	hits, total, err := store.SearchIssues(ctx, q.s.Pool, q.v.Project.ID, sq)
	if err != nil {
		return Answer[any]{}, err
	}
	items := make([]SearchItem, len(hits))
	for i, h := range hits {
		state := h.State
		if st := q.v.Status[h.Number]; st != nil {
			state = string(st.State)
		}
		items[i] = SearchItem{Issue: h.Number, Title: h.Title, State: state, IsPull: h.IsPull, Snippet: Truncate(strings.TrimSpace(h.Snippet), MaxSnippetBytes)}
	}
	out := SearchView{Query: text, Total: total}
	out.Issues = List(q.caps, items, "issues", fmt.Sprintf("issues: nothing matches %q%s", text, q.filterWords()))
	if total > len(items) {
		q.caps.Note(fmt.Sprintf("issues: shown the best %d of %d matches", len(items), total))
	}
	out.Meta = q.meta()
	instr := "Name the matching issues by number and title; use view issue for one's details."
	if total == 0 {
		instr = "Nothing matched; say so and suggest other words (search matches whole words in titles and descriptions)."
	}
	return Answer[any]{Data: out, Instruction: instr}, nil
}

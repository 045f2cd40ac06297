package tools

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Caps bounds what one answer carries; it is the one place every cap is
// enforced. Lists are cut at the limit (default DefaultLimit, at most
// MaxLimit; a larger limit is clamped and the instruction says so), long
// text is cut with a visible marker, and an empty list is named in words
// beside it, so a small model never has to read meaning into a bare [].
type Caps struct {
	Limit   int
	clamped int // the limit asked for when it was clamped, else 0
	notes   []string
}

// Limits on lists and text.
const (
	DefaultLimit = 20
	MaxLimit     = 100
	// MaxBodyBytes bounds an issue description; MaxCommentBytes each
	// comment; MaxSnippetBytes search snippets and rationale-like text.
	MaxBodyBytes    = 4000
	MaxCommentBytes = 1000
	MaxSnippetBytes = 300
	// MaxStandupTextBytes bounds a standup's prose; its content holds the
	// numbers.
	MaxStandupTextBytes = 8000
	// MaxQueryBytes bounds search text.
	MaxQueryBytes = 500
	// CommentsShown is how many of the latest comments the issue view
	// carries.
	CommentsShown = 5
)

// NewCaps reads a requested limit: nil means the default; below 1 is
// refused; above MaxLimit is clamped.
func NewCaps(limit *int, field string) (*Caps, error) {
	c := &Caps{Limit: DefaultLimit}
	if limit == nil {
		return c, nil
	}
	switch n := *limit; {
	case n < 1:
		return nil, Errorf(CodeInvalidInput, field, "limit must be at least 1 (default %d, max %d), got %d", DefaultLimit, MaxLimit, n)
	case n > MaxLimit:
		c.Limit, c.clamped = MaxLimit, n
	default:
		c.Limit = n
	}
	return c, nil
}

// List cuts items to the limit. It notes what was left out, or, when there
// is nothing, says so in words (empty: "no issue is in review"). The
// result is never nil, so it encodes as [] rather than null.
func List[T any](c *Caps, items []T, what, empty string) []T {
	if len(items) == 0 {
		c.Note(empty)
		return []T{}
	}
	if len(items) > c.Limit {
		c.Note(fmt.Sprintf("%s: shown %d of %d; narrow with filters or raise limit (max %d)", what, c.Limit, len(items), MaxLimit))
		return items[:c.Limit]
	}
	return items
}

// Note adds a note to the answer.
func (c *Caps) Note(s string) {
	if s != "" {
		c.notes = append(c.notes, s)
	}
}

// Notes are what the caps cut or found empty, for the payload's notes field.
func (c *Caps) Notes() []string { return c.notes }

// Instruction finishes an instruction with the clamp, if any.
func (c *Caps) Instruction(s string) string {
	if c.clamped > 0 {
		s += fmt.Sprintf(" The limit %d was clamped to the maximum %d.", c.clamped, MaxLimit)
	}
	return s
}

// Truncate cuts s to at most max bytes on a rune boundary and marks the
// cut: "[truncated: shown N of M bytes]".
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimRightFunc(s[:n], func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' }) +
		fmt.Sprintf(" [truncated: shown %d of %d bytes]", n, len(s))
}

func sortStrings(s []string) { slices.Sort(s) }

// Take is List over the items keep accepts, without building the filtered
// list: it keeps the first Limit matches in order and counts the rest, so
// a view over presorted thousands costs one pass and Limit results. It
// returns the kept items and how many matched in all.
func Take[T any](c *Caps, items []T, keep func(T) bool, what, empty string) ([]T, int) {
	out := make([]T, 0, min(c.Limit, len(items)))
	total := 0
	for _, it := range items {
		if keep != nil && !keep(it) {
			continue
		}
		total++
		if len(out) < c.Limit {
			out = append(out, it)
		}
	}
	switch {
	case total == 0:
		c.Note(empty)
	case total > len(out):
		c.Note(fmt.Sprintf("%s: shown %d of %d; narrow with filters or raise limit (max %d)", what, len(out), total, MaxLimit))
	}
	return out, total
}

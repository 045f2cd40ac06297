package prose

import "strings"

// Reasons a claim is refused.
const (
	// ReasonUngrounded: nothing in the data has the value.
	ReasonUngrounded = "ungrounded"
	// ReasonWrongSubject: the data has the value, but not for the subject
	// the text says it of.
	ReasonWrongSubject = "wrong_subject"
	// ReasonStatus: a status word or a lateness the chance, slack and
	// dates do not bear out.
	ReasonStatus = "status"
	// ReasonUnknownIssue: an issue number the project does not have.
	ReasonUnknownIssue = "unknown_issue"
)

// Problem is one refused claim.
type Problem struct {
	Text string
	// Subject is what the claim was said of ("#432", "v1.0", "@bruno"),
	// or "" for the whole.
	Subject string
	Reason  string
}

func (p Problem) String() string {
	s := p.Text
	if p.Subject != "" {
		s += " (of " + p.Subject + ")"
	}
	switch p.Reason {
	case ReasonStatus:
		s += ": not what the forecast says"
	case ReasonUnknownIssue:
		s += ": no such issue"
	case ReasonWrongSubject:
		s += ": another subject's value"
	}
	return s
}

// UngroundedError lists what a text states that its data does not.
type UngroundedError struct {
	// Tokens are the refused claims as written.
	Tokens   []string
	Problems []Problem
}

func (e *UngroundedError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "prose states what the data does not: " + strings.Join(parts, ", ")
}

// Reason is the reason of the first refused claim.
func (e *UngroundedError) Reason() string {
	if len(e.Problems) == 0 {
		return ReasonUngrounded
	}
	return e.Problems[0].Reason
}

// Check returns nil when every claim of text is a value of its subject
// (see the package comment), and an *UngroundedError naming the rest
// otherwise.
func Check(text string, f *Facts) error {
	c := f.newCheck(text)
	var probs []Problem
	for _, cl := range c.claims {
		if p, ok := c.verify(cl); !ok {
			probs = append(probs, p)
		}
	}
	if len(probs) == 0 {
		return nil
	}
	e := &UngroundedError{Problems: probs}
	for _, p := range probs {
		e.Tokens = append(e.Tokens, p.Text)
	}
	return e
}

// Missing returns the refs that text never mentions, by number, title or
// login, in the order given.
func (f *Facts) Missing(text string, refs []Ref) []Ref {
	c := f.newCheck(text)
	seen := map[*subject]bool{}
	for _, m := range c.mentions {
		if m.subj != nil && !m.pronoun {
			seen[m.subj] = true
		}
	}
	var out []Ref
	for _, r := range refs {
		if s := f.lookup(r); s == nil || !seen[s] {
			out = append(out, r)
		}
	}
	return out
}

func (f *Facts) lookup(r Ref) *subject {
	switch r.Kind {
	case KindIssue:
		return f.issues[r.Number]
	case KindPerson:
		return f.people[strings.ToLower(r.Name)]
	case KindMilestone:
		for _, m := range f.milestones {
			if strings.EqualFold(m.title, r.Name) {
				return m
			}
		}
	}
	return nil
}

package giteafake

import (
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

//go:embed testdata/api/*.json
var apiFiles embed.FS

// obj is a JSON object kept in the recorded shape, so responses carry every
// field the real server sends, not only those a client models.
type obj = map[string]any

// issueState is the mutable core of an issue or pull request; the recorded
// object is the template the response is rendered from.
type issueState struct {
	number, id int64
	title      string
	body       string
	state      string
	labels     []int64
	milestone  int64
	assignees  []string
	createdAt  time.Time
	updatedAt  time.Time
	closedAt   *time.Time
	dueDate    *time.Time
	comments   int
	tmpl       obj // issue form
	pull       obj // pull form, nil for a plain issue
}

type depRef struct {
	owner, repo string
	index       int64
}

type commentState struct {
	issue int64
	o     obj
}

type timeState struct {
	issue int64
	o     obj
}

// state is the fake's repository content. Guarded by Server.mu.
type state struct {
	owner, name string
	repo        obj
	users       map[string]obj // login -> user
	issues      map[int64]*issueState
	labels      map[int64]obj
	milestones  map[int64]obj
	deps        map[int64][]depRef // issue -> what it depends on
	comments    []*commentState
	times       []*timeState
	timelines   map[int64][]obj
	timelineTpl obj

	nextIssueNumber, nextIssueID, nextCommentID, nextLabelID, nextMilestoneID, nextTimeID int64
}

func readAPI(name string, out any) error {
	data, err := apiFiles.ReadFile("testdata/api/" + name)
	if err != nil {
		return fmt.Errorf("read recorded %s: %w", name, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode recorded %s: %w", name, err)
	}
	return nil
}

// seed loads the repository as the recorded scenario left it.
func seed() (*state, error) {
	s := &state{
		users:      map[string]obj{},
		issues:     map[int64]*issueState{},
		labels:     map[int64]obj{},
		milestones: map[int64]obj{},
		deps:       map[int64][]depRef{},
		timelines:  map[int64][]obj{},
	}
	if err := readAPI("repo.json", &s.repo); err != nil {
		return nil, err
	}
	s.owner = s.repo["owner"].(obj)["login"].(string)
	s.name = s.repo["name"].(string)
	var ceo obj
	if err := readAPI("user.json", &ceo); err != nil {
		return nil, err
	}
	s.users["ceo"] = ceo
	dev := clone(ceo)
	dev["id"], dev["login"], dev["username"], dev["email"], dev["is_admin"] = float64(2), "dev", "dev", "dev@example.com", false
	s.users["dev"] = dev

	var issues []obj
	if err := readAPI("issues-all.json", &issues); err != nil {
		return nil, err
	}
	var pr obj
	if err := readAPI("issue-4-as-issue.json", &pr); err != nil {
		return nil, err
	}
	issues = append(issues, pr)
	var pulls []obj
	if err := readAPI("pulls-all.json", &pulls); err != nil {
		return nil, err
	}
	for _, o := range issues {
		is := issueFromObj(o)
		s.issues[is.number] = is
		s.nextIssueNumber = max(s.nextIssueNumber, is.number+1)
		s.nextIssueID = max(s.nextIssueID, is.id+1)
	}
	for _, p := range pulls {
		n := int64(p["number"].(float64))
		if is := s.issues[n]; is != nil {
			is.pull = p
		}
	}

	var labels []obj
	if err := readAPI("labels.json", &labels); err != nil {
		return nil, err
	}
	for _, l := range labels {
		id := int64(l["id"].(float64))
		s.labels[id] = l
		s.nextLabelID = max(s.nextLabelID, id+1)
	}
	var milestones []obj
	if err := readAPI("milestones.json", &milestones); err != nil {
		return nil, err
	}
	for _, m := range milestones {
		id := int64(m["id"].(float64))
		s.milestones[id] = m
		s.nextMilestoneID = max(s.nextMilestoneID, id+1)
	}

	var deps2 []obj
	if err := readAPI("issue-2-dependencies.json", &deps2); err != nil {
		return nil, err
	}
	for _, d := range deps2 {
		s.deps[2] = append(s.deps[2], depRef{owner: s.owner, repo: s.name, index: int64(d["number"].(float64))})
	}

	var comments []obj
	if err := readAPI("repo-comments.json", &comments); err != nil {
		return nil, err
	}
	for _, c := range comments {
		n := numberFromURL(str(c["issue_url"]))
		if n == 0 {
			n = numberFromURL(str(c["pull_request_url"]))
		}
		s.comments = append(s.comments, &commentState{issue: n, o: c})
		s.nextCommentID = max(s.nextCommentID, int64(c["id"].(float64))+1)
	}
	var times []obj
	if err := readAPI("repo-times.json", &times); err != nil {
		return nil, err
	}
	for _, t := range times {
		n := int64(t["issue"].(obj)["number"].(float64))
		s.times = append(s.times, &timeState{issue: n, o: t})
		s.nextTimeID = max(s.nextTimeID, int64(t["id"].(float64))+1)
	}
	for n, name := range map[int64]string{1: "issue-1-timeline.json", 2: "issue-2-timeline.json", 4: "pull-4-timeline.json"} {
		var tl []obj
		if err := readAPI(name, &tl); err != nil {
			return nil, err
		}
		s.timelines[n] = tl
		for _, e := range tl {
			s.nextCommentID = max(s.nextCommentID, int64(e["id"].(float64))+1)
			if e["type"] == "start_tracking" && s.timelineTpl == nil {
				s.timelineTpl = clone(e)
			}
		}
	}
	if s.timelineTpl == nil {
		return nil, fmt.Errorf("recorded timeline lacks a start_tracking entry to use as template")
	}
	return s, nil
}

func issueFromObj(o obj) *issueState {
	is := &issueState{
		number:    int64(o["number"].(float64)),
		id:        int64(o["id"].(float64)),
		title:     str(o["title"]),
		body:      str(o["body"]),
		state:     str(o["state"]),
		createdAt: parseTime(o["created_at"]),
		updatedAt: parseTime(o["updated_at"]),
		closedAt:  parseTimePtr(o["closed_at"]),
		dueDate:   parseTimePtr(o["due_date"]),
		comments:  int(num(o["comments"])),
		tmpl:      o,
	}
	if ls, ok := o["labels"].([]any); ok {
		for _, l := range ls {
			is.labels = append(is.labels, int64(l.(obj)["id"].(float64)))
		}
	}
	if m, ok := o["milestone"].(obj); ok {
		is.milestone = int64(m["id"].(float64))
	}
	if as, ok := o["assignees"].([]any); ok {
		for _, a := range as {
			is.assignees = append(is.assignees, a.(obj)["login"].(string))
		}
	}
	return is
}

// renderIssue is the issue in the issues API form.
func (s *state) renderIssue(is *issueState) obj {
	o := clone(is.tmpl)
	s.fillCommon(o, is)
	if is.pull != nil {
		pr, _ := o["pull_request"].(obj)
		if pr == nil {
			pr = obj{}
		}
		pr["merged"] = is.pull["merged"]
		pr["merged_at"] = is.pull["merged_at"]
		o["pull_request"] = pr
	}
	return o
}

// renderPull is the pull request in the pulls API form.
func (s *state) renderPull(is *issueState) obj {
	o := clone(is.pull)
	s.fillCommon(o, is)
	return o
}

func (s *state) fillCommon(o obj, is *issueState) {
	o["number"] = is.number
	o["title"] = is.title
	o["body"] = is.body
	o["state"] = is.state
	o["labels"] = s.labelObjs(is.labels)
	o["milestone"] = nil
	if m, ok := s.milestones[is.milestone]; ok {
		o["milestone"] = clone(m)
	}
	o["assignee"] = nil
	o["assignees"] = nil
	if len(is.assignees) > 0 {
		as := make([]any, 0, len(is.assignees))
		for _, a := range is.assignees {
			as = append(as, clone(s.users[a]))
		}
		o["assignees"] = as
		o["assignee"] = as[0]
	}
	o["created_at"] = fmtTime(is.createdAt)
	o["updated_at"] = fmtTime(is.updatedAt)
	o["closed_at"] = fmtTimePtr(is.closedAt)
	o["due_date"] = fmtTimePtr(is.dueDate)
	o["comments"] = is.comments
}

// labelObjs renders label ids sorted by name, as Gitea does.
func (s *state) labelObjs(ids []int64) []any {
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		if l, ok := s.labels[id]; ok {
			out = append(out, clone(l))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return str(out[i].(obj)["name"]) < str(out[j].(obj)["name"])
	})
	return out
}

// exclusiveScope is Gitea's label.ExclusiveScope: the name before the last
// "/" of an exclusive label, "" otherwise.
func exclusiveScope(l obj) string {
	if ex, _ := l["exclusive"].(bool); !ex {
		return ""
	}
	name := str(l["name"])
	i := strings.LastIndex(name, "/")
	if i <= 0 || i == len(name)-1 {
		return ""
	}
	return name[:i]
}

// addLabel adds label id to the issue, dropping the other labels of its
// exclusive scope first. It returns the ids removed and whether id was new.
func (s *state) addLabel(is *issueState, id int64) (removed []int64, added bool) {
	if slices.Contains(is.labels, id) {
		return nil, false
	}
	if scope := exclusiveScope(s.labels[id]); scope != "" {
		kept := is.labels[:0:0]
		for _, other := range is.labels {
			if exclusiveScope(s.labels[other]) == scope {
				removed = append(removed, other)
				continue
			}
			kept = append(kept, other)
		}
		is.labels = kept
	}
	is.labels = append(is.labels, id)
	return removed, true
}

// timelineEntry builds a timeline comment in the recorded shape.
func (s *state) timelineEntry(is *issueState, typ string, actor obj, at time.Time, fields obj) obj {
	e := clone(s.timelineTpl)
	e["id"] = s.nextCommentID
	s.nextCommentID++
	e["type"] = typ
	e["user"] = clone(actor)
	e["created_at"] = fmtTime(at)
	e["updated_at"] = fmtTime(at)
	e["body"] = ""
	base := str(s.repo["html_url"])
	kind := "issues"
	if is.pull != nil {
		kind = "pulls"
	}
	page := fmt.Sprintf("%s/%s/%d", base, kind, is.number)
	e["html_url"] = fmt.Sprintf("%s#issuecomment-%v", page, e["id"])
	if is.pull != nil {
		e["pull_request_url"], e["issue_url"] = page, ""
	} else {
		e["pull_request_url"], e["issue_url"] = "", page
	}
	for k, v := range fields {
		e[k] = v
	}
	s.timelines[is.number] = append(s.timelines[is.number], e)
	return e
}

// clone deep-copies a JSON-shaped object, so a response or a webhook never
// shares maps with the state. A plain recursive copy: the fake renders
// thousands of objects when a generated project is imported, and a JSON
// round trip per object made that slow.
func clone(o obj) obj {
	if o == nil {
		return nil
	}
	return copyValue(o).(obj)
}

func copyValue(v any) any {
	switch x := v.(type) {
	case obj:
		out := make(obj, len(x))
		for k, e := range x {
			out[k] = copyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// num reads a JSON number, whether decoded (float64) or set by the fake.
func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case int:
		return float64(x)
	}
	return 0
}

func parseTime(v any) time.Time {
	t, _ := time.Parse(time.RFC3339, str(v))
	return t
}

func parseTimePtr(v any) *time.Time {
	if str(v) == "" {
		return nil
	}
	t := parseTime(v)
	return &t
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func fmtTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return fmtTime(*t)
}

func numberFromURL(u string) int64 {
	u = strings.TrimRight(u, "/")
	i := strings.LastIndexByte(u, '/')
	if i < 0 {
		return 0
	}
	var n int64
	if _, err := fmt.Sscan(u[i+1:], &n); err != nil {
		return 0
	}
	return n
}

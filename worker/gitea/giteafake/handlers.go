package giteafake

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

func (s *Server) routeIssues(method string, rest []string, q url.Values, body []byte) reply {
	base := "/repos/" + s.st.owner + "/" + s.st.name + "/issues"
	if len(rest) == 0 {
		switch method {
		case http.MethodGet:
			return s.listIssues(base, q)
		case http.MethodPost:
			return s.createIssue(body)
		}
		return s.replyErr(s.notFound())
	}
	if rest[0] == "comments" {
		switch {
		case len(rest) == 1 && method == http.MethodGet:
			return s.listComments(base+"/comments", q, 0)
		case len(rest) == 2 && method == http.MethodPatch:
			return s.editComment(rest[1], body)
		case len(rest) == 2 && method == http.MethodDelete:
			return s.deleteComment(rest[1])
		}
		return s.replyErr(s.notFound())
	}
	n, err := strconv.ParseInt(rest[0], 10, 64)
	is := s.st.issues[n]
	if err != nil || is == nil {
		return s.replyErr(s.notFound())
	}
	path := fmt.Sprintf("%s/%d", base, n)
	if len(rest) == 1 {
		switch method {
		case http.MethodGet:
			return reply{status: http.StatusOK, body: s.st.renderIssue(is)}
		case http.MethodPatch:
			return s.editIssue(is, body, false)
		}
		return s.replyErr(s.notFound())
	}
	switch rest[1] {
	case "labels":
		if len(rest) == 3 && method == http.MethodDelete {
			return s.removeLabel(is, rest[2])
		}
		if len(rest) != 2 {
			break
		}
		switch method {
		case http.MethodGet:
			return reply{status: http.StatusOK, body: s.st.labelObjs(is.labels)}
		case http.MethodPost:
			return s.setLabels(is, body, false)
		case http.MethodPut:
			return s.setLabels(is, body, true)
		case http.MethodDelete:
			return s.clearLabels(is)
		}
	case "comments":
		switch method {
		case http.MethodGet:
			return s.listComments(path+"/comments", q, n)
		case http.MethodPost:
			return s.createComment(is, body)
		}
	case "timeline":
		if method == http.MethodGet {
			return s.listTimeline(path+"/timeline", q, is)
		}
	case "dependencies", "blocks":
		blocks := rest[1] == "blocks"
		switch method {
		case http.MethodGet:
			return s.listDeps(path+"/"+rest[1], q, is, blocks)
		case http.MethodPost:
			return s.changeDep(is, body, blocks, true)
		case http.MethodDelete:
			return s.changeDep(is, body, blocks, false)
		}
	case "times":
		switch method {
		case http.MethodGet:
			return s.listTimes(q, n)
		case http.MethodPost:
			return s.addTime(is, body)
		}
	}
	return s.replyErr(s.notFound())
}

func (s *Server) routePulls(method string, rest []string, q url.Values, body []byte) reply {
	base := "/repos/" + s.st.owner + "/" + s.st.name + "/pulls"
	if len(rest) == 0 && method == http.MethodGet {
		state := q.Get("state")
		if state == "" {
			state = "open"
		}
		var items []any
		for _, is := range s.sortedIssues() {
			if is.pull != nil && (state == "all" || state == is.state) {
				items = append(items, is)
			}
		}
		return s.renderPage(s.page(base, q, items), s.st.renderPull)
	}
	if len(rest) == 1 {
		n, err := strconv.ParseInt(rest[0], 10, 64)
		is := s.st.issues[n]
		if err != nil || is == nil || is.pull == nil {
			return s.replyErr(s.notFound())
		}
		switch method {
		case http.MethodGet:
			return reply{status: http.StatusOK, body: s.st.renderPull(is)}
		case http.MethodPatch:
			return s.editIssue(is, body, true)
		}
	}
	return s.replyErr(s.notFound())
}

func (s *Server) replyErr(status int, body any) reply { return reply{status: status, body: body} }

// sortedIssues lists issues newest first, the API's default order.
func (s *Server) sortedIssues() []*issueState {
	out := make([]*issueState, 0, len(s.st.issues))
	for _, is := range s.st.issues {
		out = append(out, is)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].number > out[j].number })
	return out
}

func (s *Server) listIssues(path string, q url.Values) reply {
	since, err := sinceFilter(q)
	if err != nil {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "invalid since: "+err.Error()))
	}
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	typ := q.Get("type")
	var items []any
	for _, is := range s.sortedIssues() {
		if state != "all" && state != is.state {
			continue
		}
		if (typ == "issues" && is.pull != nil) || (typ == "pulls" && is.pull == nil) {
			continue
		}
		if !since.IsZero() && is.updatedAt.Before(since) {
			continue
		}
		items = append(items, is)
	}
	return s.renderPage(s.page(path, q, items), s.st.renderIssue)
}

// renderPage renders the issues of a page of *issueState: rendering only
// the page keeps listing a 5,000-issue project page by page linear.
func (s *Server) renderPage(rep reply, render func(*issueState) obj) reply {
	page := rep.body.([]any)
	out := make([]any, len(page))
	for i, v := range page {
		out[i] = render(v.(*issueState))
	}
	rep.body = out
	return rep
}

func (s *Server) createIssue(body []byte) reply {
	var in struct {
		Title     string   `json:"title"`
		Body      string   `json:"body"`
		Assignees []string `json:"assignees"`
		Milestone int64    `json:"milestone"`
		Labels    []int64  `json:"labels"`
		Closed    bool     `json:"closed"`
	}
	if err := decodeBody(body, &in); err != nil || strings.TrimSpace(in.Title) == "" {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "[Title]: Required"))
	}
	for _, a := range in.Assignees {
		if _, ok := s.st.users[a]; !ok {
			return s.replyErr(s.apiError(http.StatusUnprocessableEntity, fmt.Sprintf("user does not exist [name: %s]", a)))
		}
	}
	if in.Milestone != 0 {
		if _, ok := s.st.milestones[in.Milestone]; !ok {
			return s.replyErr(s.apiError(http.StatusUnprocessableEntity, fmt.Sprintf("milestone does not exist [id: %d]", in.Milestone)))
		}
	}
	now := s.now()
	tmpl := clone(s.st.issues[1].tmpl)
	n, id := s.st.nextIssueNumber, s.st.nextIssueID
	s.st.nextIssueNumber++
	s.st.nextIssueID++
	tmpl["id"] = id
	tmpl["url"] = fmt.Sprintf("%s/api/v1/repos/%s/%s/issues/%d", s.URL, s.st.owner, s.st.name, n)
	tmpl["html_url"] = fmt.Sprintf("%s/issues/%d", str(s.st.repo["html_url"]), n)
	tmpl["pull_request"] = nil
	is := &issueState{number: n, id: id, title: in.Title, body: in.Body, state: "open",
		milestone: in.Milestone, createdAt: now, updatedAt: now, tmpl: tmpl}
	for _, l := range in.Labels {
		if _, ok := s.st.labels[l]; ok {
			s.st.addLabel(is, l)
		}
	}
	is.assignees = sortedUnique(in.Assignees)
	if in.Closed {
		is.state, is.closedAt = "closed", &now
	}
	s.st.issues[n] = is
	s.hookIssue(is, "opened", nil, nil)
	return reply{status: http.StatusCreated, body: s.st.renderIssue(is)}
}

// editIssue applies PATCH /issues/{n} (or /pulls/{n} when asPull) and fires
// the webhooks Gitea fires, one per aspect changed.
func (s *Server) editIssue(is *issueState, body []byte, asPull bool) reply {
	var in struct {
		Title        *string    `json:"title"`
		Body         *string    `json:"body"`
		State        *string    `json:"state"`
		Milestone    *int64     `json:"milestone"`
		Assignees    *[]string  `json:"assignees"`
		DueDate      *time.Time `json:"due_date"`
		UnsetDueDate *bool      `json:"unset_due_date"`
	}
	if err := decodeBody(body, &in); err != nil {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "invalid body: "+err.Error()))
	}
	if in.State != nil && *in.State != "open" && *in.State != "closed" {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "[State]: invalid"))
	}
	if in.Milestone != nil && *in.Milestone != 0 {
		if _, ok := s.st.milestones[*in.Milestone]; !ok {
			return s.replyErr(s.apiError(http.StatusUnprocessableEntity, fmt.Sprintf("milestone does not exist [id: %d]", *in.Milestone)))
		}
	}
	if in.Assignees != nil {
		for _, a := range *in.Assignees {
			if _, ok := s.st.users[a]; !ok {
				return s.replyErr(s.apiError(http.StatusUnprocessableEntity, fmt.Sprintf("user does not exist [name: %s]", a)))
			}
		}
	}
	now := s.now()
	actor := s.st.users["ceo"]
	// Gitea ignores an empty title (the SDK sends "title": "" for "leave").
	if in.Title != nil && *in.Title != "" && *in.Title != is.title {
		old := is.title
		is.title, is.updatedAt = *in.Title, now
		s.st.timelineEntry(is, "change_title", actor, now, obj{"old_title": old, "new_title": is.title})
		s.hookIssue(is, "edited", obj{"title": obj{"from": old}}, nil)
	}
	if in.Body != nil && *in.Body != is.body {
		old := is.body
		is.body, is.updatedAt = *in.Body, now
		s.hookIssue(is, "edited", obj{"body": obj{"from": old}}, nil)
	}
	if in.DueDate != nil {
		d := in.DueDate.UTC()
		is.dueDate, is.updatedAt = &d, now
		s.st.timelineEntry(is, "added_deadline", actor, now, obj{"body": d.Format("2006-01-02")})
	}
	if in.UnsetDueDate != nil && *in.UnsetDueDate && is.dueDate != nil {
		s.st.timelineEntry(is, "removed_deadline", actor, now, obj{"body": is.dueDate.Format("2006-01-02")})
		is.dueDate, is.updatedAt = nil, now
	}
	if in.Milestone != nil && *in.Milestone != is.milestone {
		old := is.milestone
		is.milestone, is.updatedAt = *in.Milestone, now
		fields := obj{"old_milestone": nil, "milestone": nil}
		if m, ok := s.st.milestones[old]; ok {
			fields["old_milestone"] = clone(m)
		}
		if m, ok := s.st.milestones[is.milestone]; ok {
			fields["milestone"] = clone(m)
		}
		s.st.timelineEntry(is, "milestone", actor, now, fields)
		if is.milestone == 0 {
			// Gitea's demilestoned payload still carries the removed milestone.
			s.hookIssue(is, "demilestoned", nil, func(o obj) {
				if m, ok := s.st.milestones[old]; ok {
					o["milestone"] = clone(m)
				}
			})
		} else {
			s.hookIssue(is, "milestoned", nil, nil)
		}
	}
	if in.Assignees != nil {
		want := sortedUnique(*in.Assignees)
		var added, removed []string
		for _, a := range want {
			if !slices.Contains(is.assignees, a) {
				added = append(added, a)
			}
		}
		for _, a := range is.assignees {
			if !slices.Contains(want, a) {
				removed = append(removed, a)
			}
		}
		// Gitea applies removals then additions, one webhook per user.
		for _, a := range removed {
			is.assignees = slices.DeleteFunc(is.assignees, func(x string) bool { return x == a })
			is.updatedAt = now
			s.st.timelineEntry(is, "assignees", actor, now, obj{"assignee": clone(s.st.users[a]), "removed_assignee": true})
			s.hookIssue(is, "unassigned", nil, nil)
		}
		for _, a := range added {
			is.assignees = sortedUnique(append(is.assignees, a))
			is.updatedAt = now
			s.st.timelineEntry(is, "assignees", actor, now, obj{"assignee": clone(s.st.users[a])})
			s.hookIssue(is, "assigned", nil, nil)
		}
	}
	if in.State != nil && *in.State != is.state {
		is.state, is.updatedAt = *in.State, now
		if is.state == "closed" {
			is.closedAt = &now
			s.st.timelineEntry(is, "close", actor, now, nil)
			s.hookIssue(is, "closed", nil, nil)
		} else {
			is.closedAt = nil
			s.st.timelineEntry(is, "reopen", actor, now, nil)
			s.hookIssue(is, "reopened", nil, nil)
		}
	}
	if asPull {
		return reply{status: http.StatusCreated, body: s.st.renderPull(is)}
	}
	return reply{status: http.StatusCreated, body: s.st.renderIssue(is)}
}

// labelRefs reads {"labels": [...]} where entries are ids or names (Gitea
// 1.22 accepts both); unknown ones are ignored as Gitea does.
func (s *Server) labelRefs(body []byte) ([]int64, error) {
	var in struct {
		Labels []any `json:"labels"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, err
	}
	var ids []int64
	for _, v := range in.Labels {
		switch x := v.(type) {
		case float64:
			if _, ok := s.st.labels[int64(x)]; ok {
				ids = append(ids, int64(x))
			}
		case string:
			for id, l := range s.st.labels {
				if str(l["name"]) == x {
					ids = append(ids, id)
					break
				}
			}
		}
	}
	return ids, nil
}

func (s *Server) setLabels(is *issueState, body []byte, replace bool) reply {
	ids, err := s.labelRefs(body)
	if err != nil {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "invalid body: "+err.Error()))
	}
	now := s.now()
	actor := s.st.users["ceo"]
	before := slices.Clone(is.labels)
	if replace {
		is.labels = nil
	}
	var removed, added []int64
	for _, id := range ids {
		r, ok := s.st.addLabel(is, id)
		removed = append(removed, r...)
		if ok {
			added = append(added, id)
		}
	}
	if replace {
		added, removed = nil, nil
		for _, id := range is.labels {
			if !slices.Contains(before, id) {
				added = append(added, id)
			}
		}
		for _, id := range before {
			if !slices.Contains(is.labels, id) {
				removed = append(removed, id)
			}
		}
	}
	for _, id := range removed {
		s.st.timelineEntry(is, "label", actor, now, obj{"label": clone(s.st.labels[id])})
	}
	for _, id := range added {
		s.st.timelineEntry(is, "label", actor, now, obj{"label": clone(s.st.labels[id]), "body": "1"})
	}
	if len(added)+len(removed) > 0 {
		is.updatedAt = now
	}
	// Gitea sends label_updated even when the set did not change.
	s.hookIssue(is, "label_updated", nil, nil)
	return reply{status: http.StatusOK, body: s.st.labelObjs(is.labels)}
}

func (s *Server) removeLabel(is *issueState, idText string) reply {
	id, err := strconv.ParseInt(idText, 10, 64)
	l, ok := s.st.labels[id]
	if err != nil || !ok {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "label does not exist"))
	}
	if slices.Contains(is.labels, id) {
		now := s.now()
		is.labels = slices.DeleteFunc(is.labels, func(x int64) bool { return x == id })
		is.updatedAt = now
		s.st.timelineEntry(is, "label", s.st.users["ceo"], now, obj{"label": clone(l)})
		s.hookIssue(is, "label_updated", nil, nil)
	}
	return reply{status: http.StatusNoContent}
}

func (s *Server) clearLabels(is *issueState) reply {
	old := slices.Clone(is.labels)
	now := s.now()
	for _, id := range old {
		s.st.timelineEntry(is, "label", s.st.users["ceo"], now, obj{"label": clone(s.st.labels[id])})
	}
	is.labels = nil
	is.updatedAt = now
	// Gitea's label_cleared payload still lists the labels just removed.
	s.hookIssue(is, "label_cleared", nil, func(o obj) { o["labels"] = s.st.labelObjs(old) })
	return reply{status: http.StatusNoContent}
}

func (s *Server) routeLabels(method string, rest []string, q url.Values, body []byte) reply {
	base := "/repos/" + s.st.owner + "/" + s.st.name + "/labels"
	switch {
	case len(rest) == 0 && method == http.MethodGet:
		ls := make([]any, 0, len(s.st.labels))
		for _, l := range s.st.labels {
			ls = append(ls, clone(l))
		}
		sort.SliceStable(ls, func(i, j int) bool {
			a, b := ls[i].(obj), ls[j].(obj)
			if str(a["name"]) != str(b["name"]) {
				return str(a["name"]) < str(b["name"])
			}
			return num(a["id"]) < num(b["id"])
		})
		return s.page(base, q, ls)
	case len(rest) == 0 && method == http.MethodPost:
		var in struct {
			Name        string `json:"name"`
			Color       string `json:"color"`
			Exclusive   bool   `json:"exclusive"`
			Description string `json:"description"`
		}
		if err := decodeBody(body, &in); err != nil || in.Name == "" {
			return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "[Name]: Required"))
		}
		color := strings.ToLower(strings.TrimPrefix(in.Color, "#"))
		if _, err := strconv.ParseUint(color, 16, 32); err != nil || len(color) != 6 {
			return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "invalid color"))
		}
		id := s.st.nextLabelID
		s.st.nextLabelID++
		l := obj{"id": float64(id), "name": in.Name, "exclusive": in.Exclusive, "is_archived": false,
			"color": color, "description": in.Description,
			"url": fmt.Sprintf("%s/api/v1%s/%d", s.URL, base, id)}
		s.st.labels[id] = l
		return reply{status: http.StatusCreated, body: clone(l)}
	case len(rest) == 1 && method == http.MethodGet:
		id, _ := strconv.ParseInt(rest[0], 10, 64)
		if l, ok := s.st.labels[id]; ok {
			return reply{status: http.StatusOK, body: clone(l)}
		}
	}
	return s.replyErr(s.notFound())
}

func (s *Server) routeMilestones(method string, rest []string, q url.Values, body []byte) reply {
	base := "/repos/" + s.st.owner + "/" + s.st.name + "/milestones"
	switch {
	case len(rest) == 0 && method == http.MethodGet:
		state := q.Get("state")
		if state == "" {
			state = "open"
		}
		var ids []int64
		for id := range s.st.milestones {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		var ms []any
		for _, id := range ids {
			m := s.st.milestones[id]
			if state == "all" || str(m["state"]) == state {
				ms = append(ms, clone(m))
			}
		}
		return s.page(base, q, ms)
	case len(rest) == 0 && method == http.MethodPost:
		var in struct {
			Title       string     `json:"title"`
			Description string     `json:"description"`
			DueOn       *time.Time `json:"due_on"`
		}
		if err := decodeBody(body, &in); err != nil || in.Title == "" {
			return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "[Title]: Required"))
		}
		id := s.st.nextMilestoneID
		s.st.nextMilestoneID++
		now := fmtTime(s.now())
		m := obj{"id": float64(id), "title": in.Title, "description": in.Description, "state": "open",
			"open_issues": 0, "closed_issues": 0, "created_at": now, "updated_at": now, "closed_at": nil, "due_on": nil}
		if in.DueOn != nil {
			m["due_on"] = fmtTime(*in.DueOn)
		}
		s.st.milestones[id] = m
		return reply{status: http.StatusCreated, body: clone(m)}
	case len(rest) == 1:
		id, _ := strconv.ParseInt(rest[0], 10, 64)
		m, ok := s.st.milestones[id]
		if !ok {
			break
		}
		if method == http.MethodGet {
			return reply{status: http.StatusOK, body: clone(m)}
		}
		if method != http.MethodPatch {
			break
		}
		var in struct {
			Title       *string    `json:"title"`
			Description *string    `json:"description"`
			State       *string    `json:"state"`
			DueOn       *time.Time `json:"due_on"`
		}
		if err := decodeBody(body, &in); err != nil {
			return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "invalid body: "+err.Error()))
		}
		now := fmtTime(s.now())
		if in.Title != nil && *in.Title != "" { // Gitea ignores an empty title
			m["title"] = *in.Title
		}
		if in.Description != nil {
			m["description"] = *in.Description
		}
		if in.DueOn != nil {
			m["due_on"] = fmtTime(*in.DueOn)
		}
		if in.State != nil && *in.State != str(m["state"]) {
			m["state"] = *in.State
			m["closed_at"] = nil
			if *in.State == "closed" {
				m["closed_at"] = now
			}
		}
		m["updated_at"] = now
		// Gitea sends no webhook for milestone edits.
		return reply{status: http.StatusOK, body: clone(m)}
	}
	return s.replyErr(s.notFound())
}

func (s *Server) listComments(path string, q url.Values, issue int64) reply {
	since, err := sinceFilter(q)
	if err != nil {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "invalid since: "+err.Error()))
	}
	var items []any
	for _, c := range s.st.comments {
		if issue != 0 && c.issue != issue {
			continue
		}
		if !since.IsZero() && parseTime(c.o["updated_at"]).Before(since) {
			continue
		}
		items = append(items, clone(c.o))
	}
	if issue != 0 {
		// The per-issue endpoint is not paged in Gitea.
		if items == nil {
			items = []any{}
		}
		return reply{status: http.StatusOK, body: items}
	}
	return s.page(path, q, items)
}

func (s *Server) createComment(is *issueState, body []byte) reply {
	var in struct {
		Body string `json:"body"`
	}
	if err := decodeBody(body, &in); err != nil || in.Body == "" {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "[Body]: Required"))
	}
	now := s.now()
	e := s.st.timelineEntry(is, "comment", s.st.users["ceo"], now, obj{"body": in.Body})
	c := obj{}
	for _, k := range []string{"id", "html_url", "pull_request_url", "issue_url", "user", "body", "created_at", "updated_at"} {
		c[k] = e[k]
	}
	c["original_author"], c["original_author_id"], c["assets"] = "", 0, []any{}
	s.st.comments = append(s.st.comments, &commentState{issue: is.number, o: c})
	is.comments++
	is.updatedAt = now
	s.hookComment(is, "created", c, nil)
	return reply{status: http.StatusCreated, body: clone(c)}
}

func (s *Server) findComment(idText string) (int, *commentState) {
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return -1, nil
	}
	for i, c := range s.st.comments {
		if int64(num(c.o["id"])) == id {
			return i, c
		}
	}
	return -1, nil
}

func (s *Server) editComment(idText string, body []byte) reply {
	_, c := s.findComment(idText)
	if c == nil {
		return s.replyErr(s.notFound())
	}
	var in struct {
		Body string `json:"body"`
	}
	if err := decodeBody(body, &in); err != nil {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "invalid body"))
	}
	old := str(c.o["body"])
	now := fmtTime(s.now())
	c.o["body"], c.o["updated_at"] = in.Body, now
	for _, e := range s.st.timelines[c.issue] {
		if num(e["id"]) == num(c.o["id"]) {
			e["body"], e["updated_at"] = in.Body, now
		}
	}
	if is := s.st.issues[c.issue]; is != nil && old != in.Body {
		s.hookComment(is, "edited", c.o, obj{"body": obj{"from": old}})
	}
	return reply{status: http.StatusOK, body: clone(c.o)}
}

func (s *Server) deleteComment(idText string) reply {
	i, c := s.findComment(idText)
	if c == nil {
		return s.replyErr(s.notFound())
	}
	s.st.comments = slices.Delete(s.st.comments, i, i+1)
	s.st.timelines[c.issue] = slices.DeleteFunc(s.st.timelines[c.issue], func(e obj) bool { return num(e["id"]) == num(c.o["id"]) })
	if is := s.st.issues[c.issue]; is != nil {
		is.comments--
		s.hookComment(is, "deleted", c.o, nil)
	}
	return reply{status: http.StatusNoContent}
}

func (s *Server) listTimeline(path string, q url.Values, is *issueState) reply {
	since, err := sinceFilter(q)
	if err != nil {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "invalid since: "+err.Error()))
	}
	var items []any
	for _, e := range s.st.timelines[is.number] {
		if !since.IsZero() && parseTime(e["updated_at"]).Before(since) {
			continue
		}
		items = append(items, clone(e))
	}
	return s.page(path, q, items)
}

// listDeps lists what is depends on, or with blocks what depends on is.
func (s *Server) listDeps(path string, q url.Values, is *issueState, blocks bool) reply {
	var nums []int64
	if blocks {
		for n, ds := range s.st.deps {
			for _, d := range ds {
				if d.index == is.number && strings.EqualFold(d.owner+"/"+d.repo, s.st.owner+"/"+s.st.name) {
					nums = append(nums, n)
				}
			}
		}
	} else {
		for _, d := range s.st.deps[is.number] {
			nums = append(nums, d.index)
		}
	}
	slices.Sort(nums)
	slices.Reverse(nums)
	var items []any
	for _, n := range nums {
		if other := s.st.issues[n]; other != nil {
			items = append(items, s.st.renderIssue(other))
		}
	}
	return s.page(path, q, items)
}

// changeDep adds or removes a dependency. With blocks, the body names the
// issue that depends on is; otherwise the issue is depends on. Forgejo
// answers 500 to a duplicate; no webhook is sent either way.
func (s *Server) changeDep(is *issueState, body []byte, blocks, add bool) reply {
	var in struct {
		Owner string `json:"owner"`
		Repo  string `json:"repo"`
		Index int64  `json:"index"`
	}
	if err := decodeBody(body, &in); err != nil {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "invalid body"))
	}
	if !strings.EqualFold(in.Owner, s.st.owner) || !strings.EqualFold(in.Repo, s.st.name) {
		return s.replyErr(s.notFound())
	}
	other := s.st.issues[in.Index]
	if other == nil {
		return s.replyErr(s.notFound())
	}
	dependent, blocker := is, other
	if blocks {
		dependent, blocker = other, is
	}
	if dependent == blocker {
		return s.replyErr(s.apiError(http.StatusInternalServerError, "issue cannot depend on itself"))
	}
	ref := depRef{owner: s.st.owner, repo: s.st.name, index: blocker.number}
	has := slices.Contains(s.st.deps[dependent.number], ref)
	now := s.now()
	actor := s.st.users["ceo"]
	switch {
	case add && has:
		return s.replyErr(s.apiError(http.StatusInternalServerError,
			fmt.Sprintf("issue dependency does already exist [issue id: %d, dependency id: %d]", dependent.id, blocker.id)))
	case !add && !has:
		return s.replyErr(s.apiError(http.StatusInternalServerError,
			fmt.Sprintf("issue dependency does not exist [issue id: %d, dependency id: %d]", dependent.id, blocker.id)))
	case add:
		s.st.deps[dependent.number] = append(s.st.deps[dependent.number], ref)
	default:
		s.st.deps[dependent.number] = slices.DeleteFunc(s.st.deps[dependent.number], func(d depRef) bool { return d == ref })
	}
	typ := "add_dependency"
	if !add {
		typ = "remove_dependency"
	}
	s.st.timelineEntry(dependent, typ, actor, now, obj{"dependent_issue": s.st.renderIssue(blocker)})
	s.st.timelineEntry(blocker, typ, actor, now, obj{"dependent_issue": s.st.renderIssue(dependent)})
	return reply{status: http.StatusCreated, body: s.st.renderIssue(is)}
}

func (s *Server) listTimes(q url.Values, issue int64) reply {
	since, err := sinceFilter(q)
	if err != nil {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "invalid since: "+err.Error()))
	}
	var items []any
	for _, t := range s.st.times {
		if issue != 0 && t.issue != issue {
			continue
		}
		if !since.IsZero() && parseTime(t.o["created"]).Before(since) {
			continue
		}
		o := clone(t.o)
		if is := s.st.issues[t.issue]; is != nil {
			o["issue"] = s.st.renderIssue(is)
		}
		items = append(items, o)
	}
	path := "/repos/" + s.st.owner + "/" + s.st.name + "/times"
	if issue != 0 {
		path = fmt.Sprintf("/repos/%s/%s/issues/%d/times", s.st.owner, s.st.name, issue)
	}
	return s.page(path, q, items)
}

func (s *Server) addTime(is *issueState, body []byte) reply {
	var in struct {
		Time     int64      `json:"time"`
		Created  *time.Time `json:"created"`
		UserName string     `json:"user_name"`
	}
	if err := decodeBody(body, &in); err != nil || in.Time <= 0 {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "[Time]: Required"))
	}
	user := "ceo"
	if in.UserName != "" {
		if _, ok := s.st.users[in.UserName]; !ok {
			return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "user does not exist"))
		}
		user = in.UserName
	}
	created := s.now()
	if in.Created != nil {
		created = in.Created.UTC()
	}
	id := s.st.nextTimeID
	s.st.nextTimeID++
	t := obj{"id": float64(id), "created": fmtTime(created), "time": float64(in.Time),
		"user_id": s.st.users[user]["id"], "user_name": user, "issue_id": float64(is.id)}
	s.st.times = append(s.st.times, &timeState{issue: is.number, o: t})
	secs := time.Duration(in.Time) * time.Second
	entry := clone(t)
	delete(entry, "issue")
	s.st.timelineEntry(is, "add_time_manual", s.st.users[user], created, obj{"body": secs.String(), "tracked_time": entry})
	out := clone(t)
	out["issue"] = s.st.renderIssue(is)
	// Gitea sends no webhook for tracked time.
	return reply{status: http.StatusOK, body: out}
}

func sortedUnique(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}

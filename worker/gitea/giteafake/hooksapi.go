package giteafake

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// repoHook is a webhook registered through the API
// (/repos/{owner}/{repo}/hooks), as deploy/compose-init.sh registers
// CommiTea's. Creating or editing one points the fake's own webhook
// sender at it, as Gitea would start delivering there.
type repoHook struct {
	id                int64
	typ, branchFilter string
	url, contentType  string
	method, secret    string
	events            []string
	active            bool
	created, updated  time.Time
}

type hookOptions struct {
	Type         string   `json:"type"`
	Active       *bool    `json:"active"`
	BranchFilter string   `json:"branch_filter"`
	Events       []string `json:"events"`
	Config       struct {
		URL         string `json:"url"`
		ContentType string `json:"content_type"`
		HTTPMethod  string `json:"http_method"`
		Secret      string `json:"secret"`
	} `json:"config"`
}

// Hooks lists the webhooks registered through the API: URL and secret.
func (s *Server) Hooks() []struct{ URL, Secret string } {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []struct{ URL, Secret string }
	for _, h := range s.acct.hooks {
		out = append(out, struct{ URL, Secret string }{h.url, h.secret})
	}
	return out
}

// renderHook is a hook in the recorded shape; like Gitea, it never shows
// the secret.
func (s *Server) renderHook(h *repoHook) obj {
	o := clone(s.acct.hookTmpl)
	o["id"], o["type"], o["branch_filter"], o["url"] = h.id, h.typ, h.branchFilter, h.url
	o["config"] = obj{"content_type": h.contentType, "url": h.url, "http_method": h.method}
	o["content_type"], o["active"] = h.contentType, h.active
	events := make([]any, len(h.events))
	for i, e := range h.events {
		events[i] = e
	}
	o["events"] = events
	o["created_at"], o["updated_at"] = h.created.Format(time.RFC3339), h.updated.Format(time.RFC3339)
	return o
}

// routeHooks serves /repos/{owner}/{repo}/hooks[/{id}] to a repository
// admin. Called with mu held.
func (s *Server) routeHooks(doer, method string, rest []string, body []byte) reply {
	if !s.isRepoAdmin(doer) {
		return s.replyErr(s.apiError(http.StatusForbidden, "user should be an owner or a collaborator with admin write of a repository"))
	}
	if len(rest) == 0 {
		switch method {
		case http.MethodGet:
			var out []any
			for _, h := range s.acct.hooks {
				out = append(out, s.renderHook(h))
			}
			return s.page("/repos/"+s.st.owner+"/"+s.st.name+"/hooks", nil, out)
		case http.MethodPost:
			h := &repoHook{id: int64(len(s.acct.hooks) + 1), active: true, created: s.now()}
			if r := s.applyHook(h, body); r != nil {
				return *r
			}
			s.acct.hooks = append(s.acct.hooks, h)
			return reply{status: http.StatusCreated, body: s.renderHook(h)}
		}
		return s.replyErr(s.notFound())
	}
	id, err := strconv.ParseInt(rest[0], 10, 64)
	i := slices.IndexFunc(s.acct.hooks, func(h *repoHook) bool { return h.id == id })
	if err != nil || i < 0 || len(rest) != 1 {
		return s.replyErr(s.notFound())
	}
	switch method {
	case http.MethodGet:
		return reply{status: http.StatusOK, body: s.renderHook(s.acct.hooks[i])}
	case http.MethodPatch:
		if r := s.applyHook(s.acct.hooks[i], body); r != nil {
			return *r
		}
		return reply{status: http.StatusOK, body: s.renderHook(s.acct.hooks[i])}
	case http.MethodDelete:
		s.acct.hooks = slices.Delete(s.acct.hooks, i, i+1)
		return reply{status: http.StatusNoContent}
	}
	return s.replyErr(s.notFound())
}

// applyHook sets a hook's fields from a create or edit body and starts
// delivering to it.
func (s *Server) applyHook(h *repoHook, body []byte) *reply {
	var in hookOptions
	if err := json.Unmarshal(body, &in); err != nil {
		r := s.replyErr(s.apiError(http.StatusUnprocessableEntity, err.Error()))
		return &r
	}
	if in.Config.URL == "" || in.Config.ContentType == "" {
		r := s.replyErr(s.apiError(http.StatusUnprocessableEntity, "Missing config option: url, content_type"))
		return &r
	}
	h.typ, h.branchFilter, h.events = in.Type, in.BranchFilter, slices.Clone(in.Events)
	h.url, h.contentType, h.method, h.secret = in.Config.URL, in.Config.ContentType, in.Config.HTTPMethod, in.Config.Secret
	if in.Active != nil {
		h.active = *in.Active
	}
	h.updated = s.now()
	if h.active {
		s.hooks.set(h.url, h.secret)
	}
	return nil
}

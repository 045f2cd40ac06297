package giteafake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Access modes, as Gitea names them in the collaborator-permission answer
// (perm.AccessMode's strings).
const (
	AccessNone  = "none"
	AccessRead  = "read"
	AccessWrite = "write"
	AccessAdmin = "admin"
	AccessOwner = "owner"
)

var accessRank = []string{AccessNone, AccessRead, AccessWrite, AccessAdmin, AccessOwner}

// SetCollaborator grants login an explicit permission on the repository
// ("read", "write" or "admin"); "none" or "" removes the grant, as
// DELETE /repos/{owner}/{repo}/collaborators/{login} does.
func (s *Server) SetCollaborator(login, permission string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setCollaborator(login, permission)
}

func (s *Server) setCollaborator(login, permission string) {
	if permission == "" || permission == AccessNone {
		delete(s.acct.collaborators, login)
		return
	}
	s.acct.collaborators[login] = permission
}

// SetPrivate makes the repository private (only its owner, site admins and
// collaborators see it) or public (every signed-in user reads it).
func (s *Server) SetPrivate(private bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.repo["private"] = private
}

// Permission is the access mode Gitea would report for login.
func (s *Server) Permission(login string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.permissionOf(login)
}

// permissionOf follows Gitea's GetUserRepoPermission for what the fake
// models: the owner has owner, a site admin admin, a collaborator the
// greater of their grant and what the repository's visibility gives
// everyone (read when public), anyone else that. Organisation and team
// grants are not modelled separately: in Gitea they reach the same answer,
// and here a collaborator grant stands for them. Called with mu held.
func (s *Server) permissionOf(login string) string {
	u, ok := s.st.users[login]
	if !ok {
		return AccessNone
	}
	if strings.EqualFold(login, s.st.owner) {
		return AccessOwner
	}
	if u["is_admin"] == true {
		return AccessAdmin
	}
	mode := AccessNone
	if s.st.repo["private"] != true {
		mode = AccessRead
	}
	if granted, ok := s.acct.collaborators[login]; ok && slices.Index(accessRank, granted) > slices.Index(accessRank, mode) {
		mode = granted
	}
	return mode
}

func (s *Server) isRepoAdmin(login string) bool {
	p := s.permissionOf(login)
	return p == AccessAdmin || p == AccessOwner
}

// routeCollaborators serves /repos/{owner}/{repo}/collaborators/... for
// doer. Called with mu held.
func (s *Server) routeCollaborators(doer, method string, rest []string, body []byte) reply {
	switch {
	case len(rest) == 0 && method == http.MethodGet:
		var out []any
		for _, login := range sortedKeys(s.acct.collaborators) {
			out = append(out, clone(s.st.users[login]))
		}
		return s.page("/repos/"+s.st.owner+"/"+s.st.name+"/collaborators", nil, out)
	case len(rest) == 2 && rest[1] == "permission" && method == http.MethodGet:
		return s.collaboratorPermission(doer, rest[0])
	case len(rest) == 1:
		return s.editCollaborator(doer, method, rest[0], body)
	}
	return s.replyErr(s.notFound())
}

// collaboratorPermission answers GET .../collaborators/{login}/permission
// as routers/api/v1/repo/collaborators.go does: only a site admin, a
// repository admin or the user themself may ask; an unknown user is 404.
func (s *Server) collaboratorPermission(doer, login string) reply {
	if !s.isRepoAdmin(doer) && !strings.EqualFold(doer, login) && s.st.users[doer]["is_admin"] != true {
		return s.replyErr(s.apiError(http.StatusForbidden, "Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own"))
	}
	u, ok := s.st.users[login]
	if !ok {
		return s.replyErr(s.apiError(http.StatusNotFound, fmt.Sprintf("user does not exist [uid: 0, name: %s]", login)))
	}
	mode := s.permissionOf(login)
	out := clone(s.acct.permissionTmpl)
	out["permission"], out["role_name"], out["user"] = mode, mode, clone(u)
	return reply{status: http.StatusOK, body: out}
}

// editCollaborator is PUT (grant, body {"permission": …}), DELETE (revoke)
// and GET (204 when a collaborator) of one collaborator; changing grants
// needs a repository admin.
func (s *Server) editCollaborator(doer, method, login string, body []byte) reply {
	if _, ok := s.st.users[login]; !ok {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, fmt.Sprintf("user does not exist [uid: 0, name: %s]", login)))
	}
	switch method {
	case http.MethodGet:
		if _, ok := s.acct.collaborators[login]; ok {
			return reply{status: http.StatusNoContent}
		}
		return s.replyErr(s.notFound())
	case http.MethodPut, http.MethodDelete:
		if !s.isRepoAdmin(doer) {
			return s.replyErr(s.apiError(http.StatusForbidden, "user should be an owner or a collaborator with admin write of a repository"))
		}
	default:
		return s.replyErr(s.notFound())
	}
	if method == http.MethodDelete {
		s.setCollaborator(login, AccessNone)
		return reply{status: http.StatusNoContent}
	}
	in := struct {
		Permission string `json:"permission"`
	}{Permission: AccessWrite} // Gitea's default when the body names none
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return s.replyErr(s.apiError(http.StatusUnprocessableEntity, err.Error()))
		}
	}
	if !slices.Contains([]string{AccessRead, AccessWrite, AccessAdmin}, in.Permission) {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, "[Permission]: invalid permission"))
	}
	s.setCollaborator(login, in.Permission)
	return reply{status: http.StatusNoContent}
}

// editRepo is PATCH /repos/{owner}/{repo}; of its fields the fake honours
// private, which decides what everyone else may read.
func (s *Server) editRepo(doer string, body []byte) reply {
	if !s.isRepoAdmin(doer) {
		return s.replyErr(s.apiError(http.StatusForbidden, "reqAdmin: user should be an owner or a collaborator with admin write of a repository"))
	}
	var in struct {
		Private *bool `json:"private"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return s.replyErr(s.apiError(http.StatusUnprocessableEntity, err.Error()))
	}
	if in.Private != nil {
		s.st.repo["private"] = *in.Private
	}
	return reply{status: http.StatusOK, body: clone(s.st.repo)}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

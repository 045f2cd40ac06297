package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/commitea/commitea/store"
)

// Resources are documents an agent's application can show a person or keep
// in its context without a tool call: the directive ledger, the latest
// standup, each milestone's forecast. They share one URI scheme,
//
//	commitea://{owner}/{repo}/{path}
//
// and each kind is declared once, in Service.Resources, like the tools in
// Service.Registry: a path template ("milestones/{id}"), what it is, its
// MIME type, how to list a project's instances and how to read one. A new
// kind (the flow metrics, say) is one more declaration; the MCP adapter
// lists, templates and reads every kind from the Registry, at read scope.
// A resource says when it last changed (lastModified: the snapshot it
// comes from, or the ledger's latest directive), so a client that polls
// the list sees a new snapshot land.

// ResourceScheme is the URI scheme of every resource.
const ResourceScheme = "commitea"

// Resource declares one kind of resource.
type Resource struct {
	// Path is the URI template after commitea://{owner}/{repo}/, with
	// {name} segments for parameters: "ledger", "milestones/{id}".
	Path        string
	Name        string
	Title       string
	Description string
	MIMEType    string
	// list returns every project's resources of this kind.
	list func(ctx context.Context) ([]ResourceRef, error)
	// read returns one of a project ("owner/repo"), given the path
	// parameters.
	read func(ctx context.Context, c Caller, project string, params map[string]string) (ResourceContent, error)
}

// URITemplate is the kind's RFC 6570 URI template.
func (r Resource) URITemplate() string {
	return ResourceScheme + "://{owner}/{repo}/" + r.Path
}

// ResourceRef is one resource as listed.
type ResourceRef struct {
	URI          string
	Name         string
	Title        string
	Description  string
	MIMEType     string
	LastModified time.Time
}

// ResourceContent is a resource as read.
type ResourceContent struct {
	URI      string
	MIMEType string
	Text     string
}

// ResourceURI is the URI of a project's resource at path.
func ResourceURI(p store.Project, path string) string {
	return ResourceScheme + "://" + p.Owner + "/" + p.Name + "/" + path
}

// matchPath reports whether path matches the kind's template and returns
// its parameters.
func (r Resource) matchPath(path string) (map[string]string, bool) {
	want, got := strings.Split(r.Path, "/"), strings.Split(path, "/")
	if len(want) != len(got) {
		return nil, false
	}
	params := map[string]string{}
	for i, w := range want {
		if strings.HasPrefix(w, "{") && strings.HasSuffix(w, "}") {
			if got[i] == "" {
				return nil, false
			}
			params[strings.Trim(w, "{}")] = got[i]
			continue
		}
		if w != got[i] {
			return nil, false
		}
	}
	return params, true
}

// Resources lists the declared resource kinds.
func (r *Registry) Resources() []Resource { return slices.Clone(r.resources) }

// WithResources is the registry with resource kinds rs added.
func (r *Registry) WithResources(rs ...Resource) *Registry {
	return &Registry{tools: slices.Clone(r.tools), resources: append(slices.Clone(r.resources), rs...), log: r.log}
}

// ListResources lists every resource of every kind, at read scope.
func (r *Registry) ListResources(ctx context.Context, c Caller) ([]ResourceRef, *Error) {
	if !c.Has(ScopeRead) {
		return nil, Errorf(CodeForbidden, "", "token %q lacks the read scope that resources need", c.Name)
	}
	var out []ResourceRef
	for _, k := range r.resources {
		refs, err := k.list(ctx)
		if err != nil {
			return nil, r.failure(ctx, c, "list resources "+k.Name, err)
		}
		out = append(out, refs...)
	}
	return out, nil
}

// ReadResource reads the resource uri names, at read scope.
func (r *Registry) ReadResource(ctx context.Context, c Caller, uri string) (ResourceContent, *Error) {
	if !c.Has(ScopeRead) {
		return ResourceContent{}, Errorf(CodeForbidden, "", "token %q lacks the read scope that resources need", c.Name)
	}
	project, path, ok := splitResourceURI(uri)
	if ok {
		for _, k := range r.resources {
			if params, match := k.matchPath(path); match {
				content, err := k.read(ctx, c, project, params)
				if err != nil {
					return ResourceContent{}, r.failure(ctx, c, "read "+uri, err)
				}
				return content, nil
			}
		}
	}
	return ResourceContent{}, Errorf(CodeNotFound, "uri", "no resource %s; resources/list names them (%s://owner/repo/ledger, …/standup, …/milestones/{id}, …/flow)", uri, ResourceScheme)
}

// splitResourceURI parses commitea://owner/repo/path.
func splitResourceURI(uri string) (project, path string, ok bool) {
	rest, found := strings.CutPrefix(uri, ResourceScheme+"://")
	if !found {
		return "", "", false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[0] + "/" + parts[1], parts[2], true
}

// Resources declares the resource kinds over this service.
func (s *Service) Resources() []Resource {
	return []Resource{s.ledgerResource(), s.standupResource(), s.milestoneResource(), s.flowResource()}
}

func (s *Service) ledgerResource() Resource {
	return Resource{Path: "ledger", Name: "ledger", Title: "Directive ledger", MIMEType: "text/markdown",
		Description: "What the PM asked for, verbatim, with each directive's consequence and status (pm-state.md).",
		list: s.perProject(func(ctx context.Context, p store.Project) ([]ResourceRef, error) {
			ds, err := store.Ledger(ctx, s.Pool, p.ID)
			if err != nil {
				return nil, err
			}
			ref := ResourceRef{URI: ResourceURI(p, "ledger"), Name: "ledger", Title: p.FullName() + " directive ledger",
				Description: fmt.Sprintf("%d directive(s)", len(ds)), MIMEType: "text/markdown"}
			for _, d := range ds {
				if d.CreatedAt.After(ref.LastModified) {
					ref.LastModified = d.CreatedAt
				}
				if d.AppliedAt != nil && d.AppliedAt.After(ref.LastModified) {
					ref.LastModified = *d.AppliedAt
				}
			}
			return []ResourceRef{ref}, nil
		}),
		read: s.inProject(func(ctx context.Context, _ Caller, p store.Project, _ map[string]string) (ResourceContent, error) {
			md, err := s.PMStateMarkdown(ctx, p.FullName())
			if err != nil {
				return ResourceContent{}, err
			}
			return ResourceContent{URI: ResourceURI(p, "ledger"), MIMEType: "text/markdown", Text: md}, nil
		}),
	}
}

func (s *Service) standupResource() Resource {
	return Resource{Path: "standup", Name: "standup", Title: "Latest standup", MIMEType: "application/json",
		Description: "The latest daily standup: milestone drift with causes, each person's plan, stale blockers (query_project view standup).",
		list: s.perProject(func(ctx context.Context, p store.Project) ([]ResourceRef, error) {
			ref := ResourceRef{URI: ResourceURI(p, "standup"), Name: "standup", Title: p.FullName() + " standup", MIMEType: "application/json"}
			st, err := store.LatestStandup(ctx, s.Pool, p.ID)
			switch {
			case errors.Is(err, store.ErrNotFound):
				ref.Description = "no standup yet"
			case err != nil:
				return nil, err
			default:
				ref.Description = "standup of " + day(st.Day)
				ref.LastModified = st.CreatedAt
			}
			return []ResourceRef{ref}, nil
		}),
		read: s.inProject(func(ctx context.Context, c Caller, p store.Project, _ map[string]string) (ResourceContent, error) {
			return s.viewResource(ctx, c, p, "standup", QueryProjectInput{Project: p.FullName(), View: "standup"})
		}),
	}
}

func (s *Service) milestoneResource() Resource {
	return Resource{Path: "milestones/{id}", Name: "milestone", Title: "Milestone forecast", MIMEType: "application/json",
		Description: "One milestone's forecast: due date, p10/p50/p80 cone, chance of the due date, its issues (query_project view milestone).",
		list: s.perProject(func(ctx context.Context, p store.Project) ([]ResourceRef, error) {
			v, err := s.view(ctx, p)
			var te *Error
			if errors.As(err, &te) && te.Code == CodeNotReady {
				return nil, nil // no forecast yet: nothing to list
			}
			if err != nil {
				return nil, err
			}
			var refs []ResourceRef
			for _, m := range v.Milestones {
				if _, forecast := v.Milestone[m.ID]; m.State != "open" && !forecast {
					continue
				}
				refs = append(refs, ResourceRef{URI: ResourceURI(p, fmt.Sprintf("milestones/%d", m.ID)), Name: "milestone",
					Title: p.FullName() + " " + m.Title, Description: "forecast of milestone " + m.Title,
					MIMEType: "application/json", LastModified: v.Data.ComputedAt})
			}
			return refs, nil
		}),
		read: s.inProject(func(ctx context.Context, c Caller, p store.Project, params map[string]string) (ResourceContent, error) {
			id, err := strconv.ParseInt(params["id"], 10, 64)
			if err != nil || id < 1 {
				return ResourceContent{}, Errorf(CodeNotFound, "uri", "%s is not a milestone id", params["id"])
			}
			limit := MaxLimit
			return s.viewResource(ctx, c, p, fmt.Sprintf("milestones/%d", id),
				QueryProjectInput{Project: p.FullName(), View: "milestone", Filters: &Filters{MilestoneID: &id, Limit: &limit}})
		}),
	}
}

// perProject lists a kind's resources of every configured project.
func (s *Service) perProject(list func(ctx context.Context, p store.Project) ([]ResourceRef, error)) func(context.Context) ([]ResourceRef, error) {
	return func(ctx context.Context) ([]ResourceRef, error) {
		var out []ResourceRef
		for _, p := range s.Projects {
			refs, err := list(ctx, p)
			if err != nil {
				return nil, fmt.Errorf("list resources of %s: %w", p.FullName(), err)
			}
			out = append(out, refs...)
		}
		return out, nil
	}
}

// inProject resolves the project a resource URI names before reading.
func (s *Service) inProject(read func(ctx context.Context, c Caller, p store.Project, params map[string]string) (ResourceContent, error)) func(context.Context, Caller, string, map[string]string) (ResourceContent, error) {
	return func(ctx context.Context, c Caller, project string, params map[string]string) (ResourceContent, error) {
		p, err := s.project(project)
		if err != nil {
			return ResourceContent{}, err
		}
		return read(ctx, c, p, params)
	}
}

// viewResource is a query_project view's payload as a JSON resource.
func (s *Service) viewResource(ctx context.Context, c Caller, p store.Project, path string, in QueryProjectInput) (ResourceContent, error) {
	a, err := s.queryProject(ctx, c, in)
	if err != nil {
		return ResourceContent{}, err
	}
	b, err := json.Marshal(a.Data)
	if err != nil {
		return ResourceContent{}, fmt.Errorf("encode resource %s: %w", path, err)
	}
	return ResourceContent{URI: ResourceURI(p, path), MIMEType: "application/json", Text: string(b)}, nil
}

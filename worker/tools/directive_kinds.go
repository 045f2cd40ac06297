package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/commitea/commitea/worker/models"
)

// Directive kinds, declared once: the tool's input schema (params and their
// documentation), the params each kind accepts, and the JSON schema the big
// model must answer when it negotiates a directive's params from the PM's
// words are all derived from directiveKinds, so the three cannot drift
// apart. parseDirective holds the checks no schema can express (the target
// exists in the mirror, a deadline/hard issue is never dropped, …) and runs
// on given and negotiated params alike.

// directiveKind declares one kind of directive.
type directiveKind struct {
	Kind string
	// Target is the target field the kind needs ("issue", "milestone",
	// "member"), or "" for none.
	Target string
	Params []directiveParam
	// AtLeastOne: the params are each optional but one must be given.
	AtLeastOne bool
	// Rule states, for people and the model, what no schema says.
	Rule string
}

// directiveParam is one param: Schema is its strict form (what the model
// must answer when it negotiates); Input, when set, is the looser form the
// tool's input schema takes (a person or agent may write "p/1" for a
// priority). Doc, when the schema does not say it all, is its description
// in the tool's input schema, which a model reads on every turn.
type directiveParam struct {
	Name   string
	Hint   string // the value's shape, for the negotiation prompt's docs
	Doc    string
	Schema *models.Schema
	Input  map[string]any
}

var directiveKinds = []directiveKind{
	{Kind: "reprioritize", Target: "issue", Params: []directiveParam{{
		Name: "priority", Hint: "0..3", Doc: "0 urgent..3 low",
		Schema: &models.Schema{Type: "integer", Minimum: models.Ptr(0.0), Maximum: models.Ptr(3.0), Description: "reprioritize: 0 urgent .. 3 low (p/0..p/3)"},
		Input:  map[string]any{"type": "integer"},
	}}},
	{Kind: "reestimate", Target: "issue", Params: []directiveParam{{
		Name: "estimate", Hint: "est/xs|est/s|est/m|est/l|est/xl",
		Schema: withDescription(models.Enum("est/xs", "est/s", "est/m", "est/l", "est/xl"), "reestimate: the issue's new size"),
	}}},
	{Kind: "set-deadline", Target: "milestone", AtLeastOne: true, Params: []directiveParam{
		{Name: "due", Hint: "YYYY-MM-DD", Schema: dateSchema("set-deadline: the milestone's new due date, YYYY-MM-DD"), Input: dateInput},
		{Name: "hard", Hint: "bool", Schema: &models.Schema{Type: "boolean", Description: "set-deadline: whether the deadline is hard"}},
	}},
	{Kind: "scope", Target: "milestone", AtLeastOne: true, Rule: "an issue labelled deadline/hard cannot be dropped", Params: []directiveParam{
		{Name: "add", Hint: "[issue]", Schema: &models.Schema{Type: "array", Items: &models.Schema{Type: "integer"}, Description: "scope: issues to bring into the milestone"}},
		{Name: "drop", Hint: "[issue]", Doc: "not deadline/hard issues", Schema: &models.Schema{Type: "array", Items: &models.Schema{Type: "integer"}, Description: "scope: issues to take out of the milestone"}},
	}},
	{Kind: "capacity", Target: "member", AtLeastOne: true, Rule: "time off adds to what is there; for whole days off use timeOff, not hoursPerDay 0", Params: []directiveParam{
		{Name: "hoursPerDay", Hint: "(0, 24]", Schema: &models.Schema{Type: "number", Minimum: models.Ptr(0.25), Maximum: models.Ptr(24.0), Description: "capacity: focused hours per working day, (0, 24]"}},
		{Name: "timeOff", Hint: "[{from, to}]", Doc: "inclusive", Schema: withDescription(models.ArrayOf(models.Object(map[string]*models.Schema{
			"from": dateSchema("first day off, YYYY-MM-DD"), "to": dateSchema("last day off, YYYY-MM-DD, inclusive"),
		})), "capacity: days off, YYYY-MM-DD inclusive"), Input: map[string]any{"type": "array", "items": map[string]any{
			"type": "object", "required": []string{"from", "to"},
			"properties": map[string]any{"from": dateInput, "to": dateInput}}}},
	}},
	{Kind: "note", Rule: "no effect, kept for the record"},
}

// dateInput is a date in the tool's input schema.
var dateInput = map[string]any{"type": "string", "format": "date"}

func withDescription(s *models.Schema, d string) *models.Schema {
	s.Description = d
	return s
}

func dateSchema(d string) *models.Schema {
	return &models.Schema{Type: "string", MinLength: models.Ptr(10), MaxLength: models.Ptr(10), Description: d}
}

func directiveKindOf(kind string) (directiveKind, bool) {
	i := slices.IndexFunc(directiveKinds, func(k directiveKind) bool { return k.Kind == kind })
	if i < 0 {
		return directiveKind{}, false
	}
	return directiveKinds[i], true
}

// DirectiveKinds are the kinds record_directive accepts.
var DirectiveKinds = func() []string {
	out := make([]string, len(directiveKinds))
	for i, k := range directiveKinds {
		out[i] = k.Kind
	}
	return out
}()

// kindParams are the params each kind takes.
var kindParams = func() map[string][]string {
	out := map[string][]string{}
	for _, k := range directiveKinds {
		out[k.Kind] = []string{}
		for _, p := range k.Params {
			out[k.Kind] = append(out[k.Kind], p.Name)
		}
	}
	return out
}()

// doc is the kind's one-line documentation: "reprioritize {priority} with
// target.issue".
func (k directiveKind) doc() string {
	var b strings.Builder
	b.WriteString(k.Kind)
	if len(k.Params) == 0 {
		b.WriteString(": none")
	} else {
		names := make([]string, len(k.Params))
		for i, p := range k.Params {
			names[i] = p.Name
			if k.AtLeastOne {
				names[i] += "?"
			}
			names[i] += ": " + p.Hint
		}
		fmt.Fprintf(&b, " {%s}", strings.Join(names, ", "))
	}
	if k.Target != "" {
		b.WriteString(" with target." + k.Target)
	}
	if k.AtLeastOne {
		b.WriteString(", at least one")
	}
	if k.Rule != "" {
		b.WriteString(" (" + k.Rule + ")")
	}
	return b.String()
}

// paramsInputSchema is the params property of record_directive's input
// schema: every kind's params, each documented by its Doc; the params'
// own descriptions, which the big model reads when it negotiates, stay out
// of the tool list a model reads on every turn.
func paramsInputSchema() map[string]any {
	props := map[string]any{}
	for _, k := range directiveKinds {
		for _, p := range k.Params {
			schema := p.Input
			if schema == nil {
				schema = p.Schema.Map()
			}
			schema = withoutDescriptions(schema)
			if _, ok := schema["enum"]; ok {
				delete(schema, "type") // the enum says it
			}
			if p.Doc != "" {
				schema["description"] = p.Doc
			}
			props[p.Name] = schema
		}
	}
	return map[string]any{
		"type": "object", "properties": props,
		"description": "omitted: a model reads them from the quote",
	}
}

// targetInputSchema is the target property.
func targetInputSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{
		"issue": map[string]any{"type": "integer"}, "milestone": map[string]any{"type": "integer"},
		"member": map[string]any{"type": "string", "description": "Gitea login"}}}
}

// kindInputDoc says, for the kind property, which target and params each
// kind takes: "target.issue: reprioritize {priority}, …; …; note".
func kindInputDoc() string {
	var groups []string
	for _, target := range []string{"issue", "milestone", "member", ""} {
		var docs []string
		for _, k := range directiveKinds {
			if k.Target != target {
				continue
			}
			names := make([]string, len(k.Params))
			for j, p := range k.Params {
				names[j] = p.Name
			}
			doc := k.Kind
			if len(names) > 0 {
				doc += " {" + strings.Join(names, ",") + "}"
			}
			docs = append(docs, doc)
		}
		if len(docs) == 0 {
			continue
		}
		if target == "" {
			groups = append(groups, strings.Join(docs, ", "))
			continue
		}
		groups = append(groups, "target."+target+": "+strings.Join(docs, ", "))
	}
	return strings.Join(groups, "; ")
}

// withoutDescriptions is a copy of a schema with every description left
// out.
func withoutDescriptions(schema map[string]any) map[string]any {
	out := make(map[string]any, len(schema))
	for k, v := range schema {
		switch {
		case k == "description":
			continue
		case k == "properties":
			props := map[string]any{}
			for name, p := range v.(map[string]any) {
				props[name] = withoutDescriptions(p.(map[string]any))
			}
			out[k] = props
		default:
			if m, ok := v.(map[string]any); ok {
				v = withoutDescriptions(m)
			}
			out[k] = v
		}
	}
	return out
}

// negotiationSchema is what the big model must answer for a kind: its
// params (each optional when the kind needs only one of them) and, when
// the caller named no target, the target.
func (k directiveKind) negotiationSchema(needTarget bool) *models.Schema {
	params := map[string]*models.Schema{}
	var optional []string
	for _, p := range k.Params {
		params[p.Name] = p.Schema
		if k.AtLeastOne {
			optional = append(optional, p.Name)
		}
	}
	ps := models.Object(params, optional...)
	ps.Description = k.doc()
	answer := map[string]*models.Schema{"params": ps}
	if needTarget && k.Target != "" {
		var t *models.Schema
		if k.Target == "member" {
			t = models.StringSchema("the member's Gitea login")
		} else {
			t = models.Integer("the " + k.Target + " number as listed in the context")
		}
		answer["target"] = models.Object(map[string]*models.Schema{k.Target: t})
	}
	return models.Object(answer)
}

// recordDirectiveInputSchema is the tool's input schema, with params from
// the declaration above.
var recordDirectiveInputSchema = func() string {
	schema := map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"kind", "quote"},
		"properties": map[string]any{
			"project":   json.RawMessage(ProjectSchema),
			"kind":      map[string]any{"enum": DirectiveKinds, "description": kindInputDoc()},
			"quote":     map[string]any{"type": "string", "minLength": 1, "description": "the PM's exact words"},
			"target":    targetInputSchema(),
			"params":    paramsInputSchema(),
			"rationale": map[string]any{"type": "string"},
		},
	}
	b, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("record_directive input schema: %v", err))
	}
	return string(b)
}()

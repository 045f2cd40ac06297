package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Schema is the subset of JSON Schema that CommiTea's structured outputs
// use: one type per node, object properties with required keys and an
// optional ban on other keys, arrays with item schemas and length bounds,
// enums, string length and number bounds, and anyOf for answers of
// several shapes (questions or a proposal). Its JSON form is standard JSON
// Schema, so it is sent to providers, shown to models and validated here
// as one and the same document.
type Schema struct {
	// Type is "object", "array", "string", "integer", "number", "boolean"
	// or "null"; empty accepts any type.
	Type        string             `json:"type,omitempty"`
	Description string             `json:"description,omitempty"`
	Properties  map[string]*Schema `json:"properties,omitempty"`
	Required    []string           `json:"required,omitempty"`
	// AdditionalProperties false rejects keys not in Properties.
	AdditionalProperties *bool    `json:"additionalProperties,omitempty"`
	Items                *Schema  `json:"items,omitempty"`
	Enum                 []any    `json:"enum,omitempty"`
	MinItems             *int     `json:"minItems,omitempty"`
	MaxItems             *int     `json:"maxItems,omitempty"`
	MinLength            *int     `json:"minLength,omitempty"`
	MaxLength            *int     `json:"maxLength,omitempty"`
	Minimum              *float64 `json:"minimum,omitempty"`
	Maximum              *float64 `json:"maximum,omitempty"`
	// AnyOf: the value must be valid against at least one of these (and
	// against the rest of this schema).
	AnyOf []*Schema `json:"anyOf,omitempty"`
}

// ValidationError lists every place a value breaks its schema, as
// "$.path: problem" lines, so a repair prompt can quote them all.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	return "answer does not match the schema: " + strings.Join(e.Problems, "; ")
}

// maxProblems keeps a repair prompt short when an answer is wrong
// everywhere.
const maxProblems = 20

// ParseJSON reads a model's answer as JSON. Models often wrap JSON in a
// Markdown fence or add a sentence around it, so it also tries the fenced
// block and the outermost {…} or […] before giving up.
func ParseJSON(text string) (any, error) {
	var firstErr error
	for _, cand := range jsonCandidates(text) {
		dec := json.NewDecoder(strings.NewReader(cand))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		if err == nil && dec.More() {
			err = errors.New("more than one JSON value")
		}
		if err == nil {
			return v, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = errors.New("empty answer")
	}
	return nil, fmt.Errorf("answer is not valid JSON: %w", firstErr)
}

func jsonCandidates(text string) []string {
	t := strings.TrimSpace(text)
	out := []string{t}
	if i := strings.Index(t, "```"); i >= 0 {
		rest := t[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:] // drop the info string ("json")
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			out = append(out, strings.TrimSpace(rest[:j]))
		}
	}
	for _, pair := range [][2]byte{{'{', '}'}, {'[', ']'}} {
		i, j := strings.IndexByte(t, pair[0]), strings.LastIndexByte(t, pair[1])
		if i >= 0 && j > i {
			out = append(out, t[i:j+1])
		}
	}
	return out
}

// ParseAndValidate parses text as JSON (see ParseJSON), validates it and
// returns it re-encoded compactly.
func (s *Schema) ParseAndValidate(text string) (json.RawMessage, error) {
	v, err := ParseJSON(text)
	if err != nil {
		return nil, err
	}
	if err := s.Validate(v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("re-encode answer: %w", err)
	}
	return json.RawMessage(bytes.TrimSpace(buf.Bytes())), nil
}

// Validate checks a decoded JSON value (as from ParseJSON, or
// encoding/json with or without UseNumber) against the schema. It returns
// a *ValidationError listing every problem found, or nil.
func (s *Schema) Validate(v any) error {
	var probs []string
	s.validate("$", v, &probs)
	if len(probs) == 0 {
		return nil
	}
	if len(probs) > maxProblems {
		probs = append(probs[:maxProblems], fmt.Sprintf("and %d more problems", len(probs)-maxProblems))
	}
	return &ValidationError{Problems: probs}
}

func (s *Schema) validate(path string, v any, probs *[]string) {
	if s == nil {
		return
	}
	add := func(format string, args ...any) {
		*probs = append(*probs, path+": "+fmt.Sprintf(format, args...))
	}
	if len(s.AnyOf) > 0 {
		// The branch with the fewest problems says best what to mend: the
		// one whose "kind" matches, usually.
		var best []string
		for i, b := range s.AnyOf {
			var bp []string
			b.validate(path, v, &bp)
			if len(bp) == 0 {
				best = nil
				break
			}
			if i == 0 || len(bp) < len(best) {
				best = bp
			}
		}
		if best != nil {
			add("matches none of the %d allowed shapes; the closest fails on: %s", len(s.AnyOf), strings.Join(best, "; "))
			return
		}
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonEqual(e, v) }) {
		add("must be one of %s, got %s", enumList(s.Enum), brief(v))
		return
	}
	switch s.Type {
	case "":
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			add("must be an object, got %s", typeName(v))
			return
		}
		for _, k := range s.Required {
			if _, ok := obj[k]; !ok {
				add("missing required key %q", k)
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub, ok := s.Properties[k]
			if !ok {
				if s.AdditionalProperties != nil && !*s.AdditionalProperties {
					add("unknown key %q (allowed: %s)", k, strings.Join(sortedKeys(s.Properties), ", "))
				}
				continue
			}
			sub.validate(path+"."+k, obj[k], probs)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			add("must be an array, got %s", typeName(v))
			return
		}
		if s.MinItems != nil && len(arr) < *s.MinItems {
			add("must have at least %d items, got %d", *s.MinItems, len(arr))
		}
		if s.MaxItems != nil && len(arr) > *s.MaxItems {
			add("must have at most %d items, got %d", *s.MaxItems, len(arr))
		}
		for i, item := range arr {
			s.Items.validate(fmt.Sprintf("%s[%d]", path, i), item, probs)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			add("must be a string, got %s", typeName(v))
			return
		}
		n := len([]rune(str))
		if s.MinLength != nil && n < *s.MinLength {
			add("must be at least %d characters long, got %d", *s.MinLength, n)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			add("must be at most %d characters long, got %d", *s.MaxLength, n)
		}
	case "integer", "number":
		f, ok := number(v)
		if !ok {
			add("must be a %s, got %s", s.Type, typeName(v))
			return
		}
		if s.Type == "integer" && f != math.Trunc(f) {
			add("must be a whole number, got %s", brief(v))
			return
		}
		if s.Minimum != nil && f < *s.Minimum {
			add("must be at least %g, got %s", *s.Minimum, brief(v))
		}
		if s.Maximum != nil && f > *s.Maximum {
			add("must be at most %g, got %s", *s.Maximum, brief(v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			add("must be true or false, got %s", typeName(v))
		}
	case "null":
		if v != nil {
			add("must be null, got %s", typeName(v))
		}
	default:
		add("schema has unknown type %q", s.Type)
	}
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	if _, ok := number(v); ok {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// jsonEqual compares an enum member with a decoded value; numbers compare
// by value whatever their Go type.
func jsonEqual(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	switch a := a.(type) {
	case string:
		s, ok := b.(string)
		return ok && s == a
	case bool:
		x, ok := b.(bool)
		return ok && x == a
	case nil:
		return b == nil
	}
	return false
}

func enumList(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = brief(e)
	}
	return strings.Join(parts, ", ")
}

// brief renders a value for an error message, cut so that a huge wrong
// value does not flood the repair prompt.
func brief(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 60
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

func sortedKeys(m map[string]*Schema) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// String is the schema as compact JSON, the form put into prompts.
func (s *Schema) String() string {
	b, err := json.Marshal(s)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// Map is the schema as a generic JSON object, the form tool parameters
// take in client libraries.
func (s *Schema) Map() map[string]any {
	var m map[string]any
	_ = json.Unmarshal([]byte(s.String()), &m)
	return m
}

// Schema builders keep the structured-output declarations short.

// Object is an object schema whose listed properties are all required and
// which allows no other keys; mark optional keys with Optional.
func Object(props map[string]*Schema, optional ...string) *Schema {
	required := make([]string, 0, len(props))
	for _, k := range sortedKeys(props) {
		if !slices.Contains(optional, k) {
			required = append(required, k)
		}
	}
	no := false
	return &Schema{Type: "object", Properties: props, Required: required, AdditionalProperties: &no}
}

// ArrayOf is an array of items.
func ArrayOf(items *Schema) *Schema { return &Schema{Type: "array", Items: items} }

// String schema; named StringSchema to leave String for the method.
func StringSchema(description string) *Schema {
	return &Schema{Type: "string", Description: description}
}

// Enum is a string that must be one of values.
func Enum(values ...string) *Schema {
	e := make([]any, len(values))
	for i, v := range values {
		e[i] = v
	}
	return &Schema{Type: "string", Enum: e}
}

// Integer schema.
func Integer(description string) *Schema {
	return &Schema{Type: "integer", Description: description}
}

// AnyOf is a value of any of the shapes.
func AnyOf(shapes ...*Schema) *Schema { return &Schema{AnyOf: shapes} }

// Ptr returns a pointer to v, for the bounds fields.
func Ptr[T any](v T) *T { return &v }

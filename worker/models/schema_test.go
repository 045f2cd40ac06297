package models_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/commitea/commitea/worker/models"
)

func TestSchemaValidate(t *testing.T) {
	s := models.Object(map[string]*models.Schema{
		"needsMoreInfo": {Type: "array", Items: models.StringSchema("question"), MaxItems: models.Ptr(5)},
		"issues": models.ArrayOf(models.Object(map[string]*models.Schema{
			"title":    {Type: "string", MinLength: models.Ptr(3), MaxLength: models.Ptr(80)},
			"estimate": models.Enum("est/xs", "est/s"),
			"priority": {Type: "integer", Minimum: models.Ptr(0.0), Maximum: models.Ptr(3.0)},
			"hard":     {Type: "boolean"},
		}, "priority", "hard")),
	}, "needsMoreInfo", "issues")
	cases := []struct {
		name, json string
		want       []string // substrings of problems; none means valid
	}{
		{"valid", `{"issues":[{"title":"Fix it","estimate":"est/s","priority":1}]}`, nil},
		{"empty object", `{}`, nil},
		{"wrong enum", `{"issues":[{"title":"Fix it","estimate":"M"}]}`, []string{`$.issues[0].estimate: must be one of "est/xs", "est/s", got "M"`}},
		{"missing and unknown", `{"issues":[{"title":"Fix it","size":"s"}]}`, []string{`$.issues[0]: missing required key "estimate"`, `$.issues[0]: unknown key "size"`}},
		{"types", `{"issues":[{"title":7,"estimate":"est/s","priority":1.5,"hard":"yes"}]}`, []string{"title: must be a string, got a number", "priority: must be a whole number, got 1.5", "hard: must be true or false"}},
		{"bounds", `{"needsMoreInfo":["a","b","c","d","e","f"],"issues":[{"title":"ab","estimate":"est/s","priority":9}]}`, []string{"$.needsMoreInfo: must have at most 5 items, got 6", "title: must be at least 3 characters long, got 2", "priority: must be at most 3, got 9"}},
		{"not an object", `[1]`, []string{"$: must be an object, got an array"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.ParseAndValidate(c.json)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestParseJSONFindsTheValue(t *testing.T) {
	for _, text := range []string{
		`{"a":1}`,
		"```json\n{\"a\":1}\n```",
		"Here you go:\n{\"a\":1}\nHope that helps.",
	} {
		v, err := models.ParseJSON(text)
		if err != nil {
			t.Errorf("ParseJSON(%q): %v", text, err)
			continue
		}
		if n, _ := v.(map[string]any)["a"].(json.Number); n != "1" {
			t.Errorf("ParseJSON(%q) = %v", text, v)
		}
	}
	if _, err := models.ParseJSON(`{"a":1} {"b":2}`); err == nil {
		t.Error("two values accepted")
	}
	if _, err := models.ParseJSON(`{"a":`); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("truncated: %v", err)
	}
}

func TestSchemaJSONIsStandard(t *testing.T) {
	s := models.Object(map[string]*models.Schema{"x": models.Enum("a")}, "x")
	if got := s.String(); got != `{"type":"object","properties":{"x":{"type":"string","enum":["a"]}},"additionalProperties":false}` {
		t.Errorf("schema JSON = %s", got)
	}
}

func TestApproxTokens(t *testing.T) {
	cases := []struct {
		text     string
		min, max int
	}{
		{"", 0, 0},
		{"The quick brown fox jumps over the lazy dog.", 9, 12}, // cl100k: 10
		{`{"title":"Fix login","estimate":"est/s"}`, 12, 20},    // cl100k: 14
		{"2026-12-01", 5, 7},                          // cl100k: 5
		{"Internationalization considerations", 3, 8}, // cl100k: 4
		{"日本語のテキスト", 6, 9},
	}
	for _, c := range cases {
		if n := models.ApproxTokens(c.text); n < c.min || n > c.max {
			t.Errorf("ApproxTokens(%q) = %d, want %d..%d", c.text, n, c.min, c.max)
		}
	}
	msgs := []models.Message{{Role: models.System, Content: "Be brief."}, {Role: models.User, Content: "Status?"}}
	if n := models.MessagesTokens(msgs); n != 3+4+3+4+2 {
		t.Errorf("MessagesTokens = %d", n)
	}
}

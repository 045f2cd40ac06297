package models

import (
	"encoding/json"
	"testing"
)

// FuzzModelResponse: a model's answer is outside input (prompt injection
// steers it); no text may panic the parser, the validator or the usage
// reader, and what validates re-decodes to a value the schema accepts.
func FuzzModelResponse(f *testing.F) {
	s := Object(map[string]*Schema{
		"needsMoreInfo": {Type: "array", Items: StringSchema("question"), MaxItems: Ptr(5)},
		"issues": ArrayOf(Object(map[string]*Schema{
			"title":    {Type: "string", MinLength: Ptr(3), MaxLength: Ptr(80)},
			"estimate": Enum("est/xs", "est/s"),
			"priority": {Type: "integer", Minimum: Ptr(0.0), Maximum: Ptr(3.0)},
			"hard":     {Type: "boolean"},
			"parts":    AnyOf(StringSchema("one"), ArrayOf(StringSchema("many"))),
		}, "priority", "hard", "parts")),
	}, "needsMoreInfo", "issues")
	for _, t := range []string{
		`{"issues":[{"title":"Fix it","estimate":"est/s","priority":1}]}`,
		"Here you go:\n```json\n{\"issues\":[{\"title\":\"Fix it\",\"estimate\":\"est/xs\",\"parts\":[\"a\"]}]}\n```",
		`{"issues":[{"title":7,"estimate":"M","priority":1e400}]}`,
		`[{"issues":[]}]`, `{"needsMoreInfo":["a","b","c","d","e","f"]}`, `{{{{`, "",
		`{"usage":{"prompt_tokens":900,"completion_tokens":12}}`, `{"usage":{"input_tokens":-1,"output_tokens":9223372036854775807}}`,
	} {
		f.Add(t)
	}
	f.Fuzz(func(t *testing.T, text string) {
		(&wire{}).read([]byte(text))
		raw, err := s.ParseAndValidate(text)
		if err != nil {
			return
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("validated answer does not re-decode: %s: %v", raw, err)
		}
		if err := s.Validate(v); err != nil {
			t.Fatalf("validated answer fails validation once re-decoded: %s: %v", raw, err)
		}
	})
}

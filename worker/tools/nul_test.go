package tools

import (
	"errors"
	"testing"
)

// TestDecodeRefusesNUL: Postgres refuses NUL in text and jsonb, so a tool
// input holding one failed deep in its handler as INTERNAL (search: 500).
// It is refused on decoding as INVALID_INPUT naming the field.
func TestDecodeRefusesNUL(t *testing.T) {
	t.Parallel()
	type in struct {
		View    string         `json:"view"`
		Filters map[string]any `json:"filters"`
		Ops     []any          `json:"ops"`
	}
	cases := []struct{ raw, field string }{
		{`{"view":"a\u0000b"}`, "view"},
		{`{"view":"search","filters":{"query":"x\u0000"}}`, "filters.query"},
		{`{"filters":{"a":1,"b":[1,"\u0000"]}}`, "filters.b"},
		{`{"ops":[{"op":"comment","body":"\u0000"}]}`, "ops.body"},
		{`{"filters":{"\u0000":1}}`, "filters.\x00"},
	}
	for _, c := range cases {
		var v in
		err := decodeStrict([]byte(c.raw), &v)
		var te *Error
		if !errors.As(err, &te) || te.Code != CodeInvalidInput || te.Field != c.field {
			t.Errorf("%s: err = %v, want INVALID_INPUT on %q", c.raw, err, c.field)
		}
	}
	// An escaped backslash before u0000 is text, not NUL.
	var v in
	if err := decodeStrict([]byte(`{"view":"\\u0000"}`), &v); err != nil || v.View != `\u0000` {
		t.Fatalf("literal backslash-u0000: %v %q", err, v.View)
	}
}

package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzToolInput: every tool's input is decoded by decodeStrict; whatever
// a caller sends, the answer is a decoded input or an INVALID_INPUT
// *Error (a 400), never a panic or another error (a 500), and an input
// holding NUL never gets through to a handler.
func FuzzToolInput(f *testing.F) {
	for _, s := range []string{
		`{"view":"search","filters":{"query":"keychain safari","limit":5}}`,
		`{"view":"issue","filters":{"issueId":1001}}`,
		`{"ops":[{"op":"set_estimate","issue":1,"estimate":"est/xl"},{"op":"set_milestone","issue":2,"milestone":null}],"idempotencyKey":"k"}`,
		`{"kind":"reestimate","quote":"#1 is an XL","target":{"issue":1},"params":{"estimate":"est/xl"}}`,
		`{"braindump":"fix the login; then the indexer"}`,
		`{"view":"a\u0000"}`, `{"ops":[{"op":1}]}`, `[]`, `null`, `{"view":"runway"} {}`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, v := range []any{&QueryProjectInput{}, &ApplyChangesInput{}, &RecordDirectiveInput{}, &CaptureWorkInput{}} {
			err := decodeStrict(json.RawMessage(raw), v)
			if err == nil {
				if strings.Contains(raw, `\u0000`) {
					if _, nul := nulString([]byte(raw)); nul {
						t.Fatalf("%T: input with NUL decoded", v)
					}
				}
				continue
			}
			var te *Error
			if !errors.As(err, &te) || te.Code != CodeInvalidInput {
				t.Fatalf("%T: %q gave %v, want INVALID_INPUT", v, raw, err)
			}
		}
	})
}

// FuzzOpUnmarshal: an op decodes strictly or fails, never panics, and
// remembers exactly the fields present.
func FuzzOpUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"op":"set_estimate","issue":1,"estimate":"est/xl"}`,
		`{"op":"set_milestone","issue":2,"milestone":null}`,
		`{"op":"create_issue","title":"x","labels":["a"],"assignees":["b"]}`,
		`{"op":"close_issue","issue":1,"unknown":true}`, `{"op":`, `[1]`, `{"issue":"1"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var o Op
		if err := o.UnmarshalJSON(b); err != nil {
			return
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(b, &keys); err != nil {
			t.Fatalf("op decoded from what is not an object: %q", b)
		}
		for k := range keys {
			if !o.present[k] {
				t.Fatalf("field %q present but not remembered", k)
			}
		}
	})
}

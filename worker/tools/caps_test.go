package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/commitea/commitea/store"
)

func TestTruncate(t *testing.T) {
	t.Parallel()
	if got := Truncate("short", 10); got != "short" {
		t.Fatalf("short text changed: %q", got)
	}
	if got := Truncate("exactly10!", 10); got != "exactly10!" {
		t.Fatalf("text at the cap changed: %q", got)
	}
	long := strings.Repeat("é", 100) // 200 bytes
	got := Truncate(long, 51)
	if !utf8.ValidString(got) {
		t.Fatalf("cut inside a rune: %q", got)
	}
	if !strings.HasSuffix(got, " [truncated: shown 50 of 200 bytes]") {
		t.Fatalf("marker = %q", got)
	}
}

func TestCapsLimitAndList(t *testing.T) {
	t.Parallel()
	c, err := NewCaps(nil, "filters.limit")
	if err != nil || c.Limit != DefaultLimit {
		t.Fatalf("default limit = %v, %v", c, err)
	}
	for _, bad := range []int{0, -1} {
		if _, err := NewCaps(&bad, "filters.limit"); err == nil {
			t.Fatalf("limit %d accepted", bad)
		} else if e := new(Error); !errors.As(err, &e) || e.Code != CodeInvalidInput || e.Field != "filters.limit" {
			t.Fatalf("limit %d: %v", bad, err)
		}
	}
	big := 101
	c, _ = NewCaps(&big, "filters.limit")
	if c.Limit != MaxLimit || !strings.Contains(c.Instruction("Go."), "The limit 101 was clamped to the maximum 100.") {
		t.Fatalf("clamp: limit %d, instruction %q", c.Limit, c.Instruction("Go."))
	}
	at := MaxLimit
	c, _ = NewCaps(&at, "filters.limit")
	if c.Instruction("Go.") != "Go." {
		t.Fatal("a limit at the maximum is not clamped")
	}
	two := 2
	c, _ = NewCaps(&two, "filters.limit")
	if got := List(c, []int{1, 2, 3}, "things", "no things"); len(got) != 2 {
		t.Fatalf("list = %v", got)
	}
	if got := List(c, []int(nil), "things", "things: none at all"); got == nil || len(got) != 0 {
		t.Fatalf("empty list = %#v, want a non-nil empty slice", got)
	}
	if n := strings.Join(c.Notes(), "|"); n != "things: shown 2 of 3; narrow with filters or raise limit (max 100)|things: none at all" {
		t.Fatalf("notes = %q", n)
	}
}

func TestProjectResolution(t *testing.T) {
	t.Parallel()
	one := &Service{Projects: []store.Project{{ID: 1, Owner: "ceo", Name: "demo"}}}
	if p, err := one.project(""); err != nil || p.ID != 1 {
		t.Fatalf("default project = %v, %v", p, err)
	}
	two := &Service{Projects: []store.Project{{ID: 1, Owner: "ceo", Name: "demo"}, {ID: 2, Owner: "ceo", Name: "web"}}}
	_, err := two.project("")
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidInput || !strings.Contains(e.Message, "ceo/demo, ceo/web") {
		t.Fatalf("no project with two configured: %v", err)
	}
	if p, err := two.project("CEO/Web"); err != nil || p.ID != 2 {
		t.Fatalf("named project = %v, %v", p, err)
	}
	none := &Service{}
	if _, err := none.project(""); !errors.As(err, &e) || e.Code != CodeNotFound {
		t.Fatalf("no project configured: %v", err)
	}
}

func TestRegistryCall(t *testing.T) {
	t.Parallel()
	type in struct {
		N int `json:"n"`
	}
	echo := Declare(Tool{Name: "echo", Description: "echo n", Scope: ScopeRead, InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, c Caller, x in) (Answer[map[string]any], error) {
			if x.N < 0 {
				return Answer[map[string]any]{}, errors.New("boom: secret detail")
			}
			return Answer[map[string]any]{Data: map[string]any{"n": x.N, "by": c.Name}, Instruction: "Done."}, nil
		})
	r := NewRegistry(slog.New(slog.NewTextHandler(io.Discard, nil)), echo)
	reader := Caller{Name: "r", Scopes: []string{ScopeRead}}
	env, terr := r.Call(context.Background(), reader, "echo", json.RawMessage(`{"n":3}`))
	if terr != nil || env.Instruction != "Done." || env.Data.(map[string]any)["by"] != "r" {
		t.Fatalf("call = %+v, %v", env, terr)
	}
	for _, c := range []struct {
		name, input string
		caller      Caller
		code, field string
	}{
		{"echo", `{"n":"x"}`, reader, CodeInvalidInput, "n"},
		{"echo", `{"m":1}`, reader, CodeInvalidInput, "m"},
		{"echo", `{"n":1} {"n":2}`, reader, CodeInvalidInput, ""},
		{"echo", `[1]`, reader, CodeInvalidInput, ""},
		{"echo", `{"n":1}`, Caller{Name: "w", Scopes: []string{ScopeWrite}}, CodeForbidden, ""},
		{"nope", `{}`, reader, CodeNotFound, ""},
		{"echo", `{"n":-1}`, reader, CodeInternal, ""},
	} {
		_, terr := r.Call(context.Background(), c.caller, c.name, json.RawMessage(c.input))
		if terr == nil || terr.Code != c.code || terr.Field != c.field {
			t.Fatalf("%s %s: %v, want %s on %q", c.name, c.input, terr, c.code, c.field)
		}
		if strings.Contains(terr.Message, "secret detail") {
			t.Fatal("an internal error leaked its text")
		}
	}
	if env, terr := r.Call(context.Background(), reader, "echo", nil); terr != nil || env.Data.(map[string]any)["n"] != 0 {
		t.Fatalf("empty input: %+v, %v", env, terr)
	}
}

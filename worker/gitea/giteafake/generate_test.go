package giteafake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func getJSON(t *testing.T, s *Server, path string, out any) http.Header {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v1"+path, nil)
	req.Header.Set("Authorization", "token "+s.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.Header
}

// TestGeneratedProject checks the shape the demo relies on: 400+ issues
// over a year, four milestones with one hard, open pulls that fix issues,
// dependencies, tracked time, and the same project for the same seed.
func TestGeneratedProject(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s, err := New(Options{Generate: &Project{Seed: 7, Now: now}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Repo() != "acme/teapot" {
		t.Fatalf("repo = %s", s.Repo())
	}
	var page []map[string]any
	h := getJSON(t, s, "/repos/acme/teapot/issues?state=all&type=issues&limit=1", &page)
	var total int
	fmt.Sscan(h.Get("X-Total-Count"), &total)
	if total < 400 {
		t.Fatalf("issues = %d, want 400+", total)
	}
	var ms []map[string]any
	getJSON(t, s, "/repos/acme/teapot/milestones?state=all", &ms)
	hard := 0
	for _, m := range ms {
		if strings.Contains(m["description"].(string), "deadline: hard") {
			hard++
		}
	}
	if len(ms) != 4 || hard != 1 {
		t.Fatalf("milestones = %d (hard %d), want 4 with 1 hard", len(ms), hard)
	}
	var pulls []map[string]any
	getJSON(t, s, "/repos/acme/teapot/pulls?state=open&limit=50", &pulls)
	if len(pulls) < 3 || !strings.HasPrefix(pulls[0]["body"].(string), "Fixes #") {
		t.Fatalf("open pulls = %d, first %v", len(pulls), pulls[0]["body"])
	}
	var times []map[string]any
	h = getJSON(t, s, "/repos/acme/teapot/times?limit=1", &times)
	fmt.Sscan(h.Get("X-Total-Count"), &total)
	if total < 50 {
		t.Fatalf("tracked times = %d", total)
	}
	deps := 0
	s.mu.Lock()
	for _, d := range s.st.deps {
		deps += len(d)
	}
	first := s.st.issues[1].createdAt
	s.mu.Unlock()
	if deps < 10 {
		t.Fatalf("dependencies = %d", deps)
	}
	if age := now.Sub(first); age < 300*24*time.Hour {
		t.Fatalf("history starts %s before now, want about a year", age)
	}
	var tl []map[string]any
	getJSON(t, s, "/repos/acme/teapot/issues/1/timeline", &tl)
	if len(tl) < 3 {
		t.Fatalf("timeline of #1 = %d entries", len(tl))
	}

	again, err := New(Options{Generate: &Project{Seed: 7, Now: now}})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	var a, b []map[string]any
	getJSON(t, s, "/repos/acme/teapot/issues?state=all&limit=50&page=3", &a)
	getJSON(t, again, "/repos/acme/teapot/issues?state=all&limit=50&page=3", &b)
	for k := range a {
		if a[k]["title"] != b[k]["title"] || a[k]["created_at"] != b[k]["created_at"] {
			t.Fatalf("same seed, different issue: %v vs %v", a[k]["title"], b[k]["title"])
		}
	}
}

// rawDump is every read a backfill makes of a generated project, the
// server's own address replaced, so two servers' answers compare as bytes.
func rawDump(t *testing.T, s *Server) []byte {
	t.Helper()
	var out []byte
	get := func(path string) []byte {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v1"+path, nil)
		req.Header.Set("Authorization", "token "+s.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		body = []byte(strings.ReplaceAll(string(body), s.URL, "FORGE"))
		out = append(append(out, path+"\n"...), body...)
		return body
	}
	for _, p := range []string{"/repos/acme/teapot", "/repos/acme/teapot/milestones?state=all", "/repos/acme/teapot/labels?limit=50",
		"/repos/acme/teapot/times?limit=50", "/repos/acme/teapot/pulls?state=all&limit=50"} {
		get(p)
	}
	for page := 1; ; page++ {
		var issues []map[string]any
		if err := json.Unmarshal(get(fmt.Sprintf("/repos/acme/teapot/issues?state=all&limit=50&page=%d", page)), &issues); err != nil {
			t.Fatal(err)
		}
		if len(issues) == 0 {
			break
		}
		for _, is := range issues {
			n := int64(is["number"].(float64))
			for _, sub := range []string{"timeline", "dependencies"} {
				get(fmt.Sprintf("/repos/acme/teapot/issues/%d/%s", n, sub))
			}
		}
	}
	return out
}

// The demo is deterministic: a seed and the day its history ends give the
// same project, byte for byte, and another day another one.
func TestGeneratedProjectIsByteIdentical(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	dump := func(seed uint64, now time.Time) []byte {
		s, err := New(Options{Generate: &Project{Seed: seed, Now: now}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return rawDump(t, s)
	}
	a, b := dump(1, end), dump(1, end)
	if string(a) != string(b) {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		t.Fatalf("same seed and day, different data at byte %d of %d: %.200q vs %.200q", i, len(a), a[i:], b[i:])
	}
	if len(a) < 1_000_000 {
		t.Errorf("the dump is only %d bytes: it misses most of the project", len(a))
	}
	// A day later, the same history a day later.
	first := func(now time.Time) string {
		s, err := New(Options{Generate: &Project{Seed: 1, Now: now}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var is map[string]any
		getJSON(t, s, "/repos/acme/teapot/issues/1", &is)
		return fmt.Sprint(is["created_at"])
	}
	if x, y := first(end), first(end.AddDate(0, 0, 1)); x == y {
		t.Errorf("issue #1 was created at %s with either day", x)
	}
	t.Logf("%d bytes compared", len(a))
}

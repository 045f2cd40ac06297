package dashboard

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestBoardAgingAndFlagFilter: started cards show their age, those past
// the SLE carry the aging badge, and the board's flag filter shows only
// the cards with the asked flag, with every flag's count of open work.
func TestBoardAgingAndFlagFilter(t *testing.T) {
	t.Parallel()
	d, _, _ := newTestDashboard(t)
	openCards := func(path string) (counts map[string]int, cards [][]string, ages map[string]int, body string) {
		t.Helper()
		code, doc, body := get(t, d.Handler(), path)
		if code != http.StatusOK {
			t.Fatalf("%s: status %d", path, code)
		}
		counts = map[string]int{}
		for _, a := range find(doc, func(n *html.Node) bool { return n.Data == "a" && attr(n, "data-flag") != "" }) {
			fields := strings.Fields(text(a))
			n, err := strconv.Atoi(fields[len(fields)-1])
			if err != nil {
				t.Fatalf("filter link %q", text(a))
			}
			counts[attr(a, "data-flag")] = n
		}
		ages = map[string]int{}
		for _, col := range find(doc, byClass("section", "col")) {
			state := attr(col, "data-state")
			if state == "done" {
				continue
			}
			for _, c := range find(col, byClass("div", "card")) {
				var badges []string
				for _, b := range find(c, byClass("span", "badge")) {
					badges = append(badges, attr(b, "class")+"|"+text(b))
				}
				cards = append(cards, badges)
				if a := find(c, byClass("span", "age")); len(a) == 1 {
					n, _ := strconv.Atoi(strings.Fields(text(a[0]))[0])
					ages[state] += min(n, 1)
				}
			}
		}
		return counts, cards, ages, body
	}
	counts, cards, ages, _ := openCards("/ceo/demo/")
	if len(counts) != 5 || counts["aging"] == 0 || counts["blocked"] == 0 {
		t.Fatalf("flag filter counts = %v", counts)
	}
	if ages["steeping"] == 0 || ages["diagnosis"] != 0 || ages["triage"] != 0 {
		t.Fatalf("cards showing an age, per column: %v", ages)
	}
	aging := 0
	for _, badges := range cards {
		for _, b := range badges {
			if strings.HasPrefix(b, "badge aging|aging: past the 85% SLE of ") {
				aging++
			}
		}
	}
	if aging != counts["aging"] {
		t.Fatalf("%d aging badges, the filter counts %d", aging, counts["aging"])
	}

	for _, flag := range []string{"aging", "blocked"} {
		_, cards, _, _ := openCards("/ceo/demo/?flag=" + flag)
		if len(cards) != counts[flag] {
			t.Fatalf("?flag=%s shows %d open cards, the filter counts %d", flag, len(cards), counts[flag])
		}
		want := map[string]string{"aging": "badge aging|aging", "blocked": "badge bad|blocked by #"}[flag]
		for _, badges := range cards {
			if !strings.Contains(strings.Join(badges, "\n"), want) {
				t.Fatalf("?flag=%s shows a card with badges %v", flag, badges)
			}
		}
	}
	_, cards, _, body := openCards("/ceo/demo/?flag=nonsense")
	if len(cards) != 60 || !strings.Contains(body, `&#34;nonsense&#34; is not a flag the board filters by`) {
		t.Fatalf("?flag=nonsense: %d open cards", len(cards))
	}
}

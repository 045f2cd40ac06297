package dashboard

import (
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestBoardAging: started cards show their age, those past the SLE carry
// the aging badge, and the board's flag filter (?flag=aging) shows just
// those cards.
func TestBoardAging(t *testing.T) {
	t.Parallel()
	d, _, _ := newTestDashboard(t)
	openCards := func(path string) (aging int, cards int, aged map[string]int) {
		t.Helper()
		code, doc, _ := get(t, d.Handler(), path)
		if code != http.StatusOK {
			t.Fatalf("%s: status %d", path, code)
		}
		aged = map[string]int{}
		for _, col := range find(doc, byClass("section", "col")) {
			state := attr(col, "data-state")
			if state == "done" {
				continue
			}
			for _, c := range find(col, byClass("div", "card")) {
				cards++
				for _, b := range find(c, byClass("span", "badge")) {
					if hasClass(b, "aging") && strings.HasPrefix(text(b), "aging: past the 85% SLE of ") {
						aging++
					}
				}
				if a := find(c, func(n *html.Node) bool { return n.Data == "span" && hasClass(n, "age") }); len(a) == 1 {
					aged[state]++
				}
			}
		}
		return aging, cards, aged
	}
	aging, _, aged := openCards("/ceo/demo/")
	if aging == 0 || aged["steeping"] == 0 || aged["diagnosis"] != 0 || aged["triage"] != 0 {
		t.Fatalf("%d aging badges; cards showing an age, per column: %v", aging, aged)
	}
	filtered, cards, _ := openCards("/ceo/demo/?flag=aging")
	if filtered != aging || cards != aging {
		t.Fatalf("?flag=aging shows %d open cards, %d of them aging; the board has %d aging", cards, filtered, aging)
	}
}

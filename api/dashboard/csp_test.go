package dashboard

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// The api package serves these pages under a Content-Security-Policy that
// allows no inline script or style (finding 8 of issue #12): a page that
// inlined either would render unstyled or broken in a browser. The test
// crawls every page reachable from the index and checks the markup for
// what that policy blocks, and that the stylesheet the pages link is
// served.
func TestPagesNeedNoInlineScriptOrStyle(t *testing.T) {
	t.Parallel()
	d, _, _ := newTestDashboard(t)
	h := d.Handler()
	seen := map[string]bool{}
	queue := []string{"/", "/ceo/demo/", "/ceo/empty/"}
	var sheets []string
	for len(queue) > 0 && len(seen) < 300 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code == http.StatusFound {
			queue = append(queue, rec.Header().Get("Location"))
			continue
		}
		if rec.Code != http.StatusOK {
			t.Errorf("%s: status %d", path, rec.Code)
			continue
		}
		doc, err := html.Parse(strings.NewReader(rec.Body.String()))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, n := range find(doc, func(*html.Node) bool { return true }) {
			switch {
			case n.Data == "style":
				t.Errorf("%s: inline <style> element", path)
			case n.Data == "script" && attr(n, "src") == "":
				t.Errorf("%s: inline <script> element", path)
			case n.Data == "link" && attr(n, "rel") == "stylesheet":
				sheets = append(sheets, attr(n, "href"))
			}
			for _, a := range n.Attr {
				if a.Key == "style" || strings.HasPrefix(a.Key, "on") {
					t.Errorf("%s: <%s %s=%q> is inline style or script", path, n.Data, a.Key, a.Val)
				}
				if (a.Key == "href" || a.Key == "src") && strings.HasPrefix(strings.TrimSpace(strings.ToLower(a.Val)), "javascript:") {
					t.Errorf("%s: javascript: URL", path)
				}
			}
			if n.Data == "a" {
				if u, err := url.Parse(attr(n, "href")); err == nil && u.Host == "" && strings.HasPrefix(u.Path, "/") {
					queue = append(queue, u.Path)
				}
			}
		}
	}
	t.Logf("crawled %d pages", len(seen))
	if len(seen) < 7 {
		t.Fatalf("crawled only %d pages: %v", len(seen), seen)
	}
	if len(sheets) == 0 {
		t.Fatal("no page links a stylesheet")
	}
	for _, href := range sheets {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, href, nil))
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/css") || !strings.Contains(rec.Body.String(), ".card") {
			t.Fatalf("stylesheet %s: %d %q", href, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
}

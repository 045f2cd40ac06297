package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// dashboardPage is one page the browser test opens, below the project's
// dashboard (/dashboard/acme/teapot), with the charts it must draw: CSS
// selectors of elements that must be there with a size.
type dashboardPage struct {
	Path   string
	Charts []string
}

// dashboardPages are every page of the demo's dashboard. A new page adds a
// line here; the test then checks it like the others.
var dashboardPages = []dashboardPage{
	{Path: "/", Charts: []string{".board .card", "dl.legend"}},
	{Path: "/?milestone=1&assignee=none", Charts: []string{".board .card"}},
	{Path: "/?flag=aging", Charts: []string{".board .card .badge.aging"}},
	{Path: "/issues/316", Charts: []string{"#issue-summary", "table#timeline"}},
	{Path: "/people", Charts: []string{"table#people tr[data-login]"}},
	{Path: "/runway", Charts: []string{"svg.runway .band", "svg.runway .due"}},
	{Path: "/milestones/1", Charts: []string{"svg.cone .s-curve", "svg.cone .due", "svg.cone .at-due", "svg.weeks .week", "svg.weeks .due", "svg.history .p50", "svg.history .p80", "svg.history .open"}},
	{Path: "/milestones/2", Charts: []string{"svg.cone .s-curve", "svg.weeks .week"}},
	{Path: "/milestones/3", Charts: []string{"svg.cone .s-curve", "svg.weeks .week"}},
	{Path: "/milestones/4", Charts: []string{"svg.cone .s-curve", "svg.weeks .week"}},
	{Path: "/calibration", Charts: []string{"table#people"}},
	{Path: "/directives", Charts: []string{"table#directives thead th", "table#directives tr.batch pre.copy"}},
	{Path: "/standup", Charts: []string{"#standup section#atRisk li", "#standup section#plan li"}},
	{Path: "/flow", Charts: []string{"svg.howmany .curve", "svg.scatter .dot", "svg.scatter .percentile", "svg.aging .item", "svg.throughput .week", "svg.wip .line", "svg.cfd .band"}},
	{Path: "/flow?by=2099-01-01"},
}

// browserWidth is the window width no page may overflow.
const browserWidth = 1280

// chromium finds Debian's Chromium (.ci/run installs it when missing).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium on PATH: install Debian's chromium package (apt-get install -y chromium); .ci/run does")
	return ""
}

// newBrowser starts headless Chromium with the flags this machine needs:
// no sandbox as root, and no background connections (the network is
// closed, and Chromium's own calls home would only fail).
func newBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(browserWidth, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	return ctx
}

// consoleErrors collects what a page reports as an error: console.error,
// uncaught exceptions, and the browser's own log entries at error level
// (failed loads, refused by a content security policy, ...).
type consoleErrors struct {
	mu   sync.Mutex
	page string
	got  []string
}

func (c *consoleErrors) listen(t *testing.T, ctx context.Context) {
	t.Helper()
	err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
				return
			}
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, strings.TrimSpace(string(a.Value)+" "+a.Description))
			}
			msg = "console." + string(ev.Type) + ": " + strings.Join(parts, " ")
		case *runtime.EventExceptionThrown:
			msg = "exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level != cdplog.EntryLevelError {
				return
			}
			msg = string(ev.Entry.Source) + ": " + ev.Entry.Text + " " + ev.Entry.URL
		default:
			return
		}
		c.mu.Lock()
		c.got = append(c.got, c.page+": "+msg)
		c.mu.Unlock()
	})
	if err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
}

func (c *consoleErrors) at(page string) {
	c.mu.Lock()
	c.page = page
	c.mu.Unlock()
}

func (c *consoleErrors) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}

// overflowScript lists what sticks out to the right of the window: the
// document's own scroll width and the widest elements past the edge.
const overflowScript = `(() => {
  const w = document.documentElement.clientWidth;
  const out = [];
  if (document.documentElement.scrollWidth > w) out.push("document scrolls to " + document.documentElement.scrollWidth + "px");
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.right > w + 1 && out.length < 6) out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && el.className.baseVal === undefined ? "." + el.className : "") + " ends at " + Math.round(r.right) + "px");
  }
  return out;
})()`

// chartScript says which of the selectors find nothing drawn.
const chartScript = `((sels) => sels.filter(s => {
  const el = document.querySelector(s);
  if (!el) return true;
  const r = el.getBoundingClientRect();
  return r.width + r.height < 1;
}))(%s)`

// TestBrowser opens every dashboard page of a seeded demo in headless
// Chromium at 1280 px: no page may log an error to the console or scroll
// sideways, every chart it should draw is there, and every link on every
// page answers.
func TestBrowser(t *testing.T) {
	path := chromium(t)
	// A Tuesday: the demo produces its standup.
	d := startDemo(t, "--date", "2026-12-01")
	seedLedger(t, d)
	ctx := newBrowser(t, path)
	errs := &consoleErrors{}
	errs.listen(t, ctx)
	// The printed link signs the browser in (a cookie) and lands on the
	// board.
	errs.at("dashboard link")
	if err := chromedp.Do(ctx, chromedp.Navigate(d.dash)); err != nil {
		t.Fatalf("open the dashboard link: %v", err)
	}
	project := d.base + "/dashboard/acme/teapot"
	links := map[string]string{} // link -> first page it was seen on
	for _, p := range dashboardPages {
		began := time.Now()
		errs.at(p.Path)
		resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(project+p.Path))
		if err != nil {
			t.Errorf("%s: %v", p.Path, err)
			continue
		}
		if resp.Status != http.StatusOK {
			t.Errorf("%s answers %d", p.Path, resp.Status)
			continue
		}
		overflow, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflowScript))
		if err != nil {
			t.Fatalf("%s: %v", p.Path, err)
		}
		missing, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(chartScript, jsStrings(p.Charts))))
		if err != nil {
			t.Fatalf("%s: %v", p.Path, err)
		}
		hrefs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("a[href]"), a => a.href)`))
		if err != nil {
			t.Fatalf("%s: %v", p.Path, err)
		}
		if len(overflow) > 0 {
			t.Errorf("%s overflows %d px: %s", p.Path, browserWidth, strings.Join(overflow, "; "))
		}
		if len(missing) > 0 {
			t.Errorf("%s draws no %s", p.Path, strings.Join(missing, ", "))
		}
		for _, h := range hrefs {
			if _, ok := links[h]; !ok {
				links[h] = p.Path
			}
		}
		if dir := os.Getenv("COMMITEA_SCREENSHOTS"); dir != "" {
			screenshot(t, ctx, dir, p.Path)
		}
		t.Logf("%s: %s", p.Path, time.Since(began).Round(time.Millisecond))
	}
	for _, e := range errs.all() {
		t.Errorf("console error on %s", e)
	}
	checked := 0
	for link, from := range links {
		u, err := url.Parse(link)
		if err != nil || u.Scheme == "javascript" {
			t.Errorf("%s links to %q", from, link)
			continue
		}
		u.Fragment = ""
		if status := get(t, d, u.String()); status >= 400 {
			t.Errorf("%s links to %s, which answers %d", from, link, status)
		}
		checked++
	}
	t.Logf("%d pages, %d distinct links checked", len(dashboardPages), checked)
}

// screenshot saves the whole page, as wide as the window, to dir as a PNG
// named after its path (deploy/screenshots.sh sets COMMITEA_SCREENSHOTS).
func screenshot(t *testing.T, ctx context.Context, dir, path string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	name := strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(path)), "-")
	if strings.HasPrefix(path, "/?") || name == "" {
		name = strings.Trim("board-"+name, "-")
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// seedLedger gives the directives page rows: a reprioritisation applied
// through apply_changes, and a re-estimate left pending.
func seedLedger(t *testing.T, d *runningDemo) {
	t.Helper()
	issue := d.find(t, `"set_estimate","issue":(\d+)`)
	var rec struct {
		Data struct {
			DirectiveID int64 `json:"directiveId"`
		} `json:"data"`
	}
	callTool(t, d, "record_directive", fmt.Sprintf(`{"kind":"reprioritize","quote":"The launch comes first: make #%s urgent.","target":{"issue":%s},"params":{"priority":0}}`, issue, issue), &rec)
	callTool(t, d, "apply_changes", fmt.Sprintf(`{"ops":[{"op":"set_priority","issue":%s,"priority":"p/0"}],"directiveId":%d}`, issue, rec.Data.DirectiveID), nil)
	callTool(t, d, "record_directive", fmt.Sprintf(`{"kind":"reestimate","quote":"#%s is really an XL.","target":{"issue":%s},"params":{"estimate":"est/xl"}}`, issue, issue), nil)
}

// get fetches link, with the demo's token when it is the service's own,
// and returns the status.
func get(t *testing.T, d *runningDemo, link string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(link, d.base+"/") {
		req.Header.Set("Authorization", "Bearer "+d.token)
	}
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("GET %s: %v", link, err)
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func jsStrings(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// callTool posts a tool call to the demo and decodes the answer into out
// (when not nil); a refusal fails the test.
func callTool(t *testing.T, d *runningDemo, name, body string, out any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, d.base+"/v1/tools/"+name, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", name, body, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: %v in %s", name, err, raw)
		}
	}
}

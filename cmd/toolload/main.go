// Command toolload measures query_project under load. It creates a fresh
// database, generates a project of -issues issues (open and done, with
// milestones, dependencies and history), runs the real recompute to get a
// snapshot, serves the real router on a loopback TCP port, and sends
// query_project focus, board and milestone calls in turn at a fixed rate
// (open loop: latency counts from when a request was due, so a stalled
// server cannot hide its queue). It prints p50, p99 and errors per view and
// overall, then steps the rate up to find the highest one held with p99
// under -p99.
//
//	go run ./cmd/toolload -issues 5000 -rate 300 -duration 20s
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/commitea/commitea/api"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/tools"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "toolload:", err)
		os.Exit(1)
	}
}

const secret = "toolload-secret-0123456789"

type options struct {
	issues     int
	rate       float64
	duration   time.Duration
	stepFor    time.Duration
	maxRate    float64
	p99        time.Duration
	milestones int
	factor     float64
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("toolload", flag.ContinueOnError)
	dbURL := fs.String("database", envOr("TEST_DATABASE_URL", storetest.DefaultURL), "administrative database URL; the run creates and drops its own database")
	var o options
	fs.IntVar(&o.issues, "issues", 5000, "issues in the generated project (30% done)")
	fs.IntVar(&o.milestones, "milestones", 8, "milestones in the generated project")
	fs.Float64Var(&o.rate, "rate", 300, "requests per second of the main run")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "length of the main run")
	fs.DurationVar(&o.stepFor, "step", 5*time.Second, "length of each step of the rate search (0 skips it)")
	fs.Float64Var(&o.maxRate, "max-rate", 6400, "highest rate the search tries")
	fs.Float64Var(&o.factor, "factor", 1.5, "rate multiplier between search steps")
	fs.DurationVar(&o.p99, "p99", 15*time.Millisecond, "p99 bound of the rate search")
	settle := fs.Duration("settle", 0, "wait this long after the recompute before loading (lets autovacuum finish)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the main run to `file`")
	if err := fs.Parse(args); err != nil {
		return err
	}

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pool, cleanup, err := storetest.Scratch(ctx, *dbURL, "commitea_toolload", log)
	if err != nil {
		return err
	}
	defer cleanup()
	p, err := store.EnsureProject(ctx, pool, "load", "big")
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Hour)
	done := o.issues * 3 / 10
	shape := storetest.ProjectShape{Open: o.issues - done, Done: done, People: 15, DepShare: 0.3, Milestones: o.milestones, Seed: 42}
	start := time.Now()
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, now); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	seeded := time.Since(start)
	start = time.Now()
	f := &worker.Forecaster{Pool: pool, Log: log, Now: func() time.Time { return now }}
	if err := f.Recompute(ctx, p.ID); err != nil {
		return fmt.Errorf("recompute: %w", err)
	}
	snap, err := store.LatestSnapshot(ctx, pool, p.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "toolload: %d issues (%d open, %d done), %d milestones; seeded in %s, recomputed in %s, snapshot %d KB; %d CPUs\n",
		o.issues, o.issues-done, done, o.milestones, seeded.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), len(snap.Data)/1024, runtime.NumCPU())

	time.Sleep(*settle)
	reg := tools.NewService(pool, []store.Project{p}, log).Registry()
	router := api.NewRouter(api.Config{Tools: reg, Tokens: []api.Token{{Name: "load", Scopes: []string{"read"}, Secret: secret}}, Log: log})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: serverTimer.wrap(router), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024}}

	// Warm the cache and the connections, as a running server is.
	for i := range 30 {
		if _, _, err := call(ctx, client, base, request(i, o.milestones)); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}

	fmt.Fprintf(out, "main run: %.0f req/s for %s, views focus, board and milestone in turn\n", o.rate, o.duration)
	if *cpuProfile != "" {
		pf, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
	}
	serverTimer.take()
	res := load(ctx, client, base, o.rate, o.duration, o.milestones)
	if *cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	res.print(out)
	st := serverTimer.take()
	fmt.Fprintf(out, "  server-side handler time: p50 %s, p99 %s, max %s\n", st.p(0.5).Round(10*time.Microsecond), st.p(0.99).Round(10*time.Microsecond), st.p(1).Round(10*time.Microsecond))
	worst := res.worstSeconds(3)
	fmt.Fprintf(out, "  slowest seconds (max latency): %s\n", worst)

	if o.stepFor <= 0 {
		return nil
	}
	fmt.Fprintf(out, "rate search: %s per step, p99 bound %s\n", o.stepFor, o.p99)
	best := 0.0
	if o.factor <= 1 {
		return fmt.Errorf("-factor must be above 1")
	}
	for rate := o.rate; rate <= o.maxRate; rate *= o.factor {
		r := load(ctx, client, base, rate, o.stepFor, o.milestones)
		all := r.all()
		held := all.errors == 0 && all.p(0.99) < o.p99 && r.achieved >= 0.95*rate
		fmt.Fprintf(out, "  %6.0f req/s: achieved %6.0f, p50 %6s, p99 %6s, errors %d, held %v\n",
			rate, r.achieved, all.p(0.5).Round(10*time.Microsecond), all.p(0.99).Round(10*time.Microsecond), all.errors, held)
		if !held {
			break
		}
		best = rate
	}
	fmt.Fprintf(out, "highest rate held with p99 under %s: %.0f req/s (steps of x%g)\n", o.p99, best, o.factor)
	return nil
}

var views = []string{"focus", "board", "milestone"}

// request is the i-th request body: the views in turn, the milestone view
// walking the milestones.
func request(i, milestones int) []byte {
	v := views[i%len(views)]
	if v == "milestone" {
		return fmt.Appendf(nil, `{"view":"milestone","filters":{"milestoneId":%d}}`, 1+(i/len(views))%milestones)
	}
	return fmt.Appendf(nil, `{"view":%q}`, v)
}

func call(ctx context.Context, client *http.Client, base string, body []byte) (int, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/tools/query_project", bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return resp.StatusCode, int(n), err
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, int(n), fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp.StatusCode, int(n), nil
}

type sample struct {
	view    int
	latency time.Duration
	bytes   int
	err     bool
}

type result struct {
	achieved float64
	samples  []sample
}

type stats struct {
	lat    []time.Duration
	errors int
	bytes  int
}

func (s stats) p(q float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	return s.lat[min(len(s.lat)-1, int(q*float64(len(s.lat))))]
}

func (r result) by(view int) stats {
	var s stats
	for _, x := range r.samples {
		if view >= 0 && x.view != view {
			continue
		}
		if x.err {
			s.errors++
			continue
		}
		s.lat = append(s.lat, x.latency)
		s.bytes += x.bytes
	}
	slices.Sort(s.lat)
	return s
}

func (r result) all() stats { return r.by(-1) }

func (r result) print(out io.Writer) {
	for i, v := range views {
		s := r.by(i)
		avg := 0
		if len(s.lat) > 0 {
			avg = s.bytes / len(s.lat)
		}
		fmt.Fprintf(out, "  %-9s n=%5d  p50 %8s  p99 %8s  max %8s  errors %d  avg answer %d bytes\n", v, len(s.lat)+s.errors,
			s.p(0.5).Round(10*time.Microsecond), s.p(0.99).Round(10*time.Microsecond), s.p(1).Round(10*time.Microsecond), s.errors, avg)
	}
	s := r.all()
	fmt.Fprintf(out, "  %-9s n=%5d  p50 %8s  p99 %8s  max %8s  errors %d  achieved %.0f req/s\n", "all", len(s.lat)+s.errors,
		s.p(0.5).Round(10*time.Microsecond), s.p(0.99).Round(10*time.Microsecond), s.p(1).Round(10*time.Microsecond), s.errors, r.achieved)
}

// load sends rate requests per second for d, each due at start+i/rate,
// and measures each from when it was due.
func load(ctx context.Context, client *http.Client, base string, rate float64, d time.Duration, milestones int) result {
	n := int(rate * d.Seconds())
	samples := make([]sample, n)
	interval := time.Duration(float64(time.Second) / rate)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, size, err := call(ctx, client, base, request(i, milestones))
			samples[i] = sample{view: i % len(views), latency: time.Since(due), bytes: size, err: err != nil}
		}()
	}
	sent := time.Since(start)
	wg.Wait()
	return result{achieved: float64(n) / sent.Seconds(), samples: samples}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// timer records how long the server's handler took, to tell server time
// from queueing in the client, the kernel or the scheduler.
type timer struct {
	mu  sync.Mutex
	lat []time.Duration
}

var serverTimer = &timer{}

func (t *timer) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h.ServeHTTP(w, r)
		d := time.Since(start)
		t.mu.Lock()
		t.lat = append(t.lat, d)
		t.mu.Unlock()
	})
}

func (t *timer) take() stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := stats{lat: t.lat}
	t.lat = nil
	slices.Sort(s.lat)
	return s
}

// worstSeconds names the seconds of the run with the highest latency.
func (r result) worstSeconds(n int) string {
	if len(r.samples) == 0 || r.achieved == 0 {
		return "-"
	}
	perSecond := int(r.achieved + 0.5)
	type sec struct {
		i   int
		max time.Duration
	}
	var secs []sec
	for i := 0; i*perSecond < len(r.samples); i++ {
		s := sec{i: i}
		for _, x := range r.samples[i*perSecond : min(len(r.samples), (i+1)*perSecond)] {
			s.max = max(s.max, x.latency)
		}
		secs = append(secs, s)
	}
	slices.SortFunc(secs, func(a, b sec) int { return int(b.max - a.max) })
	var parts []string
	for _, s := range secs[:min(n, len(secs))] {
		parts = append(parts, fmt.Sprintf("s%d %s", s.i, s.max.Round(100*time.Microsecond)))
	}
	return strings.Join(parts, ", ")
}

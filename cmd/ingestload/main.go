// Command ingestload measures webhook ingest against the database's raw
// insert rate on the same machine, in the same run. Each round creates a
// fresh database, times single-row inserts of the same payloads from C
// concurrent writers, then posts N signed, real-shaped deliveries over
// loopback from C concurrent clients to the real router and ingester, with
// no retries, and counts the stored rows and the non-2xx answers
// afterwards. The deliveries are the recorded fixtures (opened, edited,
// labelled, milestoned, commented, closed), each with its own issue's
// labels in its own order and its own milestone, so concurrent writers
// touch overlapping label rows as Gitea's deliveries do: one template
// would lock the same rows in the same order and hide deadlocks. Then, per round, a freshness burst: a
// generated 2,000-issue project with the recompute worker running as serve
// runs it, a burst of deliveries, and the time from the last acknowledgement
// to a snapshot that covers every change. It prints every round and the
// medians.
//
// With -rounds 0 -hostile N it measures instead the bounds on
// unauthenticated bodies: N at once, half trickled, half 10 MiB, and the
// process's peak resident memory.
//
// With -serve BINARY it measures a real `commitea serve` child process from
// outside instead: -n realistic deliveries from -c clients, no retries,
// then the -hostile attack with the child's peak resident memory.
//
//	go run ./cmd/ingestload -n 20000 -c 32 -rounds 3
//	go run ./cmd/ingestload -rounds 0 -hostile 1000
//	go build -o /tmp/commitea ./cmd/commitea && go run ./cmd/ingestload -serve /tmp/commitea -n 2000 -c 32 -hostile 1000
package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/api"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
)

type round struct {
	rawCost    phaseCost
	ingestCost phaseCost
	rawRate    float64
	ingestRate float64
	p50, p99   time.Duration
	lost       int64
	errors     int64
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ingestload:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("ingestload", flag.ContinueOnError)
	dbURL := fs.String("database", envOr("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "administrative database URL; each round creates and drops its own database")
	n := fs.Int("n", 20000, "deliveries (and raw rows) per round")
	c := fs.Int("c", 32, "concurrent clients")
	rounds := fs.Int("rounds", 3, "rounds; medians are reported")
	issues := fs.Int("issues", 200, "distinct issues the deliveries touch")
	hostile := fs.Int("hostile", 0, "unauthenticated slow or 10 MiB bodies sent at once after the rounds, measuring peak RSS (0 skips it)")
	serve := fs.String("serve", "", "a built commitea binary: run it as `serve` in a child process and send it the -n deliveries from -c clients, then the -hostile attack, sampling the child's RSS (skips the in-process rounds)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the ingest phase of every round to this file")
	pgLog := fs.Bool("pglog", false, "log every statement of the ingest phase with its duration to the database server's log (log_min_duration_statement 0 on the round's database)")
	costs := fs.Bool("costs", false, "print each phase's CPU (this process and the database backends), commits and rows written per row or delivery")
	burst := fs.Int("burst", 1000, "deliveries in the freshness burst against a 2,000-issue project with the recompute worker running (0 skips it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *serve != "" {
		return serveRound(ctx, *dbURL, *serve, *n, *c, *hostile, out)
	}
	if *hostile > 0 && *rounds == 0 {
		return hostileRound(ctx, *dbURL, *hostile, out)
	}
	load, err := realisticDeliveries(*n, *issues, 1)
	if err != nil {
		return err
	}
	size := 0
	for _, d := range load {
		size += len(d.body)
	}
	fmt.Fprintf(out, "ingestload: %d deliveries x %d rounds, %d clients, %d issues, mean payload %d bytes\n", *n, *rounds, *c, *issues, size/len(load))
	var rs []round
	for i := range *rounds {
		r, err := oneRound(ctx, *dbURL, load, *c, *cpuProfile, *costs, *pgLog)
		if err != nil {
			return fmt.Errorf("round %d: %w", i+1, err)
		}
		rs = append(rs, r)
		fmt.Fprintf(out, "round %d: raw insert %.0f rows/s | ingest %.0f deliveries/s (%.2fx) p50 %s p99 %s | lost %d errors %d\n",
			i+1, r.rawRate, r.ingestRate, r.ingestRate/r.rawRate, r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.lost, r.errors)
		if *costs {
			fmt.Fprintf(out, "  raw per row: %s\n  ingest per delivery: %s\n", r.rawCost, r.ingestCost)
		}
	}
	med := func(f func(round) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	fmt.Fprintf(out, "median: raw insert %.0f rows/s | ingest %.0f deliveries/s | ratio %.2fx | p50 %s p99 %s\n",
		med(func(r round) float64 { return r.rawRate }), med(func(r round) float64 { return r.ingestRate }),
		med(func(r round) float64 { return r.ingestRate / r.rawRate }),
		time.Duration(med(func(r round) float64 { return float64(r.p50) })).Round(10*time.Microsecond),
		time.Duration(med(func(r round) float64 { return float64(r.p99) })).Round(10*time.Microsecond))
	if *burst <= 0 {
		return nil
	}
	var lags []time.Duration
	for i := range *rounds {
		b, err := burstRound(ctx, *dbURL, *burst, *c)
		if err != nil {
			return fmt.Errorf("burst %d: %w", i+1, err)
		}
		lags = append(lags, b.lag)
		fmt.Fprintf(out, "burst %d: %d deliveries acknowledged in %s; fresh snapshot %s after the last (recompute runs %d, last took %s)\n",
			i+1, *burst, b.post.Round(time.Millisecond), b.lag.Round(time.Millisecond), b.snapshots, b.took.Round(time.Millisecond))
	}
	slices.Sort(lags)
	fmt.Fprintf(out, "median: fresh snapshot %s after the last delivery of a burst of %d\n", lags[len(lags)/2].Round(time.Millisecond), *burst)
	return nil
}

func oneRound(ctx context.Context, adminURL string, load []delivery, c int, cpuProfile string, costs, pgLog bool) (round, error) {
	var r round
	n := len(load)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pool, cleanup, err := storetest.Scratch(ctx, adminURL, "commitea_load", log)
	if err != nil {
		return r, err
	}
	defer cleanup()

	// Raw single-row inserts, synchronous commit, same payload size.
	if _, err := pool.Exec(ctx, `CREATE TABLE raw_insert (id bigserial PRIMARY KEY, delivery text UNIQUE, payload bytea)`); err != nil {
		return r, err
	}
	mark := func() (cpuMark, cpuMark, error) {
		if !costs {
			return cpuMark{}, cpuMark{}, nil
		}
		return markCPU(ctx, pool)
	}
	_, m0, err := mark()
	if err != nil {
		return r, err
	}
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	var rawErr atomic.Value
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				if _, err := pool.Exec(ctx, `INSERT INTO raw_insert (delivery, payload) VALUES ($1, $2)`, fmt.Sprint("raw-", i), load[i-1].body); err != nil {
					rawErr.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := rawErr.Load().(error); err != nil {
		return r, fmt.Errorf("raw insert: %w", err)
	}
	r.rawRate = float64(n) / time.Since(start).Seconds()
	m1, _, err := mark()
	if err != nil {
		return r, err
	}
	r.rawCost = m1.costSince(m0, n)

	// The real ingest path over loopback.
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		return r, err
	}
	jobs, err := worker.NewJobClient(pool, worker.JobClientConfig{Log: log})
	if err != nil {
		return r, err
	}
	in := worker.NewIngester(pool, jobs, []store.Project{p}, log, worker.IngesterConfig{})
	in.Start()
	defer in.Close()
	const secret = "load-secret"
	srv := httptest.NewServer(api.NewRouter(api.Config{WebhookSecret: secret, Sink: in, Decode: gitea.DecodeDelivery, Log: log}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c, MaxConnsPerHost: c}}
	lat := make([]time.Duration, n)
	var failures atomic.Int64
	next.Store(0)
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return r, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return r, err
		}
	}
	if pgLog {
		if _, err := pool.Exec(ctx, `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET log_min_duration_statement = 0', current_database()); END $$`); err != nil {
			return r, err
		}
		pool.Reset()
	}
	_, m1, err = mark()
	if err != nil {
		return r, err
	}
	start = time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				t0 := time.Now()
				err := post(ctx, client, srv.URL, secret, fmt.Sprintf("load-%d", i), load[i])
				lat[i] = time.Since(t0)
				if err != nil {
					failures.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	r.ingestRate = float64(n) / elapsed.Seconds()
	if cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	m2, _, err := mark()
	if err != nil {
		return r, err
	}
	r.ingestCost = m2.costSince(m1, n)
	slices.Sort(lat)
	r.p50 = lat[n/2]
	r.p99 = lat[n*99/100]
	r.errors = failures.Load()
	stored, err := store.CountDeliveries(ctx, pool)
	if err != nil {
		return r, err
	}
	r.lost = int64(n) - stored
	return r, nil
}

type burst struct {
	post, lag, took time.Duration
	snapshots       int
}

// burstRound seeds a 2,000-issue project, runs the recompute worker and the
// freshness watch as serve does, posts n deliveries from c clients, and
// measures how long after the last acknowledgement a snapshot covering
// every change is stored.
func burstRound(ctx context.Context, adminURL string, n, c int) (burst, error) {
	var b burst
	load, err := realisticDeliveries(n, 2000, 1001)
	if err != nil {
		return b, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pool, cleanup, err := storetest.Scratch(ctx, adminURL, "commitea_load", log)
	if err != nil {
		return b, err
	}
	defer cleanup()
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		return b, err
	}
	shape := storetest.ProjectShape{Open: 2000, Done: 1000, People: 20, DepShare: 0.3, Milestones: 3, Seed: 7}
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, time.Now()); err != nil {
		return b, err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &worker.RecomputeWorker{Pool: pool, Log: log,
		Recomputer: &worker.Forecaster{Pool: pool, Log: log, Trials: 2000}})
	jobs, err := worker.NewJobClient(pool, worker.JobClientConfig{Work: true, Workers: workers, Log: log})
	if err != nil {
		return b, err
	}
	if err := jobs.Start(ctx); err != nil {
		return b, err
	}
	defer func() { _ = jobs.Stop(context.WithoutCancel(ctx)) }()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go (&worker.FreshnessWatch{Pool: pool, Jobs: jobs, Log: log}).Run(watchCtx)
	fresh := func() (bool, error) {
		s, err := store.LatestSnapshot(ctx, pool, p.ID)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		counter, err := store.ChangeCounter(ctx, pool, p.ID)
		b.took = s.Duration
		return err == nil && s.ChangeCounter == counter, err
	}
	waitFresh := func(limit time.Duration) (time.Duration, error) {
		start := time.Now()
		for time.Since(start) < limit {
			ok, err := fresh()
			if err != nil || ok {
				return time.Since(start), err
			}
			time.Sleep(5 * time.Millisecond)
		}
		return 0, fmt.Errorf("no fresh snapshot within %s", limit)
	}
	if _, err := waitFresh(time.Minute); err != nil {
		return b, fmt.Errorf("first snapshot: %w", err)
	}
	before, err := snapshotCount(ctx, pool)
	if err != nil {
		return b, err
	}

	in := worker.NewIngester(pool, jobs, []store.Project{p}, log, worker.IngesterConfig{})
	in.Start()
	defer in.Close()
	const secret = "load-secret"
	srv := httptest.NewServer(api.NewRouter(api.Config{WebhookSecret: secret, Sink: in, Decode: gitea.DecodeDelivery, Log: log}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c, MaxConnsPerHost: c}}
	var next, failures atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if err := post(ctx, client, srv.URL, secret, fmt.Sprintf("burst-%d", i), load[i]); err != nil {
					failures.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	b.post = time.Since(start)
	if f := failures.Load(); f > 0 {
		return b, fmt.Errorf("%d deliveries failed", f)
	}
	if b.lag, err = waitFresh(30 * time.Second); err != nil {
		return b, err
	}
	after, err := snapshotCount(ctx, pool)
	b.snapshots = after - before
	return b, err
}

func snapshotCount(ctx context.Context, pool *store.Pool) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM snapshots`).Scan(&n)
	return n, err
}

// post sends one signed delivery and wants 202; there are no retries.
func post(ctx context.Context, client *http.Client, base, secret, id string, d delivery) error {
	body := d.body
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/webhooks/gitea", bytes.NewReader(body))
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req.Header.Set("X-Gitea-Signature", hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("X-Gitea-Event", d.event)
	req.Header.Set("X-Gitea-Delivery", id)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("delivery %s: status %d", id, resp.StatusCode)
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

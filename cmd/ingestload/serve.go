package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/commitea/commitea/api"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// serveRound measures a real `commitea serve` from outside, as an
// operator's load balancer and Gitea see it: binary runs as a child
// process with the default configuration (bounds included) against a
// scratch database and a fake Gitea serving ceo/demo. First n realistic
// deliveries from c clients with no retries, every answer counted and
// every delivery looked for in the database; then, when hostile > 0, the
// unauthenticated attack of hostileRound, with the child's resident memory
// (and only the child's) sampled throughout.
func serveRound(ctx context.Context, adminURL, binary string, n, c, hostile int, out io.Writer) error {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pool, cleanup, err := storetest.Scratch(ctx, adminURL, "commitea_load", log)
	if err != nil {
		return err
	}
	defer cleanup()
	var dbName string
	if err := pool.QueryRow(ctx, `SELECT current_database()`).Scan(&dbName); err != nil {
		return err
	}
	dbURL, err := url.Parse(adminURL)
	if err != nil {
		return fmt.Errorf("database URL: %w", err)
	}
	dbURL.Path = "/" + dbName
	fake, err := giteafake.New(giteafake.Options{})
	if err != nil {
		return err
	}
	defer fake.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()

	const secret = "load-webhook-secret-0123456789"
	logFile, err := os.CreateTemp("", "commitea-serve-*.log")
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, binary, "serve")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"DATABASE_URL=" + dbURL.String(),
		"GITEA_URL=" + fake.URL, "GITEA_TOKEN=" + fake.Token(),
		"COMMITEA_WEBHOOK_SECRET=" + secret,
		"COMMITEA_PROJECTS=" + fake.Repo(),
		"COMMITEA_ADDR=" + addr,
		"COMMITEA_LOG_LEVEL=warn",
	}
	for _, k := range []string{"GOMEMLIMIT", "GOGC"} {
		// The Go runtime's memory knobs, so their effect on the attack's
		// peak can be measured.
		if v := os.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s serve: %w", binary, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	fail := func(err error) error { return fmt.Errorf("%w (serve's log: %s)", err, logFile.Name()) }
	base := "http://" + addr
	client := &http.Client{Timeout: 5 * time.Second}
	if err := waitUntil(60*time.Second, exited, func() bool {
		resp, err := client.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		return fail(fmt.Errorf("serve never ready: %w", err))
	}
	// The start-up backfill of the (small) fake project, so the load meets
	// a service in its steady state.
	if err := waitUntil(60*time.Second, exited, func() bool {
		var done int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM sync_state WHERE backfill_done_at IS NOT NULL`).Scan(&done)
		return err == nil && done > 0
	}); err != nil {
		return fail(fmt.Errorf("start-up backfill: %w", err))
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	childRSS := func() int64 { return rss(pid) }

	if n > 0 {
		load, err := realisticDeliveries(n, 200, 1)
		if err != nil {
			return err
		}
		before := childRSS()
		var peak atomic.Int64
		stop := sampleRSS(childRSS, &peak)
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c, MaxConnsPerHost: c}, Timeout: 30 * time.Second}
		var next atomic.Int64
		var mu sync.Mutex
		answers := map[string]int{}
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
					answer := "202"
					if err := post(ctx, hc, base, secret, fmt.Sprintf("serve-%d", i), load[i]); err != nil {
						answer = err.Error()
						if _, status, ok := strings.Cut(answer, "status "); ok {
							answer = status
						}
					}
					mu.Lock()
					answers[answer]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		took := time.Since(start)
		stop()
		stored, err := store.CountDeliveries(ctx, pool)
		if err != nil {
			return err
		}
		var keys []string
		for k, v := range answers {
			keys = append(keys, fmt.Sprintf("%s: %d", k, v))
		}
		slices.Sort(keys)
		fmt.Fprintf(out, "serve: %d realistic deliveries from %d clients, no retries, in %s (%.0f/s): %s; stored %d of %d; serve's RSS before %.1f MiB, peak %.1f MiB\n",
			n, c, took.Round(time.Millisecond), float64(n)/took.Seconds(), strings.Join(keys, ", "), stored, n,
			float64(before)/(1<<20), float64(peak.Load())/(1<<20))
	}
	if hostile > 0 {
		a, err := attack(ctx, addr, hostile, DefaultServeMaxBody, secret, childRSS)
		if err != nil {
			return fail(err)
		}
		a.print(out, "serve hostile", api.DefaultMaxBufferedBytes)
		fmt.Fprintf(out, "serve hostile: afterwards RSS %.1f MiB, of it file-backed (the binary's pages) %.1f MiB\n",
			float64(rss(pid))/(1<<20), float64(procStatus(pid, "RssFile:"))/(1<<20))
	}
	select {
	case err := <-exited:
		return fail(fmt.Errorf("serve exited during the load: %v", err))
	default:
	}
	resp, err := client.Get(base + "/healthz")
	if err != nil {
		return fail(fmt.Errorf("serve after the load: %w", err))
	}
	resp.Body.Close()
	fmt.Fprintf(out, "serve: still serving afterwards (/healthz %d)\n", resp.StatusCode)
	return nil
}

// DefaultServeMaxBody is serve's default server.max_body_bytes, the size
// the attack's large bodies announce.
const DefaultServeMaxBody = 10 << 20

// waitUntil polls cond every 50 ms until it holds, the child exits, or d
// passes.
func waitUntil(d time.Duration, exited <-chan error, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		select {
		case err := <-exited:
			return fmt.Errorf("serve exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return errors.New("timed out after " + d.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// sampleRSS records the peak of rssOf every 20 ms until the returned stop
// is called.
func sampleRSS(rssOf func() int64, peak *atomic.Int64) (stop func()) {
	peak.Store(rssOf())
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if r := rssOf(); r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/commitea/commitea/api"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
)

// hostileRound serves the real router in the server serve runs, with the
// default bounds, and sends it n unauthenticated bodies at once: half
// trickled a byte at a time, half 10 MiB as fast as loopback takes them.
// It samples this process's resident memory (the server, the attackers'
// few buffers and the Go runtime) throughout and reports the peak, the
// answers, and a signed delivery sent in the middle of it.
func hostileRound(ctx context.Context, adminURL string, n int, out io.Writer) error {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pool, cleanup, err := storetest.Scratch(ctx, adminURL, "commitea_load", log)
	if err != nil {
		return err
	}
	defer cleanup()
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		return err
	}
	jobs, err := worker.NewJobClient(pool, worker.JobClientConfig{Log: log})
	if err != nil {
		return err
	}
	in := worker.NewIngester(pool, jobs, []store.Project{p}, log, worker.IngesterConfig{})
	in.Start()
	defer in.Close()
	const secret = "load-secret"
	const maxBody = 10 << 20
	srv := api.NewServer("", api.NewRouter(api.Config{WebhookSecret: secret, MaxBodyBytes: maxBody, Sink: in, Decode: gitea.DecodeDelivery, Log: log}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	addr := ln.Addr().String()

	runtime.GC()
	a, err := attack(ctx, addr, n, maxBody, secret, func() int64 { return rss("self") })
	if err != nil {
		return err
	}
	a.print(out, "hostile", api.DefaultMaxBufferedBytes)
	return nil
}

// attackResult is what one hostile attack saw.
type attackResult struct {
	n          int
	took       time.Duration
	answers    string
	base, peak int64
	openMid    int64
	real       string
}

func (a attackResult) print(out io.Writer, label string, budget int64) {
	fmt.Fprintf(out, "%s: %d unauthenticated bodies (%d trickled a byte per 100ms, %d of 10 MiB at full speed), all answered in %s: %s\n",
		label, a.n, (a.n+1)/2, a.n/2, a.took.Round(time.Millisecond), a.answers)
	fmt.Fprintf(out, "%s: RSS before %.1f MiB, peak %.1f MiB (budget %d MiB + 64 MiB = %d MiB); connections open 2s in: %d; signed delivery sent 2s in: %s\n",
		label, float64(a.base)/(1<<20), float64(a.peak)/(1<<20), budget>>20, budget>>20+64, a.openMid, a.real)
}

// attack sends n unauthenticated bodies at once to the webhook at addr,
// half trickled a byte at a time, half maxBody bytes as fast as loopback
// takes them, and one signed delivery 2 s in, sampling memory with rssOf
// every 20 ms throughout.
func attack(ctx context.Context, addr string, n, maxBody int, secret string, rssOf func() int64) (attackResult, error) {
	var a attackResult
	a.n = n
	base := rssOf()
	var peak atomic.Int64
	stopSampling := sampleRSS(rssOf, &peak)

	var mu sync.Mutex
	answers := map[string]int{}
	var open atomic.Int64
	var wg sync.WaitGroup
	chunk := make([]byte, 64<<10)
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				mu.Lock()
				answers["dial error"]++
				mu.Unlock()
				return
			}
			open.Add(1)
			defer func() { open.Add(-1); _ = c.Close() }()
			fmt.Fprintf(c, "POST /webhooks/gitea HTTP/1.1\r\nHost: x\r\nX-Gitea-Event: issues\r\nX-Gitea-Delivery: h-%d\r\nX-Gitea-Signature: %064d\r\nContent-Length: %d\r\n\r\n", i, 0, maxBody)
			got := make(chan string, 1)
			go func() {
				_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					got <- "no answer"
					return
				}
				resp.Body.Close()
				got <- strconv.Itoa(resp.StatusCode)
			}()
			slow := i%2 == 0
			sent := 0
			for sent < maxBody {
				select {
				case a := <-got:
					mu.Lock()
					answers[a]++
					mu.Unlock()
					return
				default:
				}
				var err error
				if slow {
					_, err = c.Write(chunk[:1])
					sent++
					time.Sleep(100 * time.Millisecond)
				} else {
					var m int
					m, err = c.Write(chunk[:min(len(chunk), maxBody-sent)])
					sent += m
				}
				if err != nil {
					break
				}
			}
			a := <-got
			mu.Lock()
			answers[a]++
			mu.Unlock()
		}()
	}
	// A real delivery in the middle of it.
	time.Sleep(2 * time.Second)
	load, err := realisticDeliveries(1, 1, 1)
	if err != nil {
		return a, err
	}
	client := &http.Client{Timeout: 30 * time.Second}
	realErr := post(ctx, client, "http://"+addr, secret, "real-during-attack", load[0])
	openMid := open.Load()
	wg.Wait()
	stopSampling()
	took := time.Since(start)
	mu.Lock()
	var keys []string
	for k, v := range answers {
		keys = append(keys, fmt.Sprintf("%s: %d", k, v))
	}
	mu.Unlock()
	slices.Sort(keys)
	a.took, a.answers, a.base, a.peak, a.openMid = took, strings.Join(keys, ", "), base, peak.Load(), openMid
	a.real = "202"
	if realErr != nil {
		a.real = realErr.Error()
	}
	return a, nil
}

// rss is the resident set size in bytes of process pid ("self" for this
// one), from /proc (Linux), or 0.
func rss(pid string) int64 { return procStatus(pid, "VmRSS:") }

// procStatus reads one size field of /proc/PID/status in bytes, or 0.
func procStatus(pid, field string) int64 {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

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
	base := rss()
	var peak atomic.Int64
	peak.Store(base)
	stopSampling := make(chan struct{})
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
				if r := rss(); r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	}()

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
		return err
	}
	client := &http.Client{Timeout: 30 * time.Second}
	realErr := post(ctx, client, "http://"+addr, secret, "real-during-attack", load[0])
	openMid := open.Load()
	wg.Wait()
	close(stopSampling)
	took := time.Since(start)
	mu.Lock()
	var keys []string
	for k, v := range answers {
		keys = append(keys, fmt.Sprintf("%s: %d", k, v))
	}
	mu.Unlock()
	slices.Sort(keys)
	real := "202"
	if realErr != nil {
		real = realErr.Error()
	}
	fmt.Fprintf(out, "hostile: %d unauthenticated bodies (%d trickled a byte per 100ms, %d of 10 MiB at full speed), all answered in %s: %s\n",
		n, (n+1)/2, n/2, took.Round(time.Millisecond), strings.Join(keys, ", "))
	fmt.Fprintf(out, "hostile: RSS before %.1f MiB, peak %.1f MiB (budget %d MiB + 64 MiB = %d MiB); connections open 2s in: %d; signed delivery sent 2s in: %s\n",
		float64(base)/(1<<20), float64(peak.Load())/(1<<20), api.DefaultMaxBufferedBytes>>20, api.DefaultMaxBufferedBytes>>20+64, openMid, real)
	return nil
}

// rss is this process's resident set size in bytes (Linux), or 0.
func rss() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

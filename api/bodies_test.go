package api

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rawPost opens a connection and sends a webhook request's headers with
// the given Content-Length, then the first part of the body.
func rawPost(t *testing.T, addr string, length int, part []byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	fmt.Fprintf(c, "POST /webhooks/gitea HTTP/1.1\r\nHost: x\r\nX-Gitea-Event: issues\r\nX-Gitea-Delivery: slow\r\nX-Gitea-Signature: 00\r\nContent-Length: %d\r\n\r\n", length)
	if _, err := c.Write(part); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSlowBodyIsCutOff: only ReadHeaderTimeout was set, so a body
// trickled a byte at a time kept its connection open indefinitely. The
// webhook's read deadline answers 408 and closes the connection.
func TestSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(NewRouter(Config{WebhookSecret: testSecret, Sink: &recordingSink{}, Decode: jsonDecoder,
		WebhookReadTimeout: 300 * time.Millisecond, Log: quietLog()}))
	t.Cleanup(srv.Close)
	c := rawPost(t, srv.Listener.Addr().String(), 1000, []byte("{"))
	answered := make(chan string, 1)
	go func() {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			answered <- err.Error()
			return
		}
		resp.Body.Close()
		answered <- fmt.Sprintf("%s close=%v", resp.Status, resp.Close)
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	// Without a deadline the trickle is served forever: fail after ten
	// times the read timeout rather than hang until the test binary's.
	giveUp := time.After(3 * time.Second)
	for {
		select {
		case got := <-answered:
			if !strings.HasPrefix(got, "408") || !strings.Contains(got, "close=true") {
				t.Fatalf("trickled body answered %q, want 408 and the connection closed", got)
			}
			return
		case <-giveUp:
			t.Fatal("a body trickled a byte every 50 ms is still being read after 3 s; want 408 after the 300 ms read timeout")
		case <-tick.C:
			_, _ = c.Write([]byte(" ")) // one byte at a time, forever
		}
	}
}

// TestBufferedBytesAreBounded: the webhook read every body whole before
// the signature check, with no bound across requests (40 connections of
// 10 MiB took RSS from 63 MB to 544 MB). Once the budget of buffered bytes
// is spent, a request is answered 503 with Retry-After; when the slow
// senders go, deliveries are taken again.
func TestBufferedBytesAreBounded(t *testing.T) {
	t.Parallel()
	sink := &recordingSink{}
	srv := httptest.NewServer(NewRouter(Config{WebhookSecret: testSecret, Sink: sink, Decode: jsonDecoder,
		MaxBodyBytes: 40 << 10, MaxBufferedBytes: 64 << 10, Log: quietLog()}))
	t.Cleanup(srv.Close)
	// Two strangers each hold two chunks (32 KiB) of a body they never
	// finish: the budget is spent.
	var slow []net.Conn
	for range 2 {
		slow = append(slow, rawPost(t, srv.Listener.Addr().String(), 40000, make([]byte, 20000)))
	}
	body := []byte(`{"action":"opened"}`)
	send := func() *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/gitea", strings.NewReader(string(body)))
		req.Header.Set("X-Gitea-Event", "issues")
		req.Header.Set("X-Gitea-Delivery", "d1")
		req.Header.Set("X-Gitea-Signature", sign(testSecret, body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	var resp *http.Response
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp = send(); resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("with the budget spent: %s Retry-After %q; want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"))
	}
	for _, c := range slow {
		_ = c.Close()
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp = send(); resp.StatusCode == http.StatusAccepted {
			return
		}
	}
	t.Fatalf("after the slow senders left: %s, want 202", resp.Status)
}

// TestServerBoundsHeaders: the server serve runs caps headers (64 KiB), so
// a stranger cannot make it buffer megabytes before any handler runs, while
// a request with ordinary headers (a token, cookies) is served.
func TestServerBoundsHeaders(t *testing.T) {
	t.Parallel()
	srv := NewServer("", NewRouter(Config{WebhookSecret: testSecret, Sink: &recordingSink{}, Decode: jsonDecoder, Log: quietLog()}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	get := func(cookie string) int {
		req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/healthz", nil)
		req.Header.Set("Cookie", cookie)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get("session=" + strings.Repeat("a", 4<<10)); got != http.StatusOK {
		t.Fatalf("4 KiB cookie: status %d, want 200", got)
	}
	if got := get("session=" + strings.Repeat("a", 200<<10)); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("200 KiB cookie: status %d, want 431", got)
	}
}

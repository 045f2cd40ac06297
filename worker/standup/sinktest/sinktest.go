// Package sinktest runs loopback servers that stand in for standup sinks in
// tests: an HTTP endpoint that records what it receives (a webhook, a
// Slack-style hook or a Matrix homeserver) and can fail or hang on demand,
// and a tiny SMTP server.
package sinktest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"testing"
)

// Request is one request an Endpoint received.
type Request struct {
	Method string
	Path   string // escaped
	Header http.Header
	Body   []byte
}

// Endpoint is a loopback HTTP sink.
type Endpoint struct {
	URL string

	mu       sync.Mutex
	requests []Request
	failures int
	status   int
	// seen holds the PUT paths answered, for Matrix-style idempotency.
	seen map[string]bool
	hold chan struct{}
	held chan struct{}
}

// NewEndpoint starts an endpoint that answers 200 and stops it when t ends.
func NewEndpoint(t testing.TB) *Endpoint {
	t.Helper()
	e := &Endpoint{seen: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(e.serve))
	e.URL = srv.URL
	t.Cleanup(func() {
		e.Release()
		srv.Close()
	})
	return e
}

// Fail makes the next n requests answer status (recorded as attempts, not
// as deliveries).
func (e *Endpoint) Fail(n, status int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failures, e.status = n, status
}

// HoldAfterAccept makes the next request be accepted (recorded, as a server
// that has acted on it) and then hang without answering until Release; the
// returned channel is closed once that request arrived. It stands for a
// process that dies after the sink acted but before it heard back.
func (e *Endpoint) HoldAfterAccept() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hold, e.held = make(chan struct{}), make(chan struct{})
	return e.held
}

// Release lets a held request finish.
func (e *Endpoint) Release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.hold != nil {
		close(e.hold)
		e.hold = nil
	}
}

func (e *Endpoint) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	if e.failures > 0 {
		e.failures--
		status := e.status
		e.mu.Unlock()
		http.Error(w, "failing on purpose", status)
		return
	}
	// A PUT to a path seen before is a repeated Matrix transaction: the
	// homeserver answers as before and posts nothing new.
	repeat := r.Method == http.MethodPut && e.seen[r.URL.EscapedPath()]
	if !repeat {
		e.seen[r.URL.EscapedPath()] = true
		e.requests = append(e.requests, Request{Method: r.Method, Path: r.URL.EscapedPath(), Header: r.Header.Clone(), Body: body})
	}
	hold, held := e.hold, e.held
	e.hold, e.held = nil, nil
	e.mu.Unlock()
	if hold != nil {
		close(held)
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	_, _ = w.Write([]byte(`{"ok":true,"event_id":"$e"}`))
}

// Received returns the requests accepted as deliveries, without failed
// attempts and repeated Matrix transactions.
func (e *Endpoint) Received() []Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Request(nil), e.requests...)
}

// SMTPServer is a tiny loopback SMTP server that accepts every message.
type SMTPServer struct {
	Addr string
	mu   sync.Mutex
	msgs []SMTPMessage
}

// SMTPMessage is one message the server accepted.
type SMTPMessage struct {
	From string
	To   []string
	Data string
}

// NewSMTPServer starts a server on 127.0.0.1 and stops it when t ends.
func NewSMTPServer(t testing.TB) *SMTPServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &SMTPServer{Addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

func (s *SMTPServer) serve(c net.Conn) {
	defer c.Close()
	tp := textproto.NewConn(c)
	_ = tp.PrintfLine("220 localhost ESMTP test")
	var m SMTPMessage
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		_, addr, _ := strings.Cut(arg, ":")
		addr = strings.Trim(strings.TrimSpace(addr), "<>")
		switch strings.ToUpper(verb) {
		case "EHLO", "HELO":
			_ = tp.PrintfLine("250 localhost")
		case "MAIL":
			m = SMTPMessage{From: addr}
			_ = tp.PrintfLine("250 OK")
		case "RCPT":
			m.To = append(m.To, addr)
			_ = tp.PrintfLine("250 OK")
		case "DATA":
			_ = tp.PrintfLine("354 go ahead")
			lines, err := tp.ReadDotLines()
			if err != nil {
				return
			}
			m.Data = strings.Join(lines, "\n")
			s.mu.Lock()
			s.msgs = append(s.msgs, m)
			s.mu.Unlock()
			_ = tp.PrintfLine("250 OK queued")
		case "QUIT":
			_ = tp.PrintfLine("221 bye")
			return
		default:
			_ = tp.PrintfLine("250 OK")
		}
	}
}

// Messages returns what the server accepted so far.
func (s *SMTPServer) Messages() []SMTPMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SMTPMessage(nil), s.msgs...)
}

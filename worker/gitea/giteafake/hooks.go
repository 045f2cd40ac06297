package giteafake

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
)

// SentHook is one webhook the fake sent (or tried to).
type SentHook struct {
	Delivery
	Status int   // receiver's answer, 0 on a transport error
	Err    error // transport error
}

// hookSender posts queued webhooks in order from one goroutine, as Gitea's
// hook queue does, so a receiver may call back into the fake.
type hookSender struct {
	client *http.Client

	mu     sync.Mutex // guards url, secret, closed and sends on queue
	url    string
	secret string
	closed bool
	queue  chan queuedHook
	wg     sync.WaitGroup // queued but not yet sent
	done   chan struct{}

	sentMu sync.Mutex
	sent   []SentHook
}

type queuedHook struct {
	url string
	d   Delivery
}

func (h *hookSender) init(c *http.Client) {
	h.client = c
	h.queue = make(chan queuedHook, 4096)
	h.done = make(chan struct{})
	go h.run()
}

func (h *hookSender) set(url, secret string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.url, h.secret = url, secret
}

func (h *hookSender) run() {
	defer close(h.done)
	for q := range h.queue {
		d := q.d
		sh := SentHook{Delivery: d}
		req, err := http.NewRequest(http.MethodPost, q.url, bytes.NewReader(d.RawBody))
		if err == nil {
			for k, v := range d.Headers {
				req.Header.Set(k, v)
			}
			var resp *http.Response
			resp, err = h.client.Do(req)
			if err == nil {
				sh.Status = resp.StatusCode
				_ = resp.Body.Close()
			}
		}
		sh.Err = err
		h.sentMu.Lock()
		h.sent = append(h.sent, sh)
		h.sentMu.Unlock()
		h.wg.Done()
	}
}

// enqueue signs and queues a delivery when a hook target is set.
func (h *hookSender) enqueue(event, eventType string, payload any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.url == "" || h.closed {
		return
	}
	// Gitea sends indented JSON; the signature covers these exact bytes.
	raw, err := json.MarshalIndent(payload, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("giteafake: encode webhook: %v", err))
	}
	d := Delivery{Name: event + "-" + action(payload), Event: event, RawBody: raw, Headers: SignedHeaders(h.secret, raw, event, eventType, newDeliveryID())}
	h.wg.Add(1)
	h.queue <- queuedHook{url: h.url, d: d}
}

func (h *hookSender) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	h.mu.Unlock()
	close(h.queue)
	<-h.done
}

// SetHook points the fake's webhook at url, signed with secret; an empty
// url stops sending.
func (s *Server) SetHook(url, secret string) { s.hooks.set(url, secret) }

// FlushHooks waits until every queued webhook has been sent.
func (s *Server) FlushHooks() { s.hooks.wg.Wait() }

// SentHooks returns the webhooks sent so far, in order.
func (s *Server) SentHooks() []SentHook {
	s.hooks.sentMu.Lock()
	defer s.hooks.sentMu.Unlock()
	return slices.Clone(s.hooks.sent)
}

// SignedHeaders returns the headers Gitea/Forgejo put on a delivery of raw:
// the event, event type and delivery id under the X-Gitea-, X-Forgejo-,
// X-Gogs- and X-GitHub- prefixes, and the signatures (hex HMAC-SHA256 of
// raw under X-Gitea-/X-Forgejo-/X-Gogs-Signature, "sha256="+hex under
// X-Hub-Signature-256, "sha1="+hex HMAC-SHA1 under X-Hub-Signature).
func SignedHeaders(secret string, raw []byte, event, eventType, deliveryID string) map[string]string {
	h := map[string]string{"Content-Type": "application/json"}
	for _, p := range []string{"X-Gitea-", "X-Forgejo-", "X-Gogs-", "X-GitHub-"} {
		h[p+"Delivery"] = deliveryID
		h[p+"Event"] = event
		h[p+"Event-Type"] = eventType
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(raw)
	sig := hex.EncodeToString(m.Sum(nil))
	h["X-Gitea-Signature"], h["X-Forgejo-Signature"], h["X-Gogs-Signature"] = sig, sig, sig
	h["X-Hub-Signature-256"] = "sha256=" + sig
	m1 := hmac.New(sha1.New, []byte(secret))
	m1.Write(raw)
	h["X-Hub-Signature"] = "sha1=" + hex.EncodeToString(m1.Sum(nil))
	return h
}

func newDeliveryID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b[:])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

func action(payload any) string {
	if o, ok := payload.(obj); ok {
		return str(o["action"])
	}
	return ""
}

// hookIssue queues the webhook Gitea sends for an issue or pull request
// action. patch adjusts the rendered issue for Gitea's stale fields.
// Called with Server.mu held.
func (s *Server) hookIssue(is *issueState, act string, changes obj, patch func(obj)) {
	sender := clone(s.st.users["ceo"])
	var eventType string
	switch act {
	case "label_updated", "label_cleared":
		eventType = "label"
	case "milestoned", "demilestoned":
		eventType = "milestone"
	case "assigned", "unassigned":
		eventType = "assign"
	}
	if is.pull != nil {
		pr := s.st.renderPull(is)
		if patch != nil {
			patch(pr)
		}
		p := obj{"action": act, "number": is.number, "pull_request": pr, "requested_reviewer": nil,
			"repository": clone(s.st.repo), "sender": sender, "commit_id": "", "review": nil}
		if changes != nil {
			p["changes"] = changes
		}
		typ := "pull_request"
		if eventType != "" {
			typ += "_" + eventType
		}
		s.hooks.enqueue("pull_request", typ, p)
		return
	}
	o := s.st.renderIssue(is)
	if patch != nil {
		patch(o)
	}
	p := obj{"action": act, "number": is.number, "issue": o, "repository": clone(s.st.repo), "sender": sender, "commit_id": ""}
	if changes != nil {
		p["changes"] = changes
	}
	typ := "issues"
	if eventType != "" {
		typ = "issue_" + eventType
	}
	s.hooks.enqueue("issues", typ, p)
}

// hookComment queues an issue_comment webhook. Called with Server.mu held.
func (s *Server) hookComment(is *issueState, act string, comment obj, changes obj) {
	p := obj{"action": act, "issue": s.st.renderIssue(is), "comment": clone(comment),
		"repository": clone(s.st.repo), "sender": clone(s.st.users["ceo"]), "is_pull": is.pull != nil}
	if changes != nil {
		p["changes"] = changes
	}
	typ := "issue_comment"
	if is.pull != nil {
		p["pull_request"] = s.st.renderPull(is)
		typ = "pull_request_comment"
	}
	s.hooks.enqueue("issue_comment", typ, p)
}

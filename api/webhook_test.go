package api

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
)

const testSecret = "s3cret"

func sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

type recordingSink struct {
	mu  sync.Mutex
	got []worker.Incoming
	err error
}

func (s *recordingSink) Submit(_ context.Context, d worker.Incoming) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.got = append(s.got, d)
	return nil
}

func jsonDecoder(event string, body []byte) (gitea.Change, error) {
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		return gitea.Change{}, err
	}
	return gitea.Change{Event: event}, nil
}

func newTestRouter(sink *recordingSink) http.Handler {
	return NewRouter(Config{WebhookSecret: testSecret, MaxBodyBytes: 1 << 10, Sink: sink, Decode: jsonDecoder,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

func post(t *testing.T, h http.Handler, body []byte, headers map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/webhooks/gitea", bytes.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestWebhookRefusals(t *testing.T) {
	t.Parallel()
	body := []byte(`{"action":"opened"}`)
	good := sign(testSecret, body)
	cases := []struct {
		name    string
		body    []byte
		headers map[string]string
		status  int
	}{
		{"accepted with Gitea headers", body, map[string]string{"X-Gitea-Signature": good, "X-Gitea-Delivery": "1", "X-Gitea-Event": "issues"}, 202},
		{"accepted with Forgejo headers", body, map[string]string{"X-Forgejo-Signature": good, "X-Forgejo-Delivery": "2", "X-Forgejo-Event": "issues"}, 202},
		{"missing signature", body, map[string]string{"X-Gitea-Delivery": "3", "X-Gitea-Event": "issues"}, 401},
		{"wrong secret", body, map[string]string{"X-Gitea-Signature": sign("other", body), "X-Gitea-Delivery": "4", "X-Gitea-Event": "issues"}, 401},
		{"tampered body", []byte(`{"action":"closed"}`), map[string]string{"X-Gitea-Signature": good, "X-Gitea-Delivery": "5", "X-Gitea-Event": "issues"}, 401},
		{"signature not hex", body, map[string]string{"X-Gitea-Signature": "zz", "X-Gitea-Delivery": "6", "X-Gitea-Event": "issues"}, 401},
		{"missing delivery id", body, map[string]string{"X-Gitea-Signature": good, "X-Gitea-Event": "issues"}, 400},
		{"malformed JSON", []byte(`{"action":`), map[string]string{"X-Gitea-Signature": sign(testSecret, []byte(`{"action":`)), "X-Gitea-Delivery": "7", "X-Gitea-Event": "issues"}, 400},
		{"body over the cap", bytes.Repeat([]byte("a"), 2<<10), map[string]string{"X-Gitea-Signature": good, "X-Gitea-Delivery": "8", "X-Gitea-Event": "issues"}, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sink := &recordingSink{}
			rec := post(t, newTestRouter(sink), c.body, c.headers)
			if rec.Code != c.status {
				t.Fatalf("status = %d, want %d (%s)", rec.Code, c.status, rec.Body)
			}
			if wantStored := c.status == 202; (len(sink.got) == 1) != wantStored {
				t.Fatalf("stored %d deliveries, want stored=%v", len(sink.got), wantStored)
			}
			if c.status != 202 && !strings.Contains(rec.Body.String(), `"code"`) {
				t.Fatalf("error body lacks a code: %s", rec.Body)
			}
		})
	}
}

func TestWebhookStoreFailureIsNotAcknowledged(t *testing.T) {
	t.Parallel()
	body := []byte(`{}`)
	for _, err := range []error{errors.New("db down"), worker.ErrIngestClosed} {
		rec := post(t, newTestRouter(&recordingSink{err: err}), body, map[string]string{"X-Gitea-Signature": sign(testSecret, body), "X-Gitea-Delivery": "1", "X-Gitea-Event": "issues"})
		if rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("%v: status = %d, want 503 so Gitea redelivers", err, rec.Code)
		}
	}
}

func TestHealthAndReady(t *testing.T) {
	t.Parallel()
	notReady := NewRouter(Config{Ready: func(context.Context) error { return errors.New("migrations pending") }, Log: slog.Default()})
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 503} {
		rec := httptest.NewRecorder()
		notReady.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != want {
			t.Fatalf("%s = %d, want %d", path, rec.Code, want)
		}
	}
}

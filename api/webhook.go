package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/metrics"
)

type webhookHandler struct {
	cfg    Config
	budget *byteBudget
}

// ServeHTTP verifies, decodes and stores one delivery. It answers 202 only
// after the delivery is committed, so an acknowledged delivery is never lost;
// anything refused is refused before a single row is written. Until the
// signature is checked the body is a stranger's, read within the bounds of
// bodies.go.
func (h *webhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	metrics.DeliveryReceived()
	buffered, err := readBounded(w, r, h.cfg.MaxBodyBytes, h.cfg.WebhookReadTimeout, h.budget)
	defer buffered.release()
	if err != nil {
		metrics.DeliveryRefused(writeReadError(w, err, "body"))
		return
	}
	sig := r.Header.Get("X-Gitea-Signature")
	if sig == "" {
		sig = r.Header.Get("X-Forgejo-Signature")
	}
	if !validSignature(h.cfg.WebhookSecret, buffered, sig) {
		metrics.DeliveryRefused("bad_signature")
		writeError(w, CodeUnauthorized, "missing or wrong webhook signature", "")
		return
	}
	body := buffered.Bytes()
	buffered.release()
	id := firstHeader(r, "X-Gitea-Delivery", "X-Forgejo-Delivery")
	event := firstHeader(r, "X-Gitea-Event", "X-Forgejo-Event")
	if id == "" || event == "" {
		metrics.DeliveryRefused("missing_headers")
		writeError(w, CodeInvalidInput, "missing delivery id or event header", "")
		return
	}
	if reason := badHeaderValue(id, maxDeliveryID); reason != "" {
		metrics.DeliveryRefused("bad_delivery_id")
		writeError(w, CodeInvalidInput, "delivery id "+reason, "")
		return
	}
	if reason := badHeaderValue(event, maxEventName); reason != "" {
		metrics.DeliveryRefused("bad_event")
		writeError(w, CodeInvalidInput, "event name "+reason, "")
		return
	}
	change, err := h.cfg.Decode(event, body)
	if err != nil {
		metrics.DeliveryRefused("malformed")
		writeError(w, CodeInvalidInput, "malformed payload: "+err.Error(), "")
		return
	}
	err = h.cfg.Sink.Submit(r.Context(), worker.Incoming{DeliveryID: id, Payload: body, Change: change})
	switch {
	case err == nil:
		metrics.Ingested(time.Since(start))
		writeJSON(w, http.StatusAccepted, map[string]string{"status": "accepted", "delivery": id})
	case errors.Is(err, worker.ErrIngestClosed):
		metrics.DeliveryRefused("unavailable")
		writeError(w, CodeUnavailable, "shutting down; Gitea may redeliver", "")
	default:
		metrics.DeliveryRefused("unavailable")
		h.cfg.Log.ErrorContext(r.Context(), "store delivery", slog.String("delivery", id), slog.Any("error", err))
		writeError(w, CodeUnavailable, "could not store the delivery; redeliver it", "")
	}
}

// validSignature checks the hex HMAC-SHA256 of the raw body in constant time.
func validSignature(secret string, body io.WriterTo, sig string) bool {
	got, err := hex.DecodeString(sig)
	if err != nil || len(got) != sha256.Size || secret == "" {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	if _, err := body.WriteTo(mac); err != nil {
		return false
	}
	return hmac.Equal(got, mac.Sum(nil))
}

// Gitea's delivery ids are UUIDs and its event names short words; a
// header beyond these bounds was not sent by a forge, and storing it would
// make the deliveries table the attacker's.
const (
	maxDeliveryID = 200
	maxEventName  = 100
)

// badHeaderValue says what is wrong with a delivery header value that will
// be stored as text, or "" when nothing is.
func badHeaderValue(v string, limit int) string {
	switch {
	case len(v) > limit:
		return fmt.Sprintf("longer than %d bytes", limit)
	case !utf8.ValidString(v):
		return "not valid UTF-8"
	case strings.ContainsFunc(v, unicode.IsControl):
		return "contains control characters"
	}
	return ""
}

func firstHeader(r *http.Request, names ...string) string {
	for _, n := range names {
		if v := r.Header.Get(n); v != "" {
			return v
		}
	}
	return ""
}

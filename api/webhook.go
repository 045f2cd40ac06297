package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/metrics"
)

type webhookHandler struct {
	cfg Config
}

// ServeHTTP verifies, decodes and stores one delivery. It answers 202 only
// after the delivery is committed, so an acknowledged delivery is never lost;
// anything refused is refused before a single row is written.
func (h *webhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	metrics.DeliveryReceived()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			metrics.DeliveryRefused("too_large")
			writeError(w, CodeTooLarge, "body larger than the configured limit", "")
			return
		}
		metrics.DeliveryRefused("unreadable")
		writeError(w, CodeInvalidInput, "could not read body", "")
		return
	}
	sig := r.Header.Get("X-Gitea-Signature")
	if sig == "" {
		sig = r.Header.Get("X-Forgejo-Signature")
	}
	if !validSignature(h.cfg.WebhookSecret, body, sig) {
		metrics.DeliveryRefused("bad_signature")
		writeError(w, CodeUnauthorized, "missing or wrong webhook signature", "")
		return
	}
	id := firstHeader(r, "X-Gitea-Delivery", "X-Forgejo-Delivery")
	event := firstHeader(r, "X-Gitea-Event", "X-Forgejo-Event")
	if id == "" || event == "" {
		metrics.DeliveryRefused("missing_headers")
		writeError(w, CodeInvalidInput, "missing delivery id or event header", "")
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
func validSignature(secret string, body []byte, sig string) bool {
	got, err := hex.DecodeString(sig)
	if err != nil || len(got) != sha256.Size || secret == "" {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

func firstHeader(r *http.Request, names ...string) string {
	for _, n := range names {
		if v := r.Header.Get(n); v != "" {
			return v
		}
	}
	return ""
}

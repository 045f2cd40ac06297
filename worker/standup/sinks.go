package standup

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/smtp"
	"net/url"
	"strings"
	"time"

	"github.com/commitea/commitea/worker/gitea"
)

// Sinks: each delivers one standup message somewhere. A delivery may be
// repeated (a retry after an error, or after a crash between sending and
// recording), so each sink uses Message.Key, which names the installation,
// project, day and sink, to make a repeat harmless where the destination
// allows it: the Matrix transaction id, a marker the Gitea sink looks for
// before commenting, the webhook's delivery header and the email's
// Message-ID (for receivers that deduplicate on them). The key is fixed
// when the delivery is first recorded and stored with it, so every
// attempt, before and after an upgrade, sends the same one. A Slack-style
// incoming webhook has no such key; there a crash in that window can
// repeat a message.

// Message is one standup on its way to one sink.
type Message struct {
	Project string          `json:"project"`
	Day     string          `json:"day"`
	Text    string          `json:"text"`
	Report  json.RawMessage `json:"report,omitempty"`
	// Key is stable for a project, day and sink.
	Key string `json:"key"`
}

// PublicReport is a stored standup's content as sinks get it: without the
// baseline, which is bookkeeping for the next standup and, for a large
// project, most of the bytes.
func PublicReport(content json.RawMessage) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(content, &fields); err != nil {
		return nil, fmt.Errorf("decode standup content: %w", err)
	}
	delete(fields, "baseline")
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("encode standup content: %w", err)
	}
	return out, nil
}

// Sink delivers standups to one destination.
type Sink interface {
	// Name identifies the sink in bookkeeping: webhook, slack, matrix,
	// email or gitea.
	Name() string
	Deliver(ctx context.Context, m Message) error
}

// Sink names.
const (
	SinkWebhook = "webhook"
	SinkSlack   = "slack"
	SinkMatrix  = "matrix"
	SinkEmail   = "email"
	SinkGitea   = "gitea"
)

// MessageKey is the idempotency key of a project's standup of a day at a
// sink, in one installation (store.InstallationID): two installations
// never share one, though their project ids may. Only letters, digits,
// '-', '_' and '.': it is a Matrix transaction id and part of a
// Message-ID.
func MessageKey(installation string, projectID int64, day, sink string) string {
	return fmt.Sprintf("commitea-standup-%s-%d-%s-%s", installation, projectID, day, sink)
}

// StatusError is a sink's answer outside 2xx.
type StatusError struct {
	Sink   string
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: status %d: %s", e.Sink, e.Status, e.Body)
}

func httpClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: 30 * time.Second}
}

func send(ctx context.Context, hc *http.Client, sink, method, u string, body []byte, header http.Header) error {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: build request: %w", sink, err)
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "commitea")
	resp, err := httpClient(hc).Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", sink, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return &StatusError{Sink: sink, Status: resp.StatusCode, Body: strings.TrimSpace(string(msg))}
	}
	return nil
}

// WebhookSink posts the standup as JSON (the Message) signed with
// HMAC-SHA256 of the body under Secret, hex-encoded in the
// X-CommiTea-Signature-256 header as "sha256=<hex>". X-CommiTea-Delivery
// carries the message key, the same on every retry.
type WebhookSink struct {
	URL    string
	Secret string
	Client *http.Client
}

// Name implements Sink.
func (s *WebhookSink) Name() string { return SinkWebhook }

// Deliver implements Sink.
func (s *WebhookSink) Deliver(ctx context.Context, m Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("webhook: encode: %w", err)
	}
	h := http.Header{}
	h.Set("X-CommiTea-Event", "standup")
	h.Set("X-CommiTea-Delivery", m.Key)
	h.Set("X-CommiTea-Signature-256", "sha256="+Sign(s.Secret, body))
	return send(ctx, s.Client, SinkWebhook, http.MethodPost, s.URL, body, h)
}

// Sign is the hex HMAC-SHA256 of body under secret, as the webhook sink
// sends it; receivers compare it in constant time.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// SlackSink posts to a Slack or Mattermost incoming webhook.
type SlackSink struct {
	URL    string
	Client *http.Client
}

// Name implements Sink.
func (s *SlackSink) Name() string { return SinkSlack }

// Deliver implements Sink.
func (s *SlackSink) Deliver(ctx context.Context, m Message) error {
	body, err := json.Marshal(map[string]string{"text": m.Text})
	if err != nil {
		return fmt.Errorf("slack: encode: %w", err)
	}
	return send(ctx, s.Client, SinkSlack, http.MethodPost, s.URL, body, http.Header{})
}

// MatrixSink sends an m.room.message to a room through the client-server
// API. The transaction id is the message key, so the homeserver ignores a
// repeat.
type MatrixSink struct {
	Homeserver  string // e.g. https://matrix.example.org
	Room        string // room id, e.g. !abc:example.org
	AccessToken string
	Client      *http.Client
}

// Name implements Sink.
func (s *MatrixSink) Name() string { return SinkMatrix }

// Deliver implements Sink.
func (s *MatrixSink) Deliver(ctx context.Context, m Message) error {
	body, err := json.Marshal(map[string]string{"msgtype": "m.text", "body": m.Text})
	if err != nil {
		return fmt.Errorf("matrix: encode: %w", err)
	}
	u := strings.TrimRight(s.Homeserver, "/") + "/_matrix/client/v3/rooms/" + url.PathEscape(s.Room) +
		"/send/m.room.message/" + url.PathEscape(m.Key)
	h := http.Header{}
	h.Set("Authorization", "Bearer "+s.AccessToken)
	return send(ctx, s.Client, SinkMatrix, http.MethodPut, u, body, h)
}

// EmailSink sends the standup as a plain-text email over SMTP, with
// STARTTLS when the server offers it and PLAIN authentication when a
// username is set.
type EmailSink struct {
	Addr     string // host:port
	Username string
	Password string
	From     string
	To       []string
	// Host is the domain of Message-IDs: the host of the installation's
	// public URL (server.public_url), which names this installation as
	// the key does; empty, the sender's domain.
	Host string
	// Timeout bounds the whole conversation; default 1 minute.
	Timeout time.Duration
	// TLS overrides the STARTTLS configuration (tests).
	TLS *tls.Config
}

// Name implements Sink.
func (s *EmailSink) Name() string { return SinkEmail }

// Deliver implements Sink.
func (s *EmailSink) Deliver(ctx context.Context, m Message) error {
	if len(s.To) == 0 {
		return errors.New("email: no recipient")
	}
	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return fmt.Errorf("email: address %q: %w", s.Addr, err)
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("email: %w", err)
	}
	_ = conn.SetDeadline(deadline)
	// net/smtp has no context: closing the connection ends a conversation
	// that the context cancels.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("email: %w", err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		cfg := s.TLS
		if cfg == nil {
			cfg = &tls.Config{ServerName: host}
		}
		if err := c.StartTLS(cfg); err != nil {
			return fmt.Errorf("email: starttls: %w", err)
		}
	}
	if s.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, host)); err != nil {
			return fmt.Errorf("email: auth: %w", err)
		}
	}
	if err := c.Mail(s.From); err != nil {
		return fmt.Errorf("email: MAIL FROM: %w", err)
	}
	for _, to := range s.To {
		if err := c.Rcpt(to); err != nil {
			return fmt.Errorf("email: RCPT TO %s: %w", to, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("email: DATA: %w", err)
	}
	if _, err := w.Write(s.message(m)); err != nil {
		return fmt.Errorf("email: write: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("email: end of data: %w", err)
	}
	return c.Quit()
}

func (s *EmailSink) message(m Message) []byte {
	var b bytes.Buffer
	hdr := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	hdr("From", s.From)
	hdr("To", strings.Join(s.To, ", "))
	hdr("Subject", fmt.Sprintf("Standup for %s, %s", m.Project, m.Day))
	hdr("Date", time.Now().UTC().Format(time.RFC1123Z))
	domain := s.Host
	if domain == "" {
		domain = "commitea.invalid"
		if _, d, ok := strings.Cut(s.From, "@"); ok {
			domain = strings.Trim(d, "<> ")
		}
	}
	hdr("Message-ID", "<"+m.Key+"@"+domain+">")
	hdr("MIME-Version", "1.0")
	hdr("Content-Type", "text/plain; charset=utf-8")
	// Quoted-printable keeps lines under SMTP's 998-byte limit (a plan
	// line with long titles can pass it) and any UTF-8 in titles intact.
	hdr("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	text := strings.ReplaceAll(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\n", "\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(text))
	_ = qp.Close()
	b.WriteString("\r\n")
	return b.Bytes()
}

// Commenter is what the Gitea sink needs of the Gitea client.
type Commenter interface {
	ListIssueComments(ctx context.Context, owner, repo string, index int64, updatedSince time.Time) ([]gitea.Comment, error)
	CreateComment(ctx context.Context, owner, repo string, index int64, body string) (gitea.Comment, error)
}

// GiteaSink comments on one designated issue. Opt-in only: it is the one
// comment CommiTea ever writes to Gitea. The comment ends with a hidden
// marker naming the message key; before commenting, the sink looks for a
// comment with the marker, so a repeat after an unrecorded success does not
// comment twice.
type GiteaSink struct {
	Client Commenter
	Owner  string
	Repo   string
	Issue  int64
	// Lookback bounds the comments searched for the marker; default 3 days.
	Lookback time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Name implements Sink.
func (s *GiteaSink) Name() string { return SinkGitea }

// Marker is the hidden line that identifies a standup comment.
func Marker(key string) string { return "<!-- " + key + " -->" }

// Deliver implements Sink.
func (s *GiteaSink) Deliver(ctx context.Context, m Message) error {
	lookback, now := s.Lookback, time.Now
	if lookback <= 0 {
		lookback = 72 * time.Hour
	}
	if s.Now != nil {
		now = s.Now
	}
	marker := Marker(m.Key)
	existing, err := s.Client.ListIssueComments(ctx, s.Owner, s.Repo, s.Issue, now().Add(-lookback))
	if err != nil {
		return fmt.Errorf("gitea: %w", err)
	}
	for _, c := range existing {
		if strings.Contains(c.Body, marker) {
			return nil
		}
	}
	if _, err := s.Client.CreateComment(ctx, s.Owner, s.Repo, s.Issue, m.Text+"\n\n"+marker); err != nil {
		return fmt.Errorf("gitea: %w", err)
	}
	return nil
}

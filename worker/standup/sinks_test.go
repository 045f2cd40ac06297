package standup

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
	"github.com/commitea/commitea/worker/standup/sinktest"
)

var msg = Message{Project: "acme/app", Day: "2026-12-02", Text: "Standup for acme/app\nAll good.",
	Report: json.RawMessage(`{"day":"2026-12-02"}`), Key: MessageKey("0a1b2c", 1, "2026-12-02", "x")}

func TestWebhookSinkSigns(t *testing.T) {
	var got []byte
	var header http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		header = r.Header
	}))
	defer srv.Close()
	s := &WebhookSink{URL: srv.URL, Secret: "0123456789abcdef"}
	if err := s.Deliver(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	sig := strings.TrimPrefix(header.Get("X-CommiTea-Signature-256"), "sha256=")
	if !hmac.Equal([]byte(sig), []byte(Sign("0123456789abcdef", got))) {
		t.Errorf("signature %q does not match the body", sig)
	}
	if header.Get("X-CommiTea-Delivery") != msg.Key {
		t.Errorf("delivery header = %q", header.Get("X-CommiTea-Delivery"))
	}
	var m Message
	if err := json.Unmarshal(got, &m); err != nil || m.Text != msg.Text || string(m.Report) != string(msg.Report) {
		t.Errorf("body = %s (%v)", got, err)
	}
}

func TestSlackAndMatrixSinks(t *testing.T) {
	var slackBody, matrixPath, matrixAuth string
	var matrixBody map[string]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPut {
			matrixPath, matrixAuth = r.URL.EscapedPath(), r.Header.Get("Authorization")
			_ = json.Unmarshal(b, &matrixBody)
			_, _ = w.Write([]byte(`{"event_id":"$1"}`))
			return
		}
		slackBody = string(b)
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	if err := (&SlackSink{URL: srv.URL + "/hooks/x"}).Deliver(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	if slackBody != `{"text":"Standup for acme/app\nAll good."}` {
		t.Errorf("slack body = %s", slackBody)
	}
	m := &MatrixSink{Homeserver: srv.URL, Room: "!room:example.org", AccessToken: "tok"}
	if err := m.Deliver(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	want := "/_matrix/client/v3/rooms/%21room:example.org/send/m.room.message/" + msg.Key
	if matrixPath != want || matrixAuth != "Bearer tok" || matrixBody["msgtype"] != "m.text" || matrixBody["body"] != msg.Text {
		t.Errorf("matrix: path %s auth %q body %v; want path %s", matrixPath, matrixAuth, matrixBody, want)
	}
}

func TestSinkReportsStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer srv.Close()
	err := (&SlackSink{URL: srv.URL}).Deliver(context.Background(), msg)
	if se, ok := err.(*StatusError); !ok || se.Status != 500 {
		t.Errorf("err = %v, want a StatusError 500", err)
	}
}

func TestEmailSink(t *testing.T) {
	srv := sinktest.NewSMTPServer(t)
	s := &EmailSink{Addr: srv.Addr, From: "commitea@example.org", To: []string{"team@example.org", "pm@example.org"}}
	if err := s.Deliver(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	ms := srv.Messages()
	if len(ms) != 1 {
		t.Fatalf("messages = %d, want 1", len(ms))
	}
	m := ms[0]
	if m.From != "commitea@example.org" || len(m.To) != 2 {
		t.Errorf("envelope = %+v", m)
	}
	for _, want := range []string{"Subject: Standup for acme/app, 2026-12-02", "Message-ID: <" + msg.Key + "@example.org>", "All good."} {
		if !strings.Contains(m.Data, want) {
			t.Errorf("message lacks %q:\n%s", want, m.Data)
		}
	}
	// A long line with non-ASCII text arrives intact in lines SMTP accepts.
	long := msg
	long.Text = "now: " + strings.Repeat("#12 Überarbeitung der Anmeldung; ", 60)
	if err := s.Deliver(context.Background(), long); err != nil {
		t.Fatal(err)
	}
	data := srv.Messages()[1].Data
	for _, line := range strings.Split(data, "\n") {
		if len(line) > 998 {
			t.Fatalf("line of %d bytes", len(line))
		}
	}
	_, body, _ := strings.Cut(data, "\n\n")
	decoded, err := io.ReadAll(quotedprintable.NewReader(strings.NewReader(body)))
	if err != nil || strings.TrimSpace(string(decoded)) != strings.TrimSpace(long.Text) {
		t.Errorf("decoded body = %q (%v)", decoded, err)
	}
}

func TestGiteaSinkCommentsOnce(t *testing.T) {
	fake, err := giteafake.New(giteafake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	client, err := gitea.New(fake.URL, fake.Token(), gitea.Options{BaseBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := &GiteaSink{Client: client, Owner: "ceo", Repo: "demo", Issue: 1}
	// The second call stands for a retry after a crash that came between
	// the comment and its bookkeeping.
	for range 2 {
		if err := s.Deliver(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := client.ListIssueComments(ctx, "ceo", "demo", 1, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cs {
		if strings.Contains(c.Body, Marker(msg.Key)) {
			n++
			if !strings.HasPrefix(c.Body, msg.Text) {
				t.Errorf("comment body = %q", c.Body)
			}
		}
	}
	if n != 1 {
		t.Errorf("standup comments = %d, want 1", n)
	}
}

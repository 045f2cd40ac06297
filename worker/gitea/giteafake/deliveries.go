package giteafake

import (
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

//go:embed testdata/deliveries/*.json
var deliveryFiles embed.FS

// Delivery is one webhook delivery recorded from a real Forgejo 9
// (gitea-1.22 compatible) server, signed with secret "s3cret".
type Delivery struct {
	Name    string            // file name without ".json", e.g. "006-issues-label_updated"
	Event   string            // X-Gitea-Event
	Headers map[string]string // every recorded request header
	RawBody []byte            // the exact signed bytes
}

// RecordedSecret is the webhook secret the recorded deliveries are signed with.
const RecordedSecret = "s3cret"

// Deliveries returns all recorded deliveries in the order Forgejo sent them.
func Deliveries() ([]Delivery, error) {
	names, err := fs.Glob(deliveryFiles, "testdata/deliveries/0*.json")
	if err != nil {
		return nil, fmt.Errorf("list recorded deliveries: %w", err)
	}
	slices.Sort(names)
	out := make([]Delivery, 0, len(names))
	for _, name := range names {
		data, err := deliveryFiles.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		var rec struct {
			Headers    map[string]string `json:"headers"`
			RawBodyB64 string            `json:"raw_body_b64"`
		}
		if err := json.Unmarshal(data, &rec); err != nil {
			return nil, fmt.Errorf("decode %s: %w", name, err)
		}
		raw, err := base64.StdEncoding.DecodeString(rec.RawBodyB64)
		if err != nil {
			return nil, fmt.Errorf("decode raw body of %s: %w", name, err)
		}
		out = append(out, Delivery{
			Name:    strings.TrimSuffix(path.Base(name), ".json"),
			Event:   rec.Headers["X-Gitea-Event"],
			Headers: rec.Headers,
			RawBody: raw,
		})
	}
	return out, nil
}

package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/commitea/commitea/cmd/commitea/config"
)

// TestServeSetsAMemoryLimit: the buffer budget bounded the bytes a
// request holds, but the collector let the heap grow to twice what was
// live, so 1,000 hostile bodies took serve past the budget plus 64 MiB
// once in four runs. serve sets the runtime's soft memory limit from
// server.memory_limit: by default the budget plus 32 MiB, GOMEMLIMIT when
// the operator set it, nothing with -1.
func TestServeSetsAMemoryLimit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		limit      int64
		gomemlimit string
		want       int64 // -2: not set
	}{
		{"default", 0, "", config.DefaultMaxBufferedBytes + config.DefaultMemoryHeadroom},
		{"configured", 200 << 20, "", 200 << 20},
		{"GOMEMLIMIT wins over the default", 0, "500MiB", -2},
		{"configured wins over GOMEMLIMIT", 200 << 20, "500MiB", 200 << 20},
		{"left alone", -1, "", -2},
	} {
		var set int64 = -2
		m := &Main{
			Getenv: func(k string) string {
				if k == "GOMEMLIMIT" {
					return c.gomemlimit
				}
				return ""
			},
			SetMemoryLimit: func(n int64) int64 {
				if n >= 0 {
					set = n
				}
				return 500 << 20
			},
			logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		}
		m.applyMemoryLimit(config.ServerConfig{MaxBufferedBytes: config.DefaultMaxBufferedBytes, MemoryLimit: c.limit})
		if set != c.want {
			t.Errorf("%s: limit set %d, want %d", c.name, set, c.want)
		}
	}
	cfg := config.Default()
	cfg.Server.MemoryLimit = cfg.Server.MaxBufferedBytes + 1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "memory_limit") {
		t.Errorf("a memory limit leaving 1 byte beyond the budget: %v, want it refused", err)
	}
	cfg.Server.MemoryLimit = 0
	if err := cfg.Validate(); err != nil && strings.Contains(err.Error(), "memory_limit") {
		t.Errorf("the default memory limit refused: %v", err)
	}
}

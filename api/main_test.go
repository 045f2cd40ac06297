package api

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/commitea/commitea/api/mcpstdio"
)

// stdioRelayEnv, set in the environment of this test binary, makes it
// `commitea mcp`: the TypeScript SDK's StdioClientTransport launches it to
// reach COMMITEA_URL with COMMITEA_TOKEN over stdio. (The command's own
// wiring is tested in cmd/commitea; this is the same relay.)
const stdioRelayEnv = "COMMITEA_TEST_STDIO_RELAY"

func TestMain(m *testing.M) {
	if os.Getenv(stdioRelayEnv) != "" {
		p := &mcpstdio.Proxy{Endpoint: os.Getenv("COMMITEA_URL"), Token: os.Getenv("COMMITEA_TOKEN"),
			Poll: 50 * time.Millisecond, Log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
		if err := p.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "relay:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

package config

import (
	"net"
	"strings"
	"testing"

	"github.com/commitea/commitea/cmd/commitea/config/configtest"
)

// server.public_url is the origin people reach CommiTea at behind a proxy;
// only an http(s) origin is accepted, since every page, cookie and redirect
// is served from the root.
func TestPublicURL(t *testing.T) {
	env := configtest.ValidEnv()
	env["COMMITEA_PUBLIC_URL"] = "https://commitea.example.com/"
	cfg, err := Load("", configtest.Getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.Server.PublicURL != "https://commitea.example.com/" {
		t.Fatalf("public url %q", cfg.Server.PublicURL)
	}
	if got := cfg.PublicBase(&net.TCPAddr{IP: net.IPv4zero, Port: 8080}); got != "https://commitea.example.com" {
		t.Errorf("PublicBase = %q", got)
	}
	for _, bad := range []struct{ url, want string }{
		{"commitea.example.com", "must be an absolute http(s) URL"},
		{"ftp://commitea.example.com", "must be an absolute http(s) URL"},
		{"https://", "must be an absolute http(s) URL"},
		{"https://user:pw@commitea.example.com", "must not carry a user or password"},
		{"https://commitea.example.com/?x=1", "must not have a query or fragment"},
		{"https://commitea.example.com/#top", "must not have a query or fragment"},
		{"https://example.com/commitea", `must be an origin without a path (CommiTea serves from the root of its address), got path "/commitea"`},
	} {
		c := cfg
		c.Server.PublicURL = bad.url
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "config: COMMITEA_PUBLIC_URL (server.public_url): "+bad.want) {
			t.Errorf("%q: %v, want %q", bad.url, err, bad.want)
		}
	}
	// Without it, links use the listen address, a wildcard shown as loopback.
	cfg.Server.PublicURL = ""
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "http://127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "http://127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 9000}, "http://10.0.0.5:9000"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 9000}, "http://[::1]:9000"},
	} {
		if got := cfg.PublicBase(tc.addr); got != tc.want {
			t.Errorf("PublicBase(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
	if got := cfg.PublicBase(nil); got != "http://127.0.0.1:8080" {
		t.Errorf("PublicBase(nil) with addr %q = %q", cfg.Server.Addr, got)
	}
}

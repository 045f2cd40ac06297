package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/commitea/commitea/cmd/commitea/config"
	"github.com/commitea/commitea/cmd/commitea/config/configtest"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// TestComposeInit runs deploy/compose-init.sh (bash and curl, as in the
// gitea image) against the fake forge: it creates the token, the webhook
// and the OAuth2 application and writes their secrets where CommiTea's
// configuration reads them (NAME_FILE); run again it changes nothing; a
// new public URL updates the application and its secret. Only the step
// that runs the gitea CLI against Gitea's own database cannot run here: a
// stand-in su-exec answers as the CLI does when the admin already exists.
func TestComposeInit(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "sed", "grep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("compose-init.sh needs %s on PATH (.ci/run installs curl): %v", tool, err)
		}
	}
	forge, err := giteafake.New(giteafake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer forge.Close()
	const adminPassword = "compose-admin-password"
	forge.SetPassword("ceo", adminPassword)

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	stub := "#!/bin/sh\necho 'Command error: CreateUser: user already exists [name: ceo]' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "su-exec"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"token": filepath.Join(dir, "gitea-token"), "id": filepath.Join(dir, "oauth-client-id"), "secret": filepath.Join(dir, "oauth-client-secret")}
	const webhook, hookSecret = "http://commitea:8080/webhooks/gitea", "compose-webhook-secret-0123456789"
	initScript := func(publicURL string) string {
		t.Helper()
		cmd := exec.Command("bash", filepath.Join("..", "..", "deploy", "compose-init.sh"))
		cmd.Env = append(os.Environ(),
			"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"GITEA_URL="+forge.URL, "ADMIN_USER=ceo", "ADMIN_PASSWORD="+adminPassword, "REPO=demo",
			"WEBHOOK_URL="+webhook, "COMMITEA_WEBHOOK_SECRET="+hookSecret, "PUBLIC_URL="+publicURL,
			"TOKEN_FILE="+files["token"], "OAUTH_CLIENT_ID_FILE="+files["id"], "OAUTH_CLIENT_SECRET_FILE="+files["secret"],
			fmt.Sprintf("TOKEN_OWNER_UID=%d", os.Getuid()), fmt.Sprintf("TOKEN_OWNER_GID=%d", os.Getgid()))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("compose-init.sh: %v\n%s", err, out)
		}
		return string(out)
	}
	read := func(name string) string {
		t.Helper()
		data, err := os.ReadFile(files[name])
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(files[name]); st.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want 0600", files[name], st.Mode().Perm())
		}
		return strings.TrimSpace(string(data))
	}

	initScript("http://localhost:8080")
	token, clientID, secret := read("token"), read("id"), read("secret")
	apps := forge.OAuthApps()
	if len(apps) != 1 || apps[0].Name != "CommiTea" || apps[0].ClientID != clientID || apps[0].ClientSecret != secret ||
		!apps[0].Confidential || strings.Join(apps[0].RedirectURIs, " ") != "http://localhost:8080/auth/callback" {
		t.Fatalf("applications after init: %+v (files: %s, %s)", apps, clientID, secret)
	}
	if hooks := forge.Hooks(); len(hooks) != 1 || hooks[0].URL != webhook || hooks[0].Secret != hookSecret {
		t.Fatalf("webhooks after init: %+v", hooks)
	}

	// What CommiTea reads from those files works against the forge: the
	// token is ceo's, and the application's secret authenticates it (a
	// made-up code is then refused as a code, not as a client).
	env := map[string]string{"GITEA_TOKEN_FILE": files["token"], "GITEA_OAUTH_CLIENT_ID_FILE": files["id"], "GITEA_OAUTH_CLIENT_SECRET_FILE": files["secret"]}
	cfg, err := config.Load("", configtest.Getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Gitea.Token.Reveal() != token || cfg.Gitea.OAuthClientID != clientID || cfg.Gitea.OAuthClientSecret.Reveal() != secret {
		t.Fatalf("config from the files: %q %q", cfg.Gitea.OAuthClientID, cfg.Gitea.OAuthClientSecret.Reveal())
	}
	gc, err := gitea.New(forge.URL, cfg.Gitea.Token.Reveal(), gitea.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if me, err := gc.CurrentUser(context.Background()); err != nil || me.Login != "ceo" {
		t.Fatalf("the token's user: %+v %v", me, err)
	}
	conf := &oauth2.Config{ClientID: cfg.Gitea.OAuthClientID, ClientSecret: cfg.Gitea.OAuthClientSecret.Reveal(),
		Endpoint: oauth2.Endpoint{TokenURL: forge.URL + "/login/oauth/access_token", AuthStyle: oauth2.AuthStyleInHeader}}
	var re *oauth2.RetrieveError
	if _, err := conf.Exchange(context.Background(), "made-up"); !errors.As(err, &re) || re.ErrorDescription != "client is not authorized" {
		t.Fatalf("exchange with the written secret: %v", err)
	}

	// Again: nothing changes, the secret included.
	if out := initScript("http://localhost:8080"); !strings.Contains(out, "is current") {
		t.Errorf("second run:\n%s", out)
	}
	if read("token") != token || read("secret") != secret || len(forge.OAuthApps()) != 1 || len(forge.Hooks()) != 1 {
		t.Fatalf("second run changed things: %+v %+v", forge.OAuthApps(), forge.Hooks())
	}

	// A new public URL: the same application, its new redirect and secret.
	initScript("https://commitea.example.com")
	apps = forge.OAuthApps()
	if len(apps) != 1 || apps[0].ClientID != clientID || apps[0].RedirectURIs[0] != "https://commitea.example.com/auth/callback" ||
		read("secret") == secret || read("secret") != apps[0].ClientSecret {
		t.Fatalf("after a new public URL: %+v, secret file %s", apps, read("secret"))
	}
	// A lost secret file: the secret is made anew (Gitea shows it only then).
	if err := os.Remove(files["secret"]); err != nil {
		t.Fatal(err)
	}
	initScript("https://commitea.example.com")
	if read("secret") != forge.OAuthApps()[0].ClientSecret {
		t.Fatal("secret file not restored")
	}
}

package signin

import (
	"html/template"
	"net/http"
)

// StylesheetPath serves the sign-in pages' stylesheet. The pages carry no
// inline style, so they work under a Content-Security-Policy that allows
// only what CommiTea serves; it is served without a session, since the
// pages are for people without one.
const StylesheetPath = "/auth/signin.css"

const stylesheet = `:root { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #212121; background: #fafafa; }
body { margin: 0; }
header { background: #3e2723; color: #fff; padding: 10px 20px; font-weight: 700; font-size: 18px; }
main { padding: 16px 20px 40px; max-width: 40em; }
a.button { display: inline-block; background: #4e342e; color: #fff; padding: 8px 16px; border-radius: 4px; text-decoration: none; }
.note { color: #616161; font-size: 14px; }
`

func serveStylesheet(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write([]byte(stylesheet))
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · CommiTea</title>
<link rel="stylesheet" href="` + StylesheetPath + `">
</head><body><header>CommiTea</header><main>
<h1>{{.Title}}</h1><p>{{.Message}}</p>
{{with .SignIn}}<p><a class="button" id="sign-in" href="{{.}}">Sign in with Gitea</a></p>{{end}}
{{with .Note}}<p class="note">{{.}}</p>{{end}}
</main></body></html>
`))

// page writes a small HTML page: a title, a message, a sign-in button
// when signIn is set.
func page(w http.ResponseWriter, status int, title, message, signIn string) {
	Page(w, status, title, message, signIn, "")
}

// Page is page with a note under the button, for the api package's
// "sign in first" answer.
func Page(w http.ResponseWriter, status int, title, message, signIn, note string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = pageTmpl.Execute(w, struct{ Title, Message, SignIn, Note string }{title, message, signIn, note})
}

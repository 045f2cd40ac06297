package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/commitea/commitea/worker/tools"
)

// PMStateRenderer renders a project's directive ledger as Markdown ("" is
// the only configured project); (*tools.Service).PMStateMarkdown is one.
type PMStateRenderer func(ctx context.Context, project string) (string, error)

// pmState is GET /v1/pm-state.md[?project=owner/repo].
func pmState(render PMStateRenderer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		md, err := render(r.Context(), r.URL.Query().Get("project"))
		if err != nil {
			var te *tools.Error
			if errors.As(err, &te) {
				writeToolError(w, te)
				return
			}
			writeError(w, CodeInternal, "could not render the ledger; the error is logged", "")
			return
		}
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(md))
	}
}

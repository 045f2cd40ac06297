package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/commitea/commitea/cmd/commitea/config"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/reginald"
	"github.com/commitea/commitea/worker/tools"
)

// withReginald adds the ask tool to the tool registry serve mounts, over
// the one model router serve shares: without a small model, ask answers
// MODEL_UNAVAILABLE and the four tools work as before.
func (m *Main) withReginald(cfg config.Config, pool *store.Pool, svc *tools.Service, router *models.Router) *tools.Registry {
	base := svc.Registry()
	r := &reginald.Reginald{Tools: base, Models: router, Pool: pool, MaxToolCalls: cfg.Models.AskMaxToolCalls,
		Log: m.logger.With(slog.String("component", "reginald"))}
	return reginald.Registry(base, r)
}

// codeModelUnavailable is the tool API's code for a model role that is not
// configured or not answering.
const codeModelUnavailable = "MODEL_UNAVAILABLE"

// askWithoutModel is what ask adds to a MODEL_UNAVAILABLE: the instance's
// setting that gives Reginald a model, and the command that reads the same
// data without one.
const askWithoutModel = `
ask needs a small model on the instance: set COMMITEA_SMALL_MODEL (with COMMITEA_SMALL_BASE_URL for a
local OpenAI-compatible server, or COMMITEA_SMALL_API_KEY) where 'commitea serve' or 'commitea demo' runs,
or models.small in its config file, and restart it. Until then read the data directly, e.g.
  commitea tool query_project '{"view":"focus"}'
  commitea tool query_project '{"view":"runway"}'
(GET /v1/tools lists every view and filter.)
`

// errorCode is the code of a tool API error envelope; "" for anything else.
func errorCode(body []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Error.Code
}

// errAskStopped ends ask with status 1 when Reginald gave no answer.
var errAskStopped = errors.New("ask: no answer: stopped at the tool-call limit")

// askAnswer is the part of ask's envelope the command prints.
type askAnswer struct {
	Data struct {
		ConversationID string          `json:"conversationId"`
		Answer         string          `json:"answer"`
		Confirmed      bool            `json:"confirmed"`
		Unconfirmed    []string        `json:"unconfirmed"`
		Data           json.RawMessage `json:"data"`
		Proposal       *struct {
			Tool        string          `json:"tool"`
			Input       json.RawMessage `json:"input"`
			Consequence string          `json:"consequence"`
		} `json:"proposal"`
		Stopped string `json:"stopped"`
		Stats   struct {
			ToolCalls int `json:"toolCalls"`
		} `json:"stats"`
	} `json:"data"`
	Instruction string `json:"instruction"`
	Safety      string `json:"safety"`
}

// runAsk asks Reginald of a running instance over POST /v1/ask and prints
// the answer, the conversation id to continue with, and any proposed
// apply_changes batch; --json prints the whole envelope.
func (m *Main) runAsk(ctx context.Context, g globalOptions, args []string) error {
	var url, project, conversation string
	var asJSON bool
	fs := m.newFlagSet("ask", "[--url URL] [--project OWNER/REPO] [--conversation ID] [--json] \"question\"", &g)
	fs.StringVar(&url, "url", m.Getenv("COMMITEA_URL"), "base `URL` of the running instance (env COMMITEA_URL; default http://localhost:8080)")
	fs.StringVar(&project, "project", "", "`owner/repo` to ask about (default: the only configured project)")
	fs.StringVar(&conversation, "conversation", "", "continue the conversation with this `id`")
	fs.BoolVar(&asJSON, "json", false, "print the whole answer as JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageError{"ask: want a question"}
	}
	token := m.Getenv("COMMITEA_TOKEN")
	if token == "" {
		return usageError{"ask: set COMMITEA_TOKEN to a bearer token of the instance"}
	}
	if url == "" {
		url = "http://localhost:8080"
	}
	input, _ := json.Marshal(reginald.AskInput{Question: strings.Join(fs.Args(), " "), Project: project, ConversationID: conversation})
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	status, body, err := callInstance(ctx, url, "/v1/ask", token, nil, input)
	if err != nil {
		return fmt.Errorf("ask: %w", err)
	}
	var a askAnswer
	decoded := json.Unmarshal(body, &a) == nil
	if status != http.StatusOK || asJSON || !decoded {
		if err := m.printAnswer(status, body); err != nil {
			if errorCode(body) == codeModelUnavailable {
				fmt.Fprint(m.Stderr, askWithoutModel)
			}
			return err
		}
		if decoded && a.Data.Stopped != "" {
			return errAskStopped
		}
		return nil
	}
	d := a.Data
	if d.Stopped != "" {
		// The data read can be tens of kilobytes: not for a terminal.
		fmt.Fprintf(m.Stderr, "Reginald stopped after %d tool calls without an answer (the limit for one question, models.ask_max_tool_calls).\n"+
			"Ask a narrower question, or read the view you need with 'commitea tool query_project'; --json shows the data it read.\n", d.Stats.ToolCalls)
		fmt.Fprintf(m.Stderr, "conversation: %s (continue with --conversation %s)\n", d.ConversationID, d.ConversationID)
		return errAskStopped
	}
	fmt.Fprintln(m.Stdout, d.Answer)
	if !d.Confirmed && len(d.Data) > 0 {
		var pretty bytes.Buffer
		if json.Indent(&pretty, d.Data, "", "  ") == nil {
			fmt.Fprintf(m.Stdout, "\nThe data read:\n%s\n", pretty.String())
		}
	}
	if p := d.Proposal; p != nil {
		var pretty bytes.Buffer
		_ = json.Indent(&pretty, p.Input, "", "  ")
		fmt.Fprintf(m.Stdout, "\nProposed %s (send it once a person approves): %s\n%s\n", p.Tool, p.Consequence, pretty.String())
	}
	fmt.Fprintf(m.Stderr, "conversation: %s (continue with --conversation %s)\n", d.ConversationID, d.ConversationID)
	return nil
}

package api

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFlowResource: the flow figures are an MCP resource in the
// commitea:// scheme, listed with the snapshot's time and read whole, with
// "how many by when" read on each open milestone's due date.
func TestFlowResource(t *testing.T) {
	t.Parallel()
	s := newToolStack(t, true)
	ctx := context.Background()
	for _, endpoint := range []string{"/mcp", "/mcp/readonly"} {
		cs := mcpConnect(t, s.srv.URL+endpoint, readerSecret)
		list, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var listed *mcp.Resource
		for _, r := range list.Resources {
			if r.URI == "commitea://ceo/demo/flow" {
				listed = r
			}
		}
		if listed == nil || listed.MIMEType != "application/json" || listed.Annotations == nil || listed.Annotations.LastModified == "" {
			t.Fatalf("%s: flow listed as %+v", endpoint, listed)
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "commitea://ceo/demo/flow"})
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Project  string `json:"project"`
			Snapshot struct {
				Version int64 `json:"version"`
			} `json:"snapshot"`
			TimeZone  string `json:"timeZone"`
			CycleTime struct {
				N           int `json:"n"`
				Percentiles struct {
					P85 int `json:"p85"`
				} `json:"percentiles"`
			} `json:"cycleTime"`
			SLE struct {
				Days int `json:"days"`
			} `json:"sle"`
			CFD    []json.RawMessage `json:"cfd"`
			DoneBy struct {
				Open      int   `json:"open"`
				AtLeast80 []int `json:"atLeast80"`
			} `json:"doneBy"`
			ByMilestone []struct {
				Milestone int64  `json:"milestone"`
				Due       string `json:"due"`
				AtLeast80 int    `json:"atLeast80"`
			} `json:"byMilestone"`
		}
		if len(res.Contents) != 1 || json.Unmarshal([]byte(res.Contents[0].Text), &doc) != nil {
			t.Fatalf("%s: read %+v", endpoint, res.Contents)
		}
		if doc.Project != "ceo/demo" || doc.Snapshot.Version < 1 || doc.TimeZone == "" || len(doc.CFD) == 0 || len(doc.DoneBy.AtLeast80) == 0 {
			t.Fatalf("%s: flow document %.400s", endpoint, res.Contents[0].Text)
		}
		if len(doc.ByMilestone) == 0 {
			t.Errorf("%s: no milestone due date read: %.300s", endpoint, res.Contents[0].Text)
		}
		for _, m := range doc.ByMilestone {
			if m.Due == "" || m.AtLeast80 < 0 || m.AtLeast80 > doc.DoneBy.Open {
				t.Errorf("%s: by milestone %+v", endpoint, m)
			}
		}
	}
}

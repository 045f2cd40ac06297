package standup

import (
	"context"
	"fmt"

	"github.com/commitea/commitea/worker/models"
)

// ModelPhraser phrases standups with a language model: the router's small
// role (models.Router.For(models.Small)). Usage is recorded under the tool
// name "standup".
type ModelPhraser struct {
	Model models.Model
	// MaxTokens caps the answer; default 1,500 (a standup is shorter than
	// its draft).
	MaxTokens int
}

// Phrase implements Phraser.
func (p ModelPhraser) Phrase(ctx context.Context, req PhraseRequest) (string, error) {
	limit := p.MaxTokens
	if limit <= 0 {
		limit = 1500
	}
	temperature := 0.2
	resp, err := p.Model.Generate(ctx, models.Request{
		Tool: "standup",
		Messages: []models.Message{
			{Role: models.System, Content: req.Instructions},
			{Role: models.User, Content: req.Draft},
		},
		MaxTokens:   limit,
		Temperature: &temperature,
	})
	if err != nil {
		return "", fmt.Errorf("phrase standup: %w", err)
	}
	return resp.Text, nil
}

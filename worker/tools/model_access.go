package tools

import (
	"context"
	"errors"

	"github.com/commitea/commitea/worker/models"
)

// ModelRouter is what the tools need of the language-model router
// (*models.Router): whether a role is configured, and a generation on it
// with failover, budgets and structured-output repair.
type ModelRouter interface {
	Has(role models.Role) bool
	Generate(ctx context.Context, role models.Role, req models.Request) (models.Response, error)
}

// hasModel reports whether role can answer at all.
func (s *Service) hasModel(role models.Role) bool {
	return s.Models != nil && s.Models.Has(role)
}

// modelError turns the router's typed errors into the tool errors callers
// see; anything else stays an internal error (logged, not shown).
func modelError(tool string, err error) error {
	switch models.ErrorCode(err) {
	case models.CodeModelUnavailable:
		return Errorf(CodeModelUnavailable, "", "%s: %v", tool, err)
	case models.CodeBudgetExhausted:
		return Errorf(CodeBudgetExhausted, "", "%s: %v", tool, err)
	case models.CodeInvalidOutput:
		var ie *models.InvalidOutputError
		if errors.As(err, &ie) {
			return Errorf(CodeModelInvalidOutput, "", "%s: the %s model (%s) gave no usable answer, even after one repair: %v; try again or rephrase",
				tool, ie.Role, ie.Model, ie.Err)
		}
		return Errorf(CodeModelInvalidOutput, "", "%s: %v", tool, err)
	}
	return err
}

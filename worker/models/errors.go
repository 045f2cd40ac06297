package models

import (
	"errors"
	"fmt"
	"time"
)

// Error codes, as the tool API reports them.
const (
	CodeBudgetExhausted  = "BUDGET_EXHAUSTED"
	CodeModelUnavailable = "MODEL_UNAVAILABLE"
	// CodeInvalidOutput: the model answered twice (first answer and
	// repair) with JSON that does not match the requested schema.
	CodeInvalidOutput = "MODEL_INVALID_OUTPUT"
)

// ErrorCode returns the code of a models error anywhere in err's chain, or
// "" when err is not one.
func ErrorCode(err error) string {
	var c interface{ Code() string }
	if errors.As(err, &c) {
		return c.Code()
	}
	return ""
}

// BudgetExhaustedError stops model calls hard until the day ends.
type BudgetExhaustedError struct {
	// Role is the role whose budget ran out, or "" for the budget shared by
	// all roles.
	Role Role
	// Model is the model the request was for.
	Model string
	// Limit is "requests", "tokens" or "cost_usd".
	Limit string
	Used  float64
	Max   float64
	// Need is what the refused request needs of the limit: 1 request, its
	// estimated prompt tokens, or its prompt's estimated cost.
	Need     float64
	ResetsAt time.Time
}

// Left is what remains of the day's limit.
func (e *BudgetExhaustedError) Left() float64 { return max(e.Max-e.Used, 0) }

func (e *BudgetExhaustedError) Error() string {
	scope := "all model roles"
	if e.Role != "" {
		scope = "model role " + string(e.Role)
	}
	unit := map[string]string{"requests": "requests", "tokens": "tokens", "cost_usd": "USD"}[e.Limit]
	need := formatAmount(e.Need) + " " + unit
	if e.Limit != "requests" {
		need = "about " + need
	}
	msg := fmt.Sprintf("daily budget exhausted: %s has %s of its %s %s left today", scope, formatAmount(e.Left()), formatAmount(e.Max), unit)
	if e.Need > 0 {
		msg += ", and this request needs " + need
	}
	if e.Need > e.Max {
		msg += ", more than the whole day's limit: raise it"
	}
	return msg + "; resets at " + e.ResetsAt.Format(time.RFC3339)
}

// Code implements the coded-error convention of the tool API.
func (e *BudgetExhaustedError) Code() string { return CodeBudgetExhausted }

func formatAmount(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%.4f", f)
}

// UnavailableError says a role cannot answer: it is not configured, or its
// model and its fallback both failed.
type UnavailableError struct {
	Role Role
	// Err is nil when the role is not configured.
	Err error
}

func (e *UnavailableError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("no %s model is configured", e.Role)
	}
	return fmt.Sprintf("%s model unavailable: %v", e.Role, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Code implements the coded-error convention of the tool API.
func (e *UnavailableError) Code() string { return CodeModelUnavailable }

// InvalidOutputError is a structured answer that stayed invalid after the
// repair request.
type InvalidOutputError struct {
	Role  Role
	Model string
	// First is what was wrong with the first answer, Err with the repaired
	// one.
	First error
	Err   error
	// Text is the last answer as the model wrote it, for logs.
	Text string
}

func (e *InvalidOutputError) Error() string {
	return fmt.Sprintf("%s model %s gave no valid structured answer after one repair: %v", e.Role, e.Model, e.Err)
}

func (e *InvalidOutputError) Unwrap() error { return e.Err }

// Code implements the coded-error convention of the tool API.
func (e *InvalidOutputError) Code() string { return CodeInvalidOutput }

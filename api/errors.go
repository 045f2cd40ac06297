package api

import (
	"encoding/json"
	"net/http"

	"github.com/commitea/commitea/worker/tools"
)

// Error codes shared by every endpoint; writeError maps each to a status.
const (
	CodeInvalidInput     = "INVALID_INPUT"
	CodeUnauthorized     = "UNAUTHORIZED"
	CodeTooLarge         = "PAYLOAD_TOO_LARGE"
	CodeUnavailable      = "UNAVAILABLE"
	CodeInternal         = "INTERNAL"
	CodeNotFound         = "NOT_FOUND"
	CodeForbidden        = "FORBIDDEN"
	CodeNeedsApproval    = "NEEDS_APPROVAL"
	CodeModelUnavailable = "MODEL_UNAVAILABLE"
	CodeTimeout          = "REQUEST_TIMEOUT"
)

var statusOf = map[string]int{
	CodeInvalidInput:     http.StatusBadRequest,
	CodeUnauthorized:     http.StatusUnauthorized,
	CodeForbidden:        http.StatusForbidden,
	CodeNotFound:         http.StatusNotFound,
	CodeTooLarge:         http.StatusRequestEntityTooLarge,
	CodeNeedsApproval:    http.StatusConflict,
	CodeUnavailable:      http.StatusServiceUnavailable,
	CodeModelUnavailable: http.StatusServiceUnavailable,
	CodeInternal:         http.StatusInternalServerError,
	CodeTimeout:          http.StatusRequestTimeout,
	// The tools' own codes share the table, so one writer maps every code.
	tools.CodeNotReady:           http.StatusServiceUnavailable,
	tools.CodeNamespaceForbidden: http.StatusUnprocessableEntity,
	tools.CodeBudgetExhausted:    http.StatusTooManyRequests,
	// The model answered, twice, with nothing usable: an upstream failure.
	tools.CodeModelInvalidOutput: http.StatusBadGateway,
	tools.CodeGiteaUnavailable:   http.StatusBadGateway,
	tools.CodeNotImplemented:     http.StatusNotImplemented,
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// writeError is the one place an error becomes a response.
func writeError(w http.ResponseWriter, code, message, field string) {
	writeJSON(w, statusFor(code), errorBody{Error: errorDetail{Code: code, Message: message, Field: field}})
}

// writeToolError writes a tool failure through the same table, with
// every field the tool set (a NEEDS_APPROVAL preview too).
func writeToolError(w http.ResponseWriter, e *tools.Error) {
	writeJSON(w, statusFor(e.Code), tools.Failure{Error: e})
}

func statusFor(code string) int {
	if status, ok := statusOf[code]; ok {
		return status
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

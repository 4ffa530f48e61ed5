package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/declare"
	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/template"
	"github.com/contextasm/contextasm/truncate"
)

// The error codes of the API (docs/server.md lists them with their
// statuses). A client branches on the code; the message is for people.
const (
	codeMalformedJSON  = "malformed_json"
	codeUnknownField   = "unknown_field"
	codeWrongType      = "wrong_type"
	codeInvalid        = "invalid_request"
	codeInvalidDecl    = "invalid_declarations"
	codeInvalidTpl     = "invalid_template"
	codeUnknownTpl     = "unknown_template"
	codeUnauthorized   = "unauthorized"
	codeRoleNotAllowed = "role_not_allowed"
	codeNotFound       = "not_found"
	codeMethod         = "method_not_allowed"
	codeFedBack        = "already_fed_back"
	codeTooLarge       = "body_too_large"
	codeResponseLarge  = "response_too_large"
	codeBudget         = "budget_too_small"
	codeConflict       = "required_conflict"
	codeOverloaded     = "overloaded"
	codeQueueFull      = "state_queue_full"
	codeShuttingDown   = "shutting_down"
	codeDeadline       = "deadline_exceeded"
	codeStoreFull      = "store_full"
	codeInternal       = "internal"
)

// apiError is every failure the API reports: a status and the JSON body
// {"error": {...}}.
type apiError struct {
	status int
	body   errorBody
	// retryAfter, when set, is sent as Retry-After (seconds).
	retryAfter int
}

// errorBody is the "error" object of a failure's body.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Field is the request field at fault ("roles[1]",
	// "declarations[3].scope"), when one is.
	Field string `json:"field,omitempty"`
	// Problems are every problem of a batch of declarations or of an
	// inline template.
	Problems []problem `json:"problems,omitempty"`
	// Required are the required blocks that did not fit.
	Required []requiredMiss `json:"required,omitempty"`
}

// problem is one problem of a declaration (with its index in the batch)
// or of an inline template.
type problem struct {
	Index     *int   `json:"index,omitempty"`
	Line      int    `json:"line,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	Field     string `json:"field,omitempty"`
	Message   string `json:"message"`
}

// requiredMiss is a truncate.RequiredMiss on the wire.
type requiredMiss struct {
	RequestID string `json:"request_id"`
	Section   string `json:"section,omitempty"`
	Tokens    int    `json:"tokens"`
	Limit     int    `json:"limit"`
	Reason    string `json:"reason"`
}

func (e *apiError) Error() string { return e.body.Code + ": " + e.body.Message }

func newError(status int, code, field, format string, args ...any) *apiError {
	return &apiError{status: status, body: errorBody{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}}
}

func badRequest(code, field, format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, code, field, format, args...)
}

// notFound is the answer for anything of another tenant as for anything
// that does not exist: the two must look the same.
func notFound(what, id string) *apiError {
	return newError(http.StatusNotFound, codeNotFound, "", "no %s %q", what, id)
}

// fromEngine maps an error of the library to the API's: its sentinels
// to their documented statuses. field names the request field an
// ErrInvalid is about, when the caller knows it.
func fromEngine(err error, field string) *apiError {
	var ae *apiError
	var req *truncate.RequiredError
	var tve *template.ValidationError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &req):
		e := newError(http.StatusUnprocessableEntity, codeBudget, "budget", "%v", err)
		for _, m := range req.Misses {
			e.body.Required = append(e.body.Required, requiredMiss{RequestID: m.RequestID, Section: m.Section, Tokens: m.Tokens, Limit: m.Limit, Reason: string(m.Reason)})
		}
		return e
	case errors.Is(err, contextasm.ErrConflict):
		return newError(http.StatusUnprocessableEntity, codeConflict, "", "%v", err)
	case errors.As(err, &tve):
		return templateError(tve)
	case errors.Is(err, contextasm.ErrStoreFull):
		return newError(http.StatusInsufficientStorage, codeStoreFull, "", "%v", err)
	case errors.Is(err, contextasm.ErrStateQueueFull):
		e := newError(http.StatusServiceUnavailable, codeQueueFull, "", "%v (nothing of this request was applied; retry)", err)
		e.retryAfter = 1
		return e
	case errors.Is(err, feedback.ErrResponseTooLarge):
		return newError(http.StatusRequestEntityTooLarge, codeResponseLarge, "response", "%v", err)
	case errors.Is(err, feedback.ErrInvalidCitation):
		return badRequest(codeInvalid, "cited", "%v", err)
	case errors.Is(err, declare.ErrInvalid):
		return badRequest(codeInvalidDecl, field, "%v", err)
	case errors.Is(err, contextasm.ErrInvalid), errors.Is(err, template.ErrInvalid):
		return badRequest(codeInvalid, field, "%v", err)
	case errors.Is(err, context.DeadlineExceeded):
		return newError(http.StatusGatewayTimeout, codeDeadline, "", "the request's deadline passed: %v", err)
	}
	return newError(http.StatusInternalServerError, codeInternal, "", "%v", err)
}

// templateError lists an inline template's problems.
func templateError(tve *template.ValidationError) *apiError {
	e := badRequest(codeInvalidTpl, "template", "the inline template is invalid: %d problem(s)", len(tve.Problems))
	for _, p := range tve.Problems {
		field := "template"
		if p.Field != "" {
			field += "." + p.Field
		}
		e.body.Problems = append(e.body.Problems, problem{Line: p.Line, Field: field, Message: p.Message})
	}
	if len(e.body.Problems) > 0 {
		e.body.Field = e.body.Problems[0].Field
		e.body.Message += ": " + e.body.Problems[0].Field + ": " + e.body.Problems[0].Message
	}
	return e
}

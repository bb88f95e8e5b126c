package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"go.temporal.io/api/serviceerror"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

// Error is the body of every error response:
// {"error": {"code": ..., "message": ..., "field": ...}}.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// Error returns the message, so an *Error is an error handlers can return.
func (e *Error) Error() string { return e.Message }

// invalid is a 400 naming the offending field.
func invalid(field, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Field: field, Message: fmt.Sprintf(format, args...)}
}

// handleError is Echo's one error handler: it maps errors to status codes and
// the JSON shape above.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	e := toAPIError(err)
	if e.Status == http.StatusServiceUnavailable {
		s.Logger.WarnContext(c.Request().Context(), "request_unavailable",
			"method", c.Request().Method, "path", c.Path(), "error", err)
	} else if e.Status >= 500 {
		s.Logger.ErrorContext(c.Request().Context(), "request_failed",
			"method", c.Request().Method, "path", c.Path(), "error", err)
	}
	if e.Status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
	}
	if err := c.JSON(e.Status, map[string]*Error{"error": e}); err != nil {
		s.Logger.Error("error_response_failed", "error", err)
	}
}

func toAPIError(err error) *Error {
	var apiErr *Error
	var fieldErr *policies.FieldError
	var httpErr *echo.HTTPError
	switch {
	case errors.As(err, &apiErr):
		return apiErr
	case errors.As(err, &fieldErr):
		code := "invalid_request"
		if errors.Is(err, policies.ErrUnknown) {
			code = "unknown_policy"
		}
		return &Error{Status: http.StatusBadRequest, Code: code, Field: fieldErr.Field, Message: fieldErr.Message}
	case store.IsUnavailable(err) || temporalUnavailable(err):
		return unavailable()
	case errors.Is(err, store.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: err.Error()}
	case errors.Is(err, store.ErrConflict):
		return &Error{Status: http.StatusConflict, Code: "conflict", Message: err.Error()}
	case errors.As(err, &httpErr) && httpErr.Code == http.StatusRequestEntityTooLarge:
		return tooLarge() // Echo's BodyLimit, before the body is read
	case errors.As(err, &httpErr):
		return &Error{Status: httpErr.Code, Code: strings.ReplaceAll(strings.ToLower(http.StatusText(httpErr.Code)), " ", "_"),
			Message: fmt.Sprint(httpErr.Message)}
	default:
		return &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
	}
}

// RetryAfterSeconds is the Retry-After of a 503: PostgreSQL or Temporal
// could not be reached. Retry with the same Idempotency-Key (or body id).
const RetryAfterSeconds = 1

func unavailable() *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "unavailable",
		Message: "a dependency (PostgreSQL or Temporal) is unavailable: retry later with the same Idempotency-Key"}
}

// temporalUnavailable tells whether err is Temporal's frontend being
// unreachable or overloaded.
func temporalUnavailable(err error) bool {
	var unav *serviceerror.Unavailable
	var exhausted *serviceerror.ResourceExhausted
	return errors.As(err, &unav) || errors.As(err, &exhausted)
}

// tooLarge is the one answer to an oversized body, whether Echo's BodyLimit
// refused it by its Content-Length or decode ran over the limit reading it.
func tooLarge() *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large",
		Message: fmt.Sprintf("request body over %d bytes", MaxBodyBytes)}
}

// decode reads the JSON request body into v strictly: one object, no unknown
// fields, types as declared. Its errors say what is wrong and where.
func decode(c echo.Context, v any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return invalid("", "malformed JSON: unexpected data after the object at byte %d", dec.InputOffset())
	}
	return nil
}

func decodeError(err error) *Error {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return invalid("", "malformed JSON: the body is empty; send a JSON object")
	case errors.As(err, &syntaxErr):
		return invalid("", "malformed JSON at byte %d: %s", syntaxErr.Offset, syntaxErr.Error())
	case errors.As(err, &typeErr):
		return invalid(typeErr.Field, "field %q must be %s, not %s", typeErr.Field, typeErr.Type, typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return invalid(name, "unknown field %q", name)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("", "malformed JSON: the body ends early")
	default:
		return invalid("", "malformed JSON: %s", err.Error())
	}
}

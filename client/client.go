package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Client is the API's client: the generated operations (the embedded
// ClientWithResponses) and Publish.
type Client struct {
	*ClientWithResponses
	// MaxPublishAttempts bounds the tries of one Publish; 0 means 5.
	MaxPublishAttempts int
	// MaxRetryWait caps the wait before one retry of Publish (a longer
	// Retry-After is cut to it); 0 means 30 seconds.
	MaxRetryWait time.Duration
}

// New returns a client of the API at baseURL (such as
// http://127.0.0.1:8080) that sends apiKey as its bearer credential: an
// account's hr_ key, or the admin key for the /v1/accounts/{id}/keys
// routes. An empty apiKey sends none (an API in open mode). opts are the
// generated ones: WithHTTPClient, WithRequestEditorFn.
func New(baseURL, apiKey string, opts ...ClientOption) (*Client, error) {
	if apiKey != "" {
		bearer := func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+apiKey)
			return nil
		}
		opts = append([]ClientOption{WithRequestEditorFn(bearer)}, opts...)
	}
	c, err := NewClientWithResponses(strings.TrimRight(baseURL, "/"), opts...)
	if err != nil {
		return nil, fmt.Errorf("hookrelay client: %w", err)
	}
	return &Client{ClientWithResponses: c}, nil
}

// Error is an answer of the API that is not a 2xx, with the API's error
// (its JSON shape {"error": {"code", "message", "field"}}).
type Error struct {
	// StatusCode is the HTTP status.
	StatusCode int `json:"-"`
	// Code is the API's error code: invalid_request, not_found, conflict, …
	Code string `json:"code"`
	// Message is the API's explanation.
	Message string `json:"message"`
	// Field names the offending field of a 400, when there is one.
	Field string `json:"field"`
}

// Error is the API's message, with the status and code.
func (e *Error) Error() string {
	msg := fmt.Sprintf("%d %s: %s", e.StatusCode, e.Code, e.Message)
	if e.Field != "" {
		msg += " (field " + e.Field + ")"
	}
	return msg
}

// Response is what every generated answer (…WithResponse) has.
type Response interface {
	StatusCode() int
	GetBody() []byte
}

// Check passes a generated operation's answer through when it is a 2xx,
// and otherwise returns err, or an *Error made of the API's error body:
//
//	sub, err := client.Check(c.GetSubscriptionWithResponse(ctx, id))
func Check[R Response](resp R, err error) (R, error) {
	if err != nil {
		return resp, err
	}
	if code := resp.StatusCode(); code < 200 || code > 299 {
		return resp, apiError(code, resp.GetBody())
	}
	return resp, nil
}

// apiError reads the API's error shape; a body without it (a proxy's
// answer) becomes the status text and the body's start.
func apiError(status int, body []byte) *Error {
	var shape struct {
		Error *Error `json:"error"`
	}
	if err := json.Unmarshal(body, &shape); err == nil && shape.Error != nil && shape.Error.Message != "" {
		shape.Error.StatusCode = status
		return shape.Error
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	if text == "" {
		text = http.StatusText(status)
	}
	return &Error{StatusCode: status, Code: strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_"), Message: text}
}

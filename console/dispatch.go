package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
)

// Caller is who an in-process /v1 call of the console acts as: the API's
// authentication takes it from the request's context (CallerOf), where
// only code in this process can put it, never a client.
type Caller struct {
	// Account is the account acted as ("" for the admin key alone).
	Account string
	// Admin manages accounts and API keys.
	Admin bool
}

type callerKey struct{}

// CallerOf returns the Caller of a request the console made in-process.
func CallerOf(ctx context.Context) (Caller, bool) {
	who, ok := ctx.Value(callerKey{}).(Caller)
	return who, ok
}

// apiError is a /v1 error answer: its status and the API's JSON error.
type apiError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field"`
}

func (e *apiError) Error() string {
	if e.Field != "" && e.Field != "Authorization" {
		return e.Message + " (" + e.Field + ")"
	}
	return e.Message
}

// call makes one /v1 request in-process as v's account (or admin), with
// body as its JSON, to the host c came to; a 2xx answer's JSON goes into
// out (when not nil), any other answer is an *apiError. Every rule of the
// change is the API's.
func (h *Console) call(c echo.Context, v *view, method, path string, body, out any) error {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx := context.WithValue(c.Request().Context(), callerKey{}, Caller{Account: v.Account, Admin: v.Admin})
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return err
	}
	req.RemoteAddr = "127.0.0.1:0" // the console, in this process
	req.Host, req.TLS = c.Request().Host, c.Request().TLS
	req.Header.Set("Content-Type", "application/json")
	w := &answer{header: http.Header{}, status: http.StatusOK}
	h.api.ServeHTTP(w, req)
	if w.status/100 != 2 {
		e := struct {
			Error apiError `json:"error"`
		}{}
		if err := json.Unmarshal(w.body.Bytes(), &e); err != nil || e.Error.Message == "" {
			return fmt.Errorf("console: %s %s: %d %q", method, path, w.status, w.body.String())
		}
		e.Error.Status = w.status
		return &e.Error
	}
	if out != nil && w.body.Len() > 0 {
		return json.Unmarshal(w.body.Bytes(), out)
	}
	return nil
}

// answer is the http.ResponseWriter of an in-process call.
type answer struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (w *answer) Header() http.Header { return w.header }

func (w *answer) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
}

func (w *answer) Write(b []byte) (int, error) {
	w.wrote = true
	return w.body.Write(b)
}

package api

// The contract check: every /v1 request an api test makes, and the answer it
// gets, is validated against api/openapi.json (the embedded OpenAPI var, as
// served at /v1/openapi.json).
//
// Library: github.com/getkin/kin-openapi (openapi3, openapi3filter, routers/
// gorillamux), v0.153.0. Its OpenAPI 3.1 support (since v0.136, completed
// in v0.150-v0.152) is what this document needs: type arrays such as
// ["string", "null"], const, unevaluatedProperties and the other JSON Schema
// 2020-12 keywords, which openapi3filter validates with a full 2020-12
// validator (santhosh-tekuri/jsonschema) for 3.1 documents, and
// (*openapi3.T).Validate checks a 3.1 document as such. It is the maintained
// Go library for request and response validation (the issue names it), so
// pb33f/libopenapi-validator, the alternative, was not needed.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/labstack/echo/v4"
)

// loadContract parses the OpenAPI document and builds its router, once.
var loadContract = sync.OnceValues(func() (*contract, error) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("load api/openapi.json: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("api/openapi.json is not a valid OpenAPI document: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route api/openapi.json: %w", err)
	}
	return &contract{doc: doc, router: router}, nil
})

// contract is the loaded document and its router.
type contract struct {
	doc    *openapi3.T
	router routers.Router
}

// exchange is one request and the answer the server gave.
type exchange struct {
	req     *http.Request
	reqBody []byte
	status  int
	header  http.Header
	body    []byte
}

// check validates x against the document: its route and method must be
// described, its answer's status, content type and body too, and a 2xx
// answer needs a request the document calls valid (otherwise the document
// and the server disagree on what is valid). A request the document calls
// invalid that gets a 4xx is fine: that is bad input refused.
func (k *contract) check(ctx context.Context, x exchange) error {
	req := x.req.Clone(ctx)
	req.Body = io.NopCloser(bytes.NewReader(x.reqBody))
	route, params, err := k.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("route not in api/openapi.json: %w", err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil && x.status >= 200 && x.status < 300 {
		return fmt.Errorf("the server accepted a request api/openapi.json calls invalid: %w", err)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: x.status, Header: x.header,
		Body: io.NopCloser(bytes.NewReader(x.body)), Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return fmt.Errorf("answer not as api/openapi.json describes: %w", err)
	}
	return nil
}

// validated is New(s) with the contract check on every /v1 route: a
// mismatch fails t, naming the method, path and status.
func validated(t *testing.T, s *Server) *echo.Echo {
	t.Helper()
	k, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	e := New(s)
	routes := map[string]bool{}
	for _, r := range e.Routes() {
		if r.Method != echo.RouteNotFound { // the /v1 group's 404, no route
			routes[r.Method+" "+r.Path] = true
		}
	}
	// Pre, not Use: it must wrap authentication and the error handler too,
	// to see every answer (Use middleware runs inside them).
	e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !strings.HasPrefix(c.Request().URL.Path, "/v1/") {
				return next(c)
			}
			x, err := record(c, next)
			if routes[c.Request().Method+" "+c.Path()] { // not a route: Echo's own 404 or 405
				if err := k.check(c.Request().Context(), x); err != nil {
					t.Errorf("openapi: %s %s → %d: %v", x.req.Method, x.req.URL.RequestURI(), x.status, err)
				}
			}
			return err
		}
	})
	return e
}

// record runs next, answering its error as the server does, and returns
// the exchange: the request and its body, and the answer written.
func record(c echo.Context, next echo.HandlerFunc) (exchange, error) {
	x := exchange{req: c.Request()}
	var err error
	if c.Request().Body != nil {
		if x.reqBody, err = io.ReadAll(c.Request().Body); err != nil {
			return x, err
		}
		c.Request().Body = io.NopCloser(bytes.NewReader(x.reqBody))
	}
	tee := &teeWriter{ResponseWriter: c.Response().Writer}
	c.Response().Writer = tee
	if err := next(c); err != nil {
		c.Error(err) // the server's error handler writes the answer now
	}
	x.status, x.header, x.body = c.Response().Status, c.Response().Header(), tee.body.Bytes()
	return x, nil
}

// teeWriter keeps a copy of the body written.
type teeWriter struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

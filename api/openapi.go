package api

import (
	_ "embed" // the OpenAPI document
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIPath serves the OpenAPI 3.1 description of /v1 (api/openapi.json).
// It needs no credentials: it holds no account data, and clients are
// generated from it.
const openAPIPath = "/v1/openapi.json"

// OpenAPI is the OpenAPI 3.1 description of the /v1 API, as served at
// /v1/openapi.json. The api tests check every /v1 request and answer they
// make against it, so it cannot drift from the handlers.
//
//go:embed openapi.json
var OpenAPI []byte

func (s *Server) getOpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, OpenAPI)
}

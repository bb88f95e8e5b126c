package api

import (
	"encoding/base64"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// registerKeys adds the API key routes, which need the admin key.
func (s *Server) registerKeys(e *echo.Echo) {
	e.POST("/v1/accounts/:id/keys", s.createKey, s.requireAdmin)
	e.GET("/v1/accounts/:id/keys", s.listKeys, s.requireAdmin)
	e.DELETE("/v1/accounts/:id/keys/:key_id", s.revokeKey, s.requireAdmin)
}

// KeyRequest is the body of POST /v1/accounts/{id}/keys.
type KeyRequest struct {
	Name string `json:"name"`
}

// NewKeyResponse is the answer to POST /v1/accounts/{id}/keys: the only time
// the key itself is shown, with, when the server takes SAS tokens, the key's
// Event Grid SAS key (docs/azure.md), which signs them.
type NewKeyResponse struct {
	store.APIKey
	Key             string `json:"key"`
	EventGridSASKey string `json:"eventgrid_sas_key,omitempty"`
}

func (s *Server) createKey(c echo.Context) error {
	var req KeyRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if err := checkName(req.Name); err != nil {
		return err
	}
	k, secret, err := s.Store.CreateAPIKey(c.Request().Context(), c.Param("id"), req.Name)
	if err != nil {
		return err
	}
	out := NewKeyResponse{APIKey: k, Key: secret}
	if s.Auth.SASSecret != "" {
		out.EventGridSASKey = base64.StdEncoding.EncodeToString(sasKeyOf(s.Auth.SASSecret, store.APIKeyHash(secret)))
	}
	return c.JSON(http.StatusCreated, out)
}

func (s *Server) listKeys(c echo.Context) error {
	keys, err := s.Store.ListAPIKeys(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"keys": keys})
}

func (s *Server) revokeKey(c echo.Context) error {
	k, err := s.Store.RevokeAPIKey(c.Request().Context(), c.Param("id"), c.Param("key_id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, k)
}

package api

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// SettingMode is the SAP Open Connectors account setting that chooses
// between retrying and queueing event notifications (docs/policies.md#sap).
const SettingMode = "notification.webhook.failure.policy"

// ownAccount checks that the :id of the path is the authenticated account.
func ownAccount(c echo.Context) (string, error) {
	id := c.Param("id")
	if id != account(c) {
		return "", unauthorized("these credentials are not account %q's", id)
	}
	return id, nil
}

// AccountRequest is the body of POST /accounts.
type AccountRequest struct {
	Name string `json:"name"`
}

// AccountResponse shows an account and its settings, never its secrets.
type AccountResponse struct {
	store.Account
	Settings map[string]string `json:"settings"`
}

// NewAccountResponse is the answer to POST /accounts: the only time the
// secrets are shown.
type NewAccountResponse struct {
	AccountResponse
	store.Credentials
	Authorization string `json:"authorization"`
}

func accountResponse(a store.Account) AccountResponse {
	return AccountResponse{Account: a, Settings: map[string]string{SettingMode: a.Mode}}
}

// checkName accepts the name of an account or an API key: not blank, at most
// 200 characters.
func checkName(name string) error {
	if strings.TrimSpace(name) == "" || len(name) > 200 {
		return invalid("name", "name is required, at most 200 characters")
	}
	return nil
}

func (s *Server) createAccount(c echo.Context) error {
	var req AccountRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if err := checkName(req.Name); err != nil {
		return err
	}
	a, cr, err := s.Store.CreateAccount(c.Request().Context(), req.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, NewAccountResponse{
		AccountResponse: accountResponse(a), Credentials: cr,
		Authorization: "User " + cr.UserSecret + ", Organization " + cr.OrganizationSecret,
	})
}

func (s *Server) getAccount(c echo.Context) error {
	id, err := ownAccount(c)
	if err != nil {
		return err
	}
	a, err := s.Store.GetAccount(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, accountResponse(a))
}

// SettingsRequest is the body of PATCH (or POST) /accounts/{id}/settings:
// SAP's {"notification.webhook.failure.policy": "retry"|"queue"}, or
// {"mode": ...} for short.
type SettingsRequest struct {
	Policy *string `json:"notification.webhook.failure.policy"`
	Mode   *string `json:"mode"`
}

// mode validates the request and returns the mode it asks for.
func (r SettingsRequest) mode() (string, error) {
	field, v := SettingMode, r.Policy
	switch {
	case r.Policy == nil && r.Mode == nil:
		return "", invalid(SettingMode, "%s is required: \"retry\" or \"queue\"", SettingMode)
	case r.Policy != nil && r.Mode != nil && *r.Policy != *r.Mode:
		return "", invalid("mode", "mode and %s disagree; give one", SettingMode)
	case r.Policy == nil:
		field, v = "mode", r.Mode
	}
	if *v != store.ModeRetry && *v != store.ModeQueue {
		return "", invalid(field, "%s must be \"retry\" or \"queue\", got %q", field, *v)
	}
	return *v, nil
}

func (s *Server) setAccountSettings(c echo.Context) error {
	id, err := ownAccount(c)
	if err != nil {
		return err
	}
	var req SettingsRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	mode, err := req.mode()
	if err != nil {
		return err
	}
	a, err := s.Store.SetAccountMode(c.Request().Context(), id, mode)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, accountResponse(a).Settings)
}

package console

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// routesAdmin adds the admin key's pages: accounts and their API keys.
func (h *Console) routesAdmin(g *echo.Group) {
	admin := func(fn handler) echo.HandlerFunc { return h.operator(needAdmin, fn) }
	g.GET("/accounts", admin(h.accountsPage))
	g.POST("/accounts", admin(h.createAccount))
	g.GET("/accounts/:id", admin(h.accountPage))
	g.POST("/accounts/:id/keys", admin(h.createKey))
	g.POST("/accounts/:id/keys/:key_id/revoke", admin(h.revokeKey))
}

// maxAccounts bounds the accounts page.
const maxAccounts = 500

// accountsPage lists the accounts, with the form that makes one.
func (h *Console) accountsPage(c echo.Context, v *view) error {
	as, err := h.opts.Store.ListAccounts(c.Request().Context(), maxAccounts)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "accounts", v, as)
}

// createAccount makes an account (POST /accounts) and shows its SAP
// secrets, once.
func (h *Console) createAccount(c echo.Context, v *view) error {
	var out struct {
		ID            string `json:"id"`
		Authorization string `json:"authorization"`
	}
	err := h.call(c, v, http.MethodPost, "/accounts", map[string]string{"name": c.FormValue("name")}, &out)
	if err != nil {
		return done(c, Base+"/accounts", err, "")
	}
	return h.render(c, http.StatusOK, "secret", v, secretData{Title: "Account created",
		Items: []item{{"Account", out.ID}, {"SAP Authorization header", out.Authorization}},
		Back:  Base + "/accounts/" + url.PathEscape(out.ID),
		Note:  "Copy the Authorization header now: it is not shown again. Make the account an API key on its page."})
}

// accountData is an account's page.
type accountData struct {
	Account store.Account
	Keys    []store.APIKey
}

// accountPage shows an account and its API keys, revoked ones included.
func (h *Console) accountPage(c echo.Context, v *view) error {
	ctx := c.Request().Context()
	a, err := h.opts.Store.GetAccount(ctx, param(c, "id"))
	if err != nil {
		return err
	}
	keys, err := h.opts.Store.ListAPIKeys(ctx, a.ID)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "account", v, accountData{Account: a, Keys: keys})
}

// createKey makes an API key of the account (POST
// /v1/accounts/{id}/keys) and shows it, once.
func (h *Console) createKey(c echo.Context, v *view) error {
	id := param(c, "id")
	back := Base + "/accounts/" + url.PathEscape(id)
	var out struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	err := h.call(c, v, http.MethodPost, "/v1/accounts/"+url.PathEscape(id)+"/keys",
		map[string]string{"name": c.FormValue("name")}, &out)
	if err != nil {
		return done(c, back, err, "")
	}
	return h.render(c, http.StatusOK, "secret", v, secretData{Title: "API key created",
		Items: []item{{"Key id", out.ID}, {"API key", out.Key}}, Back: back,
		Note: "Copy the API key now: it is not shown again. It logs in to this console and calls the API."})
}

// revokeKey revokes an API key (DELETE /v1/accounts/{id}/keys/{key_id}).
func (h *Console) revokeKey(c echo.Context, v *view) error {
	id := param(c, "id")
	err := h.call(c, v, http.MethodDelete,
		"/v1/accounts/"+url.PathEscape(id)+"/keys/"+url.PathEscape(param(c, "key_id")), nil, nil)
	return done(c, Base+"/accounts/"+url.PathEscape(id), err, "Key revoked: its sessions end now.")
}

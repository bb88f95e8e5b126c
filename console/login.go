package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// routesLogin adds the login form and the logout.
func (h *Console) routesLogin(g *echo.Group) {
	g.GET("/login", h.loginForm)
	g.POST("/login", h.login)
	g.POST("/logout", h.operator(needAny, h.logout))
}

// needAny: any operator's session (logging out).
const needAny = -1

// loginForm shows the form, with the CSRF token of an anonymous session
// made for it; a session that acts already goes to its pages.
func (h *Console) loginForm(c echo.Context) error {
	v, err := h.operatorView(c)
	if err != nil {
		return h.fail(c, nil, err)
	}
	if v != nil {
		return c.Redirect(http.StatusSeeOther, Base+"/endpoints")
	}
	v, err = h.formView(c)
	if err != nil {
		return h.fail(c, nil, err)
	}
	return h.render(c, http.StatusOK, "login", v, nil)
}

// formView is the session whose CSRF token the login form carries: the
// one the cookie holds, else a fresh anonymous one (which acts as nobody).
func (h *Console) formView(c echo.Context) (*view, error) {
	cl, err := h.readCookie(c, cookieSession, purposeSession)
	if err != nil {
		return nil, err
	}
	if cl.Kind == "" {
		cl = claims{Kind: kindAnon, Nonce: newNonce(), Expires: time.Now().Add(time.Hour).Unix()}
		if err := h.setSession(c, cookieSession, purposeSession, Base, cl); err != nil {
			return nil, err
		}
	}
	v, err := h.newView(c.Request().Context(), cl, false)
	if v != nil {
		v.Kind = kindAnon // the form shows no pages of the session
	}
	return v, err
}

// login takes an account's API key or the admin key, the credentials the
// API takes, and starts a session of its own (a fresh nonce).
func (h *Console) login(c echo.Context) error {
	v, err := h.formView(c)
	if err != nil {
		return h.fail(c, nil, err)
	}
	return h.checked(c, v, func(c echo.Context, v *view) error {
		cl, err := h.credentials(c, strings.TrimSpace(c.FormValue("key")))
		if errors.Is(err, store.ErrUnauthorized) {
			return h.render(c, http.StatusUnauthorized, "login", v,
				"That key is not valid (or was revoked): give an account's API key (hr_…) or the admin key.")
		}
		if err != nil {
			return err
		}
		if err := h.setSession(c, cookieSession, purposeSession, Base, cl); err != nil {
			return err
		}
		if cl.Kind == kindAdmin {
			return c.Redirect(http.StatusSeeOther, Base+"/accounts")
		}
		return c.Redirect(http.StatusSeeOther, Base+"/endpoints")
	})
}

// credentials are the session claims of a key: the admin key, or an
// account's live API key; store.ErrUnauthorized otherwise.
func (h *Console) credentials(c echo.Context, key string) (claims, error) {
	ctx := c.Request().Context()
	cl := claims{Nonce: newNonce(), Expires: time.Now().Add(sessionTTL).Unix()}
	if h.opts.AdminKey != "" && sameKey(key, h.opts.AdminKey) {
		fp, err := h.adminPrint(ctx)
		cl.Kind, cl.AdminKey = kindAdmin, fp
		return cl, err
	}
	k, err := h.opts.Store.APIKeyBySecret(ctx, key)
	if err != nil {
		return cl, err
	}
	cl.Kind, cl.Account, cl.KeyID = kindKey, k.AccountID, k.ID
	return cl, nil
}

// sameKey compares a key given with the admin key in constant time, of
// their hashes, so that the length shows neither.
func sameKey(given, want string) bool {
	a, b := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(want))
	return hmac.Equal(a[:], b[:])
}

// logout ends the session.
func (h *Console) logout(c echo.Context, _ *view) error {
	setCookie(c, cookieSession, Base, "", time.Time{})
	return c.Redirect(http.StatusSeeOther, Base+"/login")
}

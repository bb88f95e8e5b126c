package console

import (
	"context"
	"crypto/hmac"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// Cookies: HttpOnly, SameSite=Strict, and Secure but on loopback.
const (
	cookieSession = "hookrelay_console"
	cookiePortal  = "hookrelay_portal"
	cookieFlash   = "hookrelay_flash"
	// sessionTTL is how long an operator's session lasts.
	sessionTTL = 12 * time.Hour
)

// view is who looks at a page and what they may see.
type view struct {
	claims
	// Portal is true in the end customer's portal, scoped by the claims'
	// Endpoints and Types.
	Portal bool
	// Base is where the pages are (Base or PortalBase).
	Base string
	// CSRF is the token every form carries.
	CSRF string
	// Admin manages accounts and API keys (the admin key, open mode).
	Admin bool
	// Who says who is logged in.
	Who string
}

// handler serves a page for v.
type handler func(c echo.Context, v *view) error

// What an operator's page needs of its session.
const (
	needAccount = iota // acts as an account
	needAdmin          // manages accounts and keys
)

// operator wraps a page of the operator's console: without a session it
// sends to the login form (open mode needs none), and every POST needs the
// session's CSRF token.
func (h *Console) operator(need int, fn handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, err := h.operatorView(c)
		switch {
		case err != nil:
			return h.fail(c, nil, err)
		case v == nil && c.Request().Method == http.MethodGet:
			return c.Redirect(http.StatusSeeOther, Base+"/login")
		case v == nil:
			return h.renderError(c, nil, http.StatusUnauthorized, "Log in first.")
		case need == needAccount && v.Account == "":
			return c.Redirect(http.StatusSeeOther, Base+"/accounts")
		case need == needAdmin && !v.Admin:
			return h.renderError(c, v, http.StatusForbidden, "Only the admin key manages accounts and API keys.")
		}
		return h.checked(c, v, fn)
	}
}

// checked runs fn after checking a POST's CSRF token.
func (h *Console) checked(c echo.Context, v *view, fn handler) error {
	if c.Request().Method == http.MethodPost {
		got := []byte(c.FormValue("csrf"))
		if len(got) == 0 || !hmac.Equal(got, []byte(v.CSRF)) {
			return h.renderError(c, v, http.StatusForbidden,
				"This form's CSRF token is missing or wrong: reload the page and try again.")
		}
	}
	if err := fn(c, v); err != nil {
		return h.fail(c, v, err)
	}
	return nil
}

// operatorView is the operator's session, nil when there is none: a valid
// cookie whose key is still live, or in open mode a fresh open session.
func (h *Console) operatorView(c echo.Context) (*view, error) {
	ctx := c.Request().Context()
	cl, err := h.readCookie(c, cookieSession, purposeSession)
	if err != nil {
		return nil, err
	}
	ok, err := h.live(ctx, cl)
	if err != nil {
		return nil, err
	}
	if !ok && h.opts.Open {
		cl = claims{Kind: kindOpen, Account: store.DefaultAccount, Nonce: newNonce(),
			Expires: time.Now().Add(sessionTTL).Unix()}
		if err := h.setSession(c, cookieSession, purposeSession, Base, cl); err != nil {
			return nil, err
		}
		ok = true
	}
	if !ok {
		return nil, nil
	}
	return h.newView(ctx, cl, false)
}

// live tells whether an operator's session still acts: open mode still on,
// its API key not revoked, the admin key unchanged.
func (h *Console) live(ctx context.Context, cl claims) (bool, error) {
	switch cl.Kind {
	case kindOpen:
		return h.opts.Open, nil
	case kindKey:
		_, err := h.opts.Store.LiveAPIKey(ctx, cl.Account, cl.KeyID)
		if errors.Is(err, store.ErrUnauthorized) {
			return false, nil
		}
		return err == nil, err
	case kindAdmin:
		fp, err := h.adminPrint(ctx)
		return err == nil && fp != "" && hmac.Equal([]byte(fp), []byte(cl.AdminKey)), err
	}
	return false, nil
}

// newView is the view of a session's claims.
func (h *Console) newView(ctx context.Context, cl claims, portal bool) (*view, error) {
	csrf, err := h.csrfToken(ctx, cl.Nonce)
	if err != nil {
		return nil, err
	}
	v := &view{claims: cl, Portal: portal, Base: Base, CSRF: csrf}
	switch cl.Kind {
	case kindOpen:
		v.Admin, v.Who = true, "open mode: the default account, no credentials"
	case kindKey:
		v.Who = "account " + cl.Account + " (API key " + cl.KeyID + ")"
	case kindAdmin:
		v.Admin, v.Who = true, "the admin key"
	case kindPortal:
		v.Base, v.Who = PortalBase, "portal of account "+cl.Account
	}
	return v, nil
}

// readCookie returns the claims of cookie name signed for purpose; a
// missing, invalid or expired cookie reads as zero claims.
func (h *Console) readCookie(c echo.Context, name, purpose string) (claims, error) {
	ck, err := c.Cookie(name)
	if err != nil {
		return claims{}, nil
	}
	cl, err := h.verify(c.Request().Context(), purpose, ck.Value)
	if errors.Is(err, errToken) {
		return claims{}, nil
	}
	return cl, err
}

// setSession signs cl into cookie name on path.
func (h *Console) setSession(c echo.Context, name, purpose, path string, cl claims) error {
	token, err := h.sign(c.Request().Context(), purpose, cl)
	if err != nil {
		return err
	}
	setCookie(c, name, path, token, time.Unix(cl.Expires, 0))
	return nil
}

// setCookie sets an HttpOnly, SameSite=Strict cookie, Secure unless the
// request came to a loopback address over plain HTTP; a zero expires
// deletes it.
func setCookie(c echo.Context, name, path, value string, expires time.Time) {
	ck := &http.Cookie{Name: name, Value: value, Path: path, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: secure(c.Request())}
	if expires.IsZero() {
		ck.MaxAge = -1
	} else {
		ck.Expires = expires
	}
	c.SetCookie(ck)
}

// secure tells whether cookies need HTTPS: always, but for plain HTTP to a
// loopback host (hookrelay dev, tests) that no proxy says came over HTTPS.
func secure(r *http.Request) bool {
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		return true
	}
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	if host == "localhost" {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err != nil || !ip.IsLoopback()
}

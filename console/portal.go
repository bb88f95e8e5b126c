package console

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// PortalScope is what a portal link lets its holder see of the account:
// these endpoints only (all when empty) and, of those, these event types
// only (all when empty).
type PortalScope struct {
	EndpointIDs []string
	EventTypes  []string
}

// PortalLink signs a link to the account's portal, scoped, expiring at
// expires; base is where the API is reached (Settings.PublicURL first).
func (h *Console) PortalLink(ctx context.Context, base, account string, sc PortalScope, expires time.Time) (string, error) {
	token, err := h.sign(ctx, purposeLink, claims{Kind: kindPortal, Account: account,
		Endpoints: sc.EndpointIDs, Types: sc.EventTypes, Nonce: newNonce(), Expires: expires.Unix()})
	if err != nil {
		return "", err
	}
	if h.opts.PublicURL != "" {
		base = h.opts.PublicURL
	}
	return strings.TrimRight(base, "/") + PortalBase + "/enter/" + token, nil
}

// enterPortal checks a portal link's token whole (signature, purpose,
// expiry, account) and trades it for a portal session cookie, sending the
// browser on to a URL without the token; anything else is a 401.
func (h *Console) enterPortal(c echo.Context) error {
	ctx := c.Request().Context()
	cl, err := h.verify(ctx, purposeLink, param(c, "token"))
	if err == nil && cl.Kind != kindPortal {
		err = errToken
	}
	if err == nil {
		_, err = h.opts.Store.GetAccount(ctx, cl.Account)
	}
	if errors.Is(err, errToken) || errors.Is(err, store.ErrNotFound) {
		return h.renderError(c, nil, http.StatusUnauthorized,
			"This portal link is not valid or has expired: ask for a new one.")
	}
	if err != nil {
		return h.fail(c, nil, err)
	}
	cl.Nonce = newNonce()
	if err := h.setSession(c, cookiePortal, purposePortal, PortalBase, cl); err != nil {
		return h.fail(c, nil, err)
	}
	return c.Redirect(http.StatusSeeOther, PortalBase+"/endpoints")
}

// portal wraps a page of the portal: it needs the portal's session cookie
// (a 401 without one) and every POST the session's CSRF token.
func (h *Console) portal(fn handler) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		cl, err := h.readCookie(c, cookiePortal, purposePortal)
		if err == nil && cl.Kind == kindPortal {
			_, err = h.opts.Store.GetAccount(ctx, cl.Account)
		} else if err == nil {
			err = errToken
		}
		if errors.Is(err, errToken) || errors.Is(err, store.ErrNotFound) {
			return h.renderError(c, nil, http.StatusUnauthorized,
				"This portal session has ended: open your portal link again, or ask for a new one.")
		}
		if err != nil {
			return h.fail(c, nil, err)
		}
		v, err := h.newView(ctx, cl, true)
		if err != nil {
			return h.fail(c, nil, err)
		}
		return h.checked(c, v, fn)
	}
}

// routesPortal adds the portal's pages: its endpoints, subscriptions,
// delivery log and event types, and the changes it may make to them.
func (h *Console) routesPortal(p *echo.Group) {
	p.POST("/logout", h.portal(func(c echo.Context, _ *view) error {
		setCookie(c, cookiePortal, PortalBase, "", time.Time{})
		return h.renderError(c, nil, http.StatusOK, "You have left the portal.")
	}))
	h.routesShared(p, h.portal)
	p.GET("/event-types", h.portal(h.eventTypesPage))
}

// eventTypesPage lists the event types the portal may subscribe to.
func (h *Console) eventTypesPage(c echo.Context, v *view) error {
	types, err := h.allowedTypes(c.Request().Context(), v)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "eventtypes", v, types)
}

// allowedTypes are the event types v may subscribe to: the portal's; those
// its subscriptions name, when it is scoped to endpoints (the account's
// other types are outside); else the account's known ones.
func (h *Console) allowedTypes(ctx context.Context, v *view) ([]string, error) {
	switch {
	case v.Portal && len(v.Types) > 0:
		return v.Types, nil
	case v.Portal && len(v.Endpoints) > 0:
		subs, err := h.subscriptions(ctx, v)
		types := []string{}
		for _, s := range subs {
			for _, t := range s.EventTypes {
				if t != "*" && !slices.Contains(types, t) {
					types = append(types, t)
				}
			}
		}
		slices.Sort(types)
		return types, err
	}
	return h.opts.Store.EventTypes(ctx, v.Account)
}

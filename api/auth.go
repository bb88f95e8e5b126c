package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/console"
	"github.com/hookrelay/hookrelay/store"
)

// Auth is how the API knows who is calling. Its zero value is the safe one:
// every route but the public ones (see public) needs credentials, and no
// admin key exists (so no accounts or keys can be made).
type Auth struct {
	// AdminKey manages accounts and API keys (HOOKRELAY_ADMIN_KEY).
	AdminKey string
	// MetricsToken reads /metrics and nothing else
	// (HOOKRELAY_METRICS_TOKEN); the admin key reads it too.
	MetricsToken string
	// Open serves requests that carry no credentials as the default account,
	// admin routes included: `hookrelay dev` without an admin key, on
	// loopback, or HOOKRELAY_INSECURE_NO_AUTH. For local trials only.
	Open bool
	// SASSecret derives the API keys' Event Grid SAS keys, which sign
	// aeg-sas-token credentials (HOOKRELAY_EVENTGRID_SAS_SECRET); empty
	// refuses SAS tokens.
	SASSecret string
}

// Keys of what authenticate puts in the echo.Context.
const (
	ctxAccount = "hookrelay.account"
	ctxAdmin   = "hookrelay.admin"
	ctxMetrics = "hookrelay.metrics"
)

// forbidden is a 403 in the usual error shape.
func forbidden(format string, args ...any) *Error {
	return &Error{Status: http.StatusForbidden, Code: "forbidden", Field: "Authorization",
		Message: fmt.Sprintf(format, args...)}
}

// unauthorized is a 401 in the usual error shape.
func unauthorized(format string, args ...any) *Error {
	return unauthorizedField(echo.HeaderAuthorization, format, args...)
}

// unauthorizedField is a 401 naming the header whose credentials failed.
func unauthorizedField(field, format string, args ...any) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: "unauthorized", Field: field,
		Message: fmt.Sprintf(format, args...)}
}

// parseAuthorization reads "User <secret>, Organization <secret>" (in any
// order, scheme names case-insensitive; an "Element <token>" part, which SAP
// clients also send, is ignored).
func parseAuthorization(h string) (org, user string, err error) {
	for _, part := range strings.Split(h, ",") {
		scheme, value, _ := strings.Cut(strings.TrimSpace(part), " ")
		value = strings.TrimSpace(value)
		switch strings.ToLower(scheme) {
		case "user":
			err = setSecret(&user, "User", value)
		case "organization":
			err = setSecret(&org, "Organization", value)
		case "element":
		default:
			err = fmt.Errorf("unknown authorization part %q", scheme)
		}
		if err != nil {
			return "", "", err
		}
	}
	switch {
	case user == "" && org == "":
		return "", "", errors.New("both User and Organization secrets are required")
	case user == "":
		return "", "", errors.New("the User secret is missing")
	case org == "":
		return "", "", errors.New("the Organization secret is missing")
	}
	return org, user, nil
}

// setSecret sets *secret to value, the secret of the SAP authorization part
// named part, unless it is missing or the part was given before.
func setSecret(secret *string, part, value string) error {
	switch {
	case value == "":
		return fmt.Errorf("the %s part has no secret", part)
	case *secret != "":
		return fmt.Errorf("the %s part is given twice", part)
	}
	*secret = value
	return nil
}

// authenticate finds who calls: the admin key or an account's API key
// ("Authorization: Bearer …"), an SAP account's "User …, Organization …"
// secrets, on the Event Grid routes Event Grid's aeg-sas-key or SAS token
// (eventgrid_sas.go), or, only in open mode, no credentials at all (the
// default account). Public routes need none; anything else without valid
// credentials is a 401.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if public(c.Path()) {
			return next(c)
		}
		if who, ok := console.CallerOf(c.Request().Context()); ok {
			// The web console, in this process, for a session it checked.
			if who.Account != "" {
				c.Set(ctxAccount, who.Account)
			}
			c.Set(ctxAdmin, who.Admin)
			return next(c)
		}
		_, sent := c.Request().Header[echo.HeaderAuthorization]
		h := strings.TrimSpace(c.Request().Header.Get(echo.HeaderAuthorization))
		if h == "" && !sent && eventGridRoute(c.Path()) {
			if handled, err := s.eventGridCredentials(c); handled {
				if err != nil {
					return err
				}
				return next(c)
			}
		}
		if h == "" {
			switch {
			case sent && !s.Auth.Open:
				return unauthorized("the Authorization header is empty: send Authorization: Bearer <API key>")
			case !s.Auth.Open:
				return unauthorized("credentials are required: %s", wanted(c.Path()))
			}
			c.Set(ctxAccount, store.DefaultAccount)
			c.Set(ctxAdmin, true)
			return next(c)
		}
		if err := s.identify(c, h); err != nil {
			return err
		}
		return next(c)
	}
}

// public tells whether the route path needs no credentials: the health
// checks, the OpenAPI document (no account data in it), Event Grid's
// validation URL (a capability URL: its code is the credential) and the
// web console's pages (which check sessions of their own).
func public(path string) bool {
	switch path {
	case "/healthz", "/readyz", openAPIPath, validatePath:
		return true
	}
	return console.IsConsolePath(path)
}

// bearer reports whether the Authorization header h uses the Bearer scheme,
// and its token ("" when none follows the scheme).
func bearer(h string) (token string, ok bool) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(h), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// wanted says which credentials the route path takes.
func wanted(path string) string {
	if eventGridRoute(path) {
		return "Authorization: Bearer <API key>, aeg-sas-key: <API key> or aeg-sas-token: <SAS token>"
	}
	return "Authorization: Bearer <API key>"
}

// identify sets who the Authorization header h names.
func (s *Server) identify(c echo.Context, h string) error {
	ctx := c.Request().Context()
	if token, ok := sasScheme(h); ok && eventGridRoute(c.Path()) {
		return s.identifySASToken(c, echo.HeaderAuthorization, token)
	}
	if token, ok := bearer(h); ok {
		if token == "" {
			return unauthorized("the API key is missing after Bearer: send Authorization: Bearer <API key>")
		}
		if sameSecret(token, s.Auth.AdminKey) {
			c.Set(ctxAdmin, true)
			return nil
		}
		if sameSecret(token, s.Auth.MetricsToken) {
			c.Set(ctxMetrics, true)
			return nil
		}
		id, err := s.Store.AuthenticateKey(ctx, token)
		if errors.Is(err, store.ErrUnauthorized) {
			return unauthorized("the API key is not valid (or was revoked)")
		}
		if err != nil {
			return err
		}
		c.Set(ctxAccount, id)
		return nil
	}
	org, user, err := parseAuthorization(h)
	if err != nil {
		return unauthorized("Authorization must be \"Bearer <API key>\" or \"User <user secret>, Organization <organization secret>\": %s", err)
	}
	a, err := s.Store.Authenticate(ctx, org, user)
	if errors.Is(err, store.ErrUnauthorized) {
		return unauthorized("the user and organization secrets match no account")
	}
	if err != nil {
		return err
	}
	c.Set(ctxAccount, a.ID)
	return nil
}

// sameSecret compares token with a configured secret (never equal when the
// secret is not set) in constant time, of their hashes, so that the length
// does not show either.
func sameSecret(token, secret string) bool {
	if secret == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(token)), sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// requireAccount lets through requests that act as an account: the admin
// key alone manages accounts and keys, and acts as none.
func (s *Server) requireAccount(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, ok := c.Get(ctxAccount).(string); !ok {
			return forbidden("the admin key manages accounts and API keys only: act as an account with one of its API keys")
		}
		return next(c)
	}
}

// requireSAP is requireAccount for the SAP-shaped routes, which never act as
// the default account: they need credentials even in open mode.
func (s *Server) requireSAP(next echo.HandlerFunc) echo.HandlerFunc {
	return s.requireAccount(func(c echo.Context) error {
		_, fromConsole := console.CallerOf(c.Request().Context())
		if c.Request().Header.Get(echo.HeaderAuthorization) == "" && !fromConsole {
			return unauthorized("this route requires Authorization: User <user secret>, Organization <organization secret> (or Bearer <API key>)")
		}
		return next(c)
	})
}

// requireAdmin lets through requests made with the admin key (or in open
// mode).
func (s *Server) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if admin, _ := c.Get(ctxAdmin).(bool); !admin {
			return forbidden("this route needs the admin key (HOOKRELAY_ADMIN_KEY)")
		}
		return next(c)
	}
}

// account is the account a request acts as, which requireAccount made sure
// of: the one its credentials authenticated, or the default account in open
// mode.
func account(c echo.Context) string {
	id, _ := c.Get(ctxAccount).(string)
	return id
}

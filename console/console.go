// Package console is hookrelay's web console, served by the API under
// /console: the operator's pages (endpoints, deliveries and their attempts,
// events, dead letters, subscriptions, the SAP queue, accounts and keys) and
// the end customer's portal under /console/portal, entered through a signed,
// expiring link (POST /v1/portal-sessions). Pages are rendered on the server
// with html/template, which escapes every value (event data and receivers'
// answers are hostile input); one small script refreshes the parts of a page
// that show state. Every change is a POST form carrying a CSRF token, made
// through the /v1 API in-process (Caller), so that its rules live there
// alone. docs/console.md describes the pages.
package console

import (
	"embed"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

//go:embed templates/*.html static/*
var files embed.FS

// Settings are the console's deployment settings.
type Settings struct {
	// PublicURL is where the API is reached from outside, the base of
	// portal links (HOOKRELAY_PUBLIC_URL); empty: the request's own
	// scheme and host.
	PublicURL string
	// TemporalUI is the Temporal Web UI's base URL each delivery's workflow
	// is linked to (HOOKRELAY_TEMPORAL_UI_URL); empty links none.
	TemporalUI string
	// Namespace is the Temporal namespace of those workflows.
	Namespace string
}

// Options are what the console needs from the API serving it.
type Options struct {
	Store  *store.Store
	Logger *slog.Logger
	// Open and AdminKey are the API's (api.Auth): in open mode the console
	// acts as the default account without a login, as the API does; the
	// admin key logs in to manage accounts and keys.
	Open     bool
	AdminKey string
	Settings
}

// Console serves the web console.
type Console struct {
	opts  Options
	api   http.Handler // the /v1 API, called in-process
	pages map[string]pageTemplate

	keyMu sync.Mutex
	key   []byte // the signing key, loaded on first use
}

// New returns the console; Mount serves it.
func New(o Options) *Console {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Console{opts: o, pages: parsePages()}
}

// Mount adds the console's routes to e, whose /v1 routes the console's
// changes go through.
func (h *Console) Mount(e *echo.Echo) {
	h.api = e
	e.Pre(securityHeaders) // before routing: Echo's own errors under /console too
	g := e.Group(Base)
	g.GET("/static/:file", serveStatic)
	g.GET("", redirectTo(Base+"/endpoints"))
	g.GET("/", redirectTo(Base+"/endpoints"))
	h.routesLogin(g)
	h.routesOperator(g)
	h.routesAdmin(g)
	p := e.Group(PortalBase)
	p.GET("", redirectTo(PortalBase+"/endpoints"))
	p.GET("/", redirectTo(PortalBase+"/endpoints"))
	p.GET("/enter/:token", h.enterPortal)
	h.routesPortal(p)
	g.Any("/*", h.notFound)
	p.Any("/*", h.notFound)
}

// Base and PortalBase are where the console and the portal are served.
const (
	Base       = "/console"
	PortalBase = "/console/portal"
)

// IsConsolePath tells whether an Echo route path is the console's: its
// pages check their own sessions, not the API's credentials.
func IsConsolePath(path string) bool {
	return path == Base || strings.HasPrefix(path, Base+"/")
}

// csp is the Content-Security-Policy of every console answer: the
// console's own script and stylesheet, nothing inline, no framing.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// securityHeaders sets the headers every answer under /console carries.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p := c.Request().URL.Path; p != Base && !strings.HasPrefix(p, Base+"/") {
			return next(c)
		}
		h := c.Response().Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cache-Control", "no-store") // the static files say otherwise
		return next(c)
	}
}

// serveStatic serves the embedded stylesheet and script.
func serveStatic(c echo.Context) error {
	name := param(c, "file")
	types := map[string]string{"console.css": "text/css; charset=utf-8", "console.js": "text/javascript; charset=utf-8",
		"favicon.svg": "image/svg+xml"}
	ct, ok := types[name]
	if !ok {
		return c.NoContent(http.StatusNotFound)
	}
	b, err := files.ReadFile("static/" + name)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, ct, b)
}

func redirectTo(path string) echo.HandlerFunc {
	return func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, path) }
}

// notFound answers any other path under /console.
func (h *Console) notFound(c echo.Context) error {
	return h.renderError(c, nil, http.StatusNotFound, "There is no such page.")
}

// param is a path parameter, unescaped: Echo leaves them escaped when the
// path's escaping is not the default one.
func param(c echo.Context, name string) string {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

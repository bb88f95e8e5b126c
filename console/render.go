package console

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
)

// pageTemplate is one page's template set: the layout, the shared parts
// and the page's own content.
type pageTemplate = *template.Template

// pageNames are the templates/<name>.html pages.
var pageNames = []string{"login", "error", "secret", "endpoints", "endpoint", "deliveries", "delivery",
	"events", "event", "deadletters", "subscriptions", "subscription", "queue", "accounts", "account",
	"eventtypes"}

// parsePages parses every page once, at start.
func parsePages() map[string]pageTemplate {
	out := map[string]pageTemplate{}
	for _, name := range pageNames {
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(files,
			"templates/layout.html", "templates/parts.html", "templates/"+name+".html"))
	}
	return out
}

// funcs are the templates' helpers; each returns text html/template
// escapes in its context.
var funcs = template.FuncMap{
	"when":    when,
	"json":    prettyJSON,
	"headers": headerList,
	"ms":      func(f float64) string { return fmt.Sprintf("%.1f ms", f) },
	"rate":    rate,
	"join":    strings.Join,
	"short":   short,
	"eventgrid": func(options store.RawJSON) *eventgrid.Settings {
		return eventgrid.Of(options)
	},
}

// page is what the layout renders.
type page struct {
	V     *view
	Data  any
	Flash flash
	// Live marks a refresh by the page's script: only the live parts
	// matter, and the flash stays for the next full load.
	Live bool
}

// render writes page name with status.
func (h *Console) render(c echo.Context, status int, name string, v *view, data any) error {
	p := page{V: v, Data: data, Live: c.Request().Header.Get("X-Console-Live") != ""}
	if !p.Live {
		p.Flash = takeFlash(c)
	}
	var buf bytes.Buffer
	if err := h.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// renderError writes the error page.
func (h *Console) renderError(c echo.Context, v *view, status int, msg string) error {
	if v == nil {
		v = &view{Base: Base}
		if strings.HasPrefix(c.Request().URL.Path, PortalBase+"/") {
			v.Base, v.Portal = PortalBase, true
		}
	}
	return h.render(c, status, "error", v, map[string]any{"Status": status, "Text": http.StatusText(status), "Message": msg})
}

// fail answers an error: the API's own answer, a missing row as 404, an
// unavailable dependency as 503, anything else as a logged 500.
func (h *Console) fail(c echo.Context, v *view, err error) error {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return h.renderError(c, v, ae.Status, ae.Error())
	case errors.Is(err, store.ErrNotFound):
		return h.renderError(c, v, http.StatusNotFound, "There is no such page.")
	case store.IsUnavailable(err):
		return h.renderError(c, v, http.StatusServiceUnavailable, "PostgreSQL is unavailable: try again shortly.")
	}
	h.opts.Logger.ErrorContext(c.Request().Context(), "console_request_failed",
		"method", c.Request().Method, "path", c.Path(), "error", err)
	return h.renderError(c, v, http.StatusInternalServerError, "Something went wrong; the server's log says what.")
}

// flash is a message for the next page, after a change.
type flash struct {
	Error bool
	Text  string
}

// setFlash keeps a message for the next page (a short-lived cookie).
func setFlash(c echo.Context, isError bool, text string) {
	if len(text) > 600 {
		text = text[:600]
	}
	b, _ := json.Marshal(flash{Error: isError, Text: text})
	setCookie(c, cookieFlash, Base, base64.RawURLEncoding.EncodeToString(b), time.Now().Add(time.Minute))
}

// takeFlash reads and deletes the message kept for this page.
func takeFlash(c echo.Context) flash {
	ck, err := c.Cookie(cookieFlash)
	if err != nil {
		return flash{}
	}
	setCookie(c, cookieFlash, Base, "", time.Time{})
	var f flash
	b, err := base64.RawURLEncoding.DecodeString(ck.Value)
	if err != nil || json.Unmarshal(b, &f) != nil {
		return flash{}
	}
	return f
}

// done ends a change: the outcome as a flash message, and back to path.
func done(c echo.Context, path string, err error, ok string) error {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		setFlash(c, true, ae.Error())
	case err != nil:
		return err
	default:
		setFlash(c, false, ok)
	}
	return c.Redirect(http.StatusSeeOther, path)
}

// when shows a time in UTC; a nil or zero time shows as "—".
func when(t any) string {
	var tt time.Time
	switch v := t.(type) {
	case time.Time:
		tt = v
	case *time.Time:
		if v != nil {
			tt = *v
		}
	}
	if tt.IsZero() {
		return "—"
	}
	return tt.UTC().Format("2006-01-02 15:04:05.000 UTC")
}

// maxShown bounds the JSON and bodies a page shows.
const maxShown = 64 << 10

// prettyJSON indents a JSON document for a <pre>, cut at maxShown.
func prettyJSON(raw store.RawJSON) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return short(string(raw), maxShown)
	}
	return short(buf.String(), maxShown)
}

// short cuts s to at most n bytes, at a rune boundary, marking the cut.
func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " …"
}

// header is one response header of an attempt.
type header struct{ Name, Value string }

// headerList reads an attempt's stored response headers ({"Name": "value"},
// activities.headerJSON), sorted by name.
func headerList(raw store.RawJSON) []header {
	var m map[string]string
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := make([]header, 0, len(m))
	for k, v := range m {
		out = append(out, header{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// rate is a failure rate as a percentage ("—" without attempts).
func rate(failures, attempts int64) string {
	if attempts == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(failures)/float64(attempts))
}

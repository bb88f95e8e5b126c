package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// PostgreSQL stores neither NUL nor invalid UTF-8, and Go's JSON decoder
// silently turns invalid UTF-8 and lone surrogate escapes ("\ud800") into
// U+FFFD. checkJSONText refuses all of them in every key and string of a
// JSON body, naming where ("data.note", "event_types[1]", "[0].subject"),
// before anything is decoded or stored.
func checkJSONText(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	w := &textWalker{}
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil // malformed JSON: the decoder that follows says where
		}
		raw := body[prev:dec.InputOffset()]
		prev = dec.InputOffset()
		if err := w.step(tok, raw, dec.More()); err != nil {
			return err
		}
	}
}

// checkText refuses NUL and invalid UTF-8 in a string that reaches
// PostgreSQL from a path or a query parameter.
func checkText(field, s string) error {
	if msg := textProblem(s); msg != "" {
		return invalid(field, "%s %s", field, msg)
	}
	return nil
}

func textProblem(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "must be valid UTF-8"
	case strings.ContainsRune(s, 0):
		return "must not contain NUL (\\u0000)"
	}
	return ""
}

// textWalker follows the path of the token stream: one frame per open
// object (its key) or array (its index).
type textWalker struct {
	frames []textFrame
}

type textFrame struct {
	array bool
	key   string
	index int
	// wantKey: in an object, the next string is a key.
	wantKey bool
}

func (w *textWalker) step(tok json.Token, raw []byte, more bool) error {
	switch v := tok.(type) {
	case json.Delim:
		w.delim(v)
		return nil
	case string:
		if f := w.top(); f != nil && !f.array && f.wantKey {
			f.key, f.wantKey = v, false
			return w.check(raw, v, true)
		}
		err := w.check(raw, v, false)
		w.advance()
		return err
	}
	w.advance()
	return nil
}

func (w *textWalker) delim(d json.Delim) {
	switch d {
	case '{':
		w.frames = append(w.frames, textFrame{wantKey: true})
	case '[':
		w.frames = append(w.frames, textFrame{array: true})
	default:
		w.frames = w.frames[:len(w.frames)-1]
		w.advance()
	}
}

// advance moves past a finished value: the next array index, or back to
// expecting a key.
func (w *textWalker) advance() {
	if f := w.top(); f != nil {
		if f.array {
			f.index++
		} else {
			f.wantKey = true
		}
	}
}

func (w *textWalker) top() *textFrame {
	if len(w.frames) == 0 {
		return nil
	}
	return &w.frames[len(w.frames)-1]
}

// check refuses a key or string value whose raw JSON has invalid UTF-8, a
// NUL or a lone surrogate.
func (w *textWalker) check(raw []byte, s string, key bool) error {
	msg := textProblem(s)
	if msg == "" && !utf8.Valid(raw) {
		msg = "must be valid UTF-8"
	}
	if msg == "" && loneSurrogate(raw) {
		msg = "must not contain a lone UTF-16 surrogate"
	}
	if msg == "" {
		return nil
	}
	field := w.path(!key)
	what := "the value of " + field
	switch {
	case key && field == "":
		what = "a key"
	case key:
		what = "a key in " + field
	case field == "":
		what = "the body"
	}
	return invalid(field, "%s %s", what, msg)
}

// path is the JSON path of the value being read; without the last key, of
// the object that holds it.
func (w *textWalker) path(lastKey bool) string {
	var b strings.Builder
	for i, f := range w.frames {
		if !f.array && !lastKey && i == len(w.frames)-1 {
			break
		}
		if f.array {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strings.ToValidUTF8(f.key, "\uFFFD"))
	}
	return b.String()
}

// loneSurrogate reports whether raw JSON has a \uD800-\uDFFF escape that is
// not a high surrogate followed by a low one.
func loneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // an escaped character: skip it (it may be a backslash)
			continue
		}
		r, ok := hex4(raw, i+2)
		if !ok {
			continue
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := hex4(raw, i+8)
			if i+7 >= len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' || !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 11
			continue
		}
		i += 5
	}
	return false
}

// hex4 reads four hex digits at raw[i:].
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[i:i+4]), 16, 32)
	return rune(n), err == nil
}

// checkParams refuses a request whose path parameters or query parameters
// hold text PostgreSQL cannot store, naming the parameter.
func checkParams(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		for i, name := range c.ParamNames() {
			if i >= len(c.ParamValues()) {
				break
			}
			v := c.ParamValues()[i]
			if u, err := url.PathUnescape(v); err == nil {
				v = u // Echo leaves a parameter escaped when the path had to be
			}
			if err := checkText(name, v); err != nil {
				return err
			}
		}
		for name, vs := range c.QueryParams() {
			for _, v := range vs {
				if err := checkText(name, v); err != nil {
					return err
				}
			}
		}
		return next(c)
	}
}

package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"
)

// readBody reads the request body (Echo's BodyLimit bounds it) and refuses
// text PostgreSQL cannot store (checkJSONText). Every handler reads its body
// through it.
func readBody(c echo.Context) ([]byte, error) {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return nil, tooLarge()
	}
	if err := checkJSONText(body); err != nil {
		return nil, err
	}
	return body, nil
}

// decodeVendor decodes a vendor-shaped body into v strictly, naming an
// unknown field by its full path ("properties.retryPolicy.foo", "[2].bar").
func decodeVendor(body []byte, v any) error {
	var tree any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return invalid("", "malformed JSON: unexpected data after the value at byte %d", dec.InputOffset())
	}
	if f := unknownField(tree, reflect.TypeOf(v), ""); f != "" {
		return invalid(f, "unknown field %q", f)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return decodeError(err)
	}
	return nil
}

// unknownField returns the path of the first key of v that type t has no
// JSON field for, or "".
func unknownField(v any, t reflect.Type, prefix string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch x := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return ""
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			path := joinPath(prefix, k)
			f, ok := jsonField(t, k)
			if !ok {
				return path
			}
			if s := unknownField(x[k], f.Type, path); s != "" {
				return s
			}
		}
	case []any:
		if t.Kind() != reflect.Slice {
			return ""
		}
		for i, e := range x {
			if s := unknownField(e, t.Elem(), fmt.Sprintf("%s[%d]", prefix, i)); s != "" {
				return s
			}
		}
	}
	return ""
}

// jsonField finds the field of struct t that encoding/json fills from key.
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		if f.IsExported() && name != "-" && strings.EqualFold(name, key) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func joinPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

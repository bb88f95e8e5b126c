package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestMigrate: `hookrelay migrate` applies the schema to a real PostgreSQL,
// and applying it again changes nothing.
func TestMigrate(t *testing.T) {
	url := testenv.DatabaseURL(t)
	env := func(k string) string {
		if k == "DATABASE_URL" {
			return url
		}
		return ""
	}
	for i := 0; i < 2; i++ {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), []string{"migrate"}, env, &out, &errOut); err != nil {
			t.Fatalf("migrate (run %d): %v\n%s", i+1, err, errOut.String())
		}
		if !strings.Contains(out.String(), "migrations applied") {
			t.Fatalf("migrate printed %q", out.String())
		}
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"migrate"}, noEnv, &out, &errOut); err == nil {
		t.Fatal("migrate without DATABASE_URL: no error")
	}
}
